#!/usr/bin/env bash
# Integration: reclaim, the costly action a parent weighs when a child
# slows (docs/adapt.md, "Reclaim"), real processes through `treefarm run`.
# - fork7 (ia-multi, 500 tasks), Lab4 (the child IA:Multi serves first)
#   loaded to 4.0 at 30 s, --adapt: Lab0 takes back what Lab4 holds beyond
#   one task (the gate: 2 MB tasks over 10.8 MB/s cost little against a
#   child at a quarter of its rate), after Lab4's compute change is
#   declared; logged; every task recorded once. --reclaim never: no
#   action.
# - a root computing 0.1 tasks/s over a 1 MB/s link to a child at 0.8,
#   the child loaded to 2.0 at 10 s: the tasks it holds would go through
#   the subtree at 0.5 tasks/s, barely faster than the child's 0.4, and
#   moving each again costs 1 s: the gate declines (taken false, saved
#   below cost); --reclaim always takes it. Every task once, both ways.
# - a load that alternates every 10 s on Lab4: at most one action per
#   declared change of Lab4's rate, never two in a row of one kind.
# Runs alone (tests/run.sh): decisions from rates measured live, which another script's CPU would move.
source "$(dirname "$0")/lib.sh"

CFG=$(dirname "$0")/../configs/fork7.json
python3 - "$CFG" "$WORK" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["tasks"]["count"] = 500
json.dump(c, open(sys.argv[2] + "/f500.json", "w"))
pair = {"name": "pair", "tasks": {"count": 60, "input_mb": 1, "units": 1},
        "policy": "fcfs", "platform": {"time_scale": 20, "payload_scale": 0.01},
        "tree": [{"name": "head", "compute": 0.1},
                 {"name": "kid", "parent": "head", "compute": 0.8, "link_mbps": 1}]}
json.dump(pair, open(sys.argv[2] + "/pair.json", "w"))
flip = [{"at_s": 30 + 10 * i, "load": 4.0 if i % 2 == 0 else 1.0} for i in range(10)]
json.dump({"Lab4": {"steps": flip}}, open(sys.argv[2] + "/flip.json", "w"))
PY
echo '{"Lab4": {"steps": [{"at_s": 30, "load": 4.0}]}}' >"$WORK/lab4.json"
echo '{"kid": {"steps": [{"at_s": 10, "load": 2.0}]}}' >"$WORK/kid.json"

# run NAME CONFIG LOAD ARGS...: the run into $WORK/NAME, stderr in NAME.err.
run () {
    local name=$1 cfg=$2 load=$3; shift 3
    "$TREEFARM" run "$WORK/$cfg" --load "$WORK/$load" --out "$WORK/$name" --quiet \
        --adapt "$@" >/dev/null 2>"$WORK/$name.err"
    local rc=$?
    expect "$name: exit 0 (got $rc)" test "$rc" = 0
    [ "$rc" = 0 ] || sed 's/^/    /' "$WORK/$name.err" | head -5
}

# action DIR CHILD TAKEN: results.json's "actions" holds a reclaim from
# CHILD whose "taken" is TAKEN (true/false), with the gate's figures
# agreeing with it (taken by the gate: saved > cost; declined: saved <=
# cost; always: whatever they say), declared after the child's compute
# change (the parent's clock and the child's start at their own START:
# within half a second).
action () {
    python3 - "$@" <<'PY'
import json, sys
d, child, taken = sys.argv[1], sys.argv[2], sys.argv[3] == "true"
mode = sys.argv[4] if len(sys.argv) > 4 else "gated"
r = json.load(open(d + "/results.json"))
acts = [a for a in r.get("actions", []) if a["what"] == "reclaim" and a["child"] == child]
print("    actions: %s" % json.dumps(r.get("actions")))
ch = [c for c in r.get("changes", []) if c["node"] == child and c["what"] == "compute"]
ok = len(acts) >= 1 and acts[0]["taken"] == taken and len(ch) >= 1
if ok and mode == "gated":
    ok = (acts[0]["saved_s"] > acts[0]["cost_s"]) == taken
# Each node's clock starts at its own START: allow their skew.
if ok:
    ok = acts[0]["at_s"] >= ch[0]["at_s"] - 0.5 and acts[0]["hold"] >= 1
sys.exit(0 if ok else 1)
PY
}

# moved DIR PARENT CHILD N: PARENT's "reclaimed" and CHILD's "returned"
# agree, and are at least N (0: exactly 0).
moved () {
    python3 - "$@" <<'PY'
import json, sys
d, parent, child, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
nodes = {x["name"]: x for x in json.load(open(d + "/results.json"))["nodes"]}
got, gave = nodes[parent]["reclaimed"], nodes[child]["returned"]
print("    %s reclaimed %d, %s returned %d" % (parent, got, child, gave))
sys.exit(0 if got == gave and (got >= n if n else got == 0) else 1)
PY
}

no_actions () {
    python3 - "$1" <<'PY'
import json, sys
a = json.load(open(sys.argv[1] + "/results.json")).get("actions")
print("    actions: %s" % json.dumps(a))
sys.exit(0 if a == [] else 1)
PY
}

run gated f500.json lab4.json
expect "fork7, Lab4 x4: every task once" tasks_exactly_once "$WORK/gated" 500
expect "fork7, Lab4 x4: Lab0 takes back from Lab4, the gate's saving above its cost" \
    action "$WORK/gated" Lab4 true
expect "fork7, Lab4 x4: the log line" \
    grep -Eq 'Lab0: reclaim from Lab4: [0-9]+ tasks? back, it holds 1 \(saves [0-9.]+ s, costs [0-9.]+ s\) at [0-9.]+ s$' \
    "$WORK/gated.err"
grep 'reclaim' "$WORK/gated.err" | sed 's/^/    /'
expect "fork7, Lab4 x4: the tasks came back (Lab0 reclaimed = Lab4 returned >= 1)" \
    moved "$WORK/gated" Lab0 Lab4 1

run never f500.json lab4.json --reclaim never
expect "fork7, Lab4 x4, never: every task once" tasks_exactly_once "$WORK/never" 500
expect "fork7, Lab4 x4, never: no action" no_actions "$WORK/never"
expect "fork7, Lab4 x4, never: nothing came back" moved "$WORK/never" Lab0 Lab4 0

run declined pair.json kid.json
expect "pair, declined: every task once" tasks_exactly_once "$WORK/declined" 60
expect "pair: the gate declines (saved below the cost of moving the tasks again)" \
    action "$WORK/declined" kid false
expect "pair, declined: nothing came back" moved "$WORK/declined" head kid 0
run always pair.json kid.json --reclaim always
expect "pair, always: every task once" tasks_exactly_once "$WORK/always" 60
expect "pair, always: taken all the same" action "$WORK/always" kid true always
expect "pair, always: the tasks came back" moved "$WORK/always" head kid 1

run flip f500.json flip.json
expect "flip: every task once" tasks_exactly_once "$WORK/flip" 500
hysteresis () {
    python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/results.json"))
ch = [c for c in r["changes"] if c["node"] == "Lab4" and c["what"] == "compute"]
acts = [a for a in r["actions"] if a["child"] == "Lab4" and a["taken"]]
print("    %d changes of Lab4's rate, %d actions: %s" % (
    len(ch), len(acts), [(a["what"], round(a["at_s"], 1)) for a in acts]))
ok = len(acts) <= len(ch) <= 10
ok = ok and all(acts[i]["what"] != acts[i + 1]["what"] for i in range(len(acts) - 1))
sys.exit(0 if ok else 1)
PY
}
expect "flip: at most one action per declared change, none repeated" \
    hysteresis "$WORK/flip"

finish
