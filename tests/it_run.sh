#!/usr/bin/env bash
# Integration: whole runs through real processes on loopback. The reference
# fork, a 3-level tree and a chain complete every task exactly once, every
# node process is gone afterwards, and two runs coexist. The summary gives
# an emulated run's fidelity, and none for a real run.
source "$(dirname "$0")/lib.sh"

run_config () {   # name config tasks
    local name=$1 cfg=$2 n=$3 out="$WORK/$1"
    "$TREEFARM" run "$cfg" --out "$out" --quiet >"$WORK/$name.out" 2>"$WORK/$name.err"
    local rc=$?
    expect "$name: exit status 0 (got $rc)" test "$rc" = 0
    [ "$rc" = 0 ] || { tail -5 "$WORK/$name.err"; return; }
    expect "$name: every task id completed exactly once" tasks_exactly_once "$out" "$n"
    expect "$name: per-node computed sums to $n, no duplicate" computed_sums_to "$out" "$n"
    expect "$name: no node process outlives the run" no_node_alive "$out"
    expect "$name: nodes.csv has a row per node" \
        test "$(($(wc -l <"$out/nodes.csv") - 1))" = "$(python3 -c 'import json,sys;print(len(json.load(open(sys.argv[1]))["nodes"]))' "$out/results.json")"
    expect "$name: summary printed" grep -q "results:" "$WORK/$name.out"
    expect "$name: summary shows achieved against the bound" grep -q "efficiency" "$WORK/$name.out"
    expect "$name: the tree's own bound equals the offline bound" python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["bound"]
sys.exit(0 if b["agree"] is True and b["tree"] == b["tasks_per_s"] else 1)' "$out/results.json"
    expect "$name: every node reports its CPU time and its sampler's and fit's share" \
        python3 -c '
import json, sys
nodes = json.load(open(sys.argv[1]))["nodes"]
sys.exit(0 if all(0 < n["observe_cpu_us"] < n["cpu_us"] for n in nodes) else 1)' "$out/results.json"
    expect "$name: the steady-state window lies inside the run" python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); s = r["steady"]
sys.exit(0 if s and 0 < s["from_s"] < s["to_s"] <= r["makespan_s"]
         and 0 < s["tasks"] <= r["tasks"] - s["k"] and s["efficiency"] > 0 else 1)' "$out/results.json"
    expect "$name: the summary gives the steady state" grep -q "steady [0-9.]*%" "$WORK/$name.out"
}

run_config fork7 configs/fork7.json 1000
run_config tree3 configs/tree3.json 300
run_config chain4 configs/chain4.json 100
run_config real4 configs/real4.json 200     # the real diagonal kernel

# Fidelity is an emulation's measure of keeping up with the clock it
# emulates (docs/architecture.md, "Fidelity"): an emulated run's summary
# gives it, a real run's has nothing to say of it.
expect "fork7: the emulated run's summary gives its fidelity" \
    grep -q "^  fidelity [0-9]" "$WORK/fork7.out"
expect "real4: the real run's summary says nothing of fidelity" \
    test -s "$WORK/real4.out" -a -z "$(grep -i fidelity "$WORK/real4.out")"

# Two runs at once: ephemeral ports, separate result directories.
"$TREEFARM" run configs/tree3.json --out "$WORK/a" --quiet >/dev/null 2>&1 & a=$!
"$TREEFARM" run configs/chain4.json --out "$WORK/b" --quiet >/dev/null 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
expect "two concurrent runs both succeed ($ra, $rb)" test "$ra$rb" = 00
expect "concurrent run a complete" tasks_exactly_once "$WORK/a" 300
expect "concurrent run b complete" tasks_exactly_once "$WORK/b" 100

finish
