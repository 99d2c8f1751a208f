#!/usr/bin/env bash
# Integration: `treefarm bound`. On the reference fork the greedy and the LP
# agree in every model, the table names its units and the node roles, the
# JSON parses and its numbers add up, --send/--compute change the
# application type (Z = 10 MB, 1 diagonal: the root uses no child), and bad
# usage or a bad config exits 2 with a message.
source "$(dirname "$0")/lib.sh"

quiet () { "$@" >/dev/null; }

for model in multi single bwc; do
    "$TREEFARM" bound configs/fork7.json --lp --model $model >"$WORK/$model.out" 2>"$WORK/e"
    rc=$?
    expect "fork7 --lp --model $model: exit 0 (got $rc)" test "$rc" = 0
    expect "fork7 --lp --model $model: greedy and LP equal" \
        grep -q "greedy and LP equal at every node" "$WORK/$model.out"
    expect "fork7 --lp --model $model: no node flagged" \
        awk '$1 ~ /^(Lab|SB|Tenn)/ && / (below|ABOVE) / { exit 1 }' "$WORK/$model.out"
done
expect "table: header states the units" grep -q "rates in tasks/s" "$WORK/multi.out"
expect "table: header states Z and w" grep -q "Z = 2 MB of input.*w = 5 compute units" "$WORK/multi.out"
expect "table: fork7 multi bound 6.5689 tasks/s" grep -q "T(root) = 6.5689 tasks/s" "$WORK/multi.out"
expect "table: Lab3 takes the partial share" grep -Eq "^  Lab3 .*partial: outgoing bandwidth exhausted" "$WORK/multi.out"
expect "table: SB0 unused for want of bandwidth" grep -Eq "^  SB0 .*unused: outgoing bandwidth exhausted" "$WORK/multi.out"
expect "table: Tenn saturated" grep -Eq "^  Tenn .*saturated" "$WORK/multi.out"

"$TREEFARM" bound configs/fork7.json --lp --json >"$WORK/fork7.json" 2>"$WORK/e"
expect "--json: exit 0" test "$?" = 0
expect "--json: parses, 7 nodes, greedy = LP, S sums to the bound" python3 - "$WORK/fork7.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = (d["model"] == "multi" and d["rate_unit"] == "tasks/s" and len(d["nodes"]) == 7
      and d["lp"]["verdict"] == "equal" and abs(d["bound"] - 6.568949515) < 1e-8
      and abs(sum(n["s"] for n in d["nodes"]) - d["bound"]) < 1e-9
      and all(n["lp"] == "equal" for n in d["nodes"])
      and d["nodes"][0]["recv_max"] is None and d["nodes"][0]["role"] == "root")
if not ok: print(json.dumps(d, indent=1)[:2000])
sys.exit(0 if ok else 1)
PY

"$TREEFARM" bound configs/fork7.json --send 10 --compute 1 --json >"$WORK/z10.json" 2>"$WORK/e"
expect "--send 10 --compute 1: exit 0" test "$?" = 0
expect "--send 10 --compute 1: the root computes alone, 9.06 tasks/s" python3 - "$WORK/z10.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
kids = [n for n in d["nodes"] if n["parent"]]
ok = (d["task"] == {"input_mb": 10, "units": 1} and abs(d["bound"] - 9.06) < 1e-12
      and all(n["role"] == "unused" and n["why"] == "IR_s Z C >= 1" for n in kids))
sys.exit(0 if ok else 1)
PY
"$TREEFARM" bound configs/fork7.json --send 0 --lp >"$WORK/z0.out" 2>"$WORK/e"
expect "--send 0: exit 0, links unlimited" grep -q "greedy and LP equal" "$WORK/z0.out"

"$TREEFARM" bound configs/fork7.json --model nosuch >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "bad model: exit 2 (got $rc)" test "$rc" = 2
expect "bad model: message names it" grep -q 'unknown model "nosuch"' "$WORK/e"
"$TREEFARM" bound >"$WORK/o" 2>"$WORK/e"
expect "no config: exit 2" test "$?" = 2
expect "no config: message" grep -q "missing CONFIG" "$WORK/e"
"$TREEFARM" bound configs/fork7.json configs/tree3.json >"$WORK/o" 2>"$WORK/e"
expect "two configs: exit 2" test "$?" = 2
"$TREEFARM" bound configs/fork7.json --no-such-flag >"$WORK/o" 2>"$WORK/e"
expect "unknown flag: exit 2" test "$?" = 2
"$TREEFARM" bound configs/fork7.json --send -1 >"$WORK/o" 2>"$WORK/e"
expect "--send -1: exit 2" test "$?" = 2
"$TREEFARM" bound configs/fork7.json --compute 0 >"$WORK/o" 2>"$WORK/e"
expect "--compute 0: exit 2" test "$?" = 2
"$TREEFARM" bound configs/fork7.json --compute >"$WORK/o" 2>"$WORK/e"
expect "--compute without a value: exit 2" test "$?" = 2
"$TREEFARM" bound tests/configs/bad/missing_parent.json >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "broken config: exit 2 (got $rc)" test "$rc" = 2
expect "broken config: the loader's message, prefixed" \
    grep -q "^treefarm: .*missing_parent.json" "$WORK/e"
# A config for command tasks has no task size: --compute gives one.
python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); del c["tasks"]; json.dump(c, open(sys.argv[2], "w"))' \
    configs/fork7.json "$WORK/notasks.json"
"$TREEFARM" bound "$WORK/notasks.json" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "no tasks section: exit 2 (got $rc)" test "$rc" = 2
expect "no tasks section: says so and names --compute" \
    grep -q 'notasks.json has no "tasks" section, so no task size to bound with: give --compute UNITS' "$WORK/e"
expect "no tasks section, --compute 5 --send 2: the bound as fork7's own" \
    sh -c "'$TREEFARM' bound '$WORK/notasks.json' --compute 5 --send 2 | grep '^bound:' >'$WORK/b1' &&
           '$TREEFARM' bound configs/fork7.json --compute 5 --send 2 | grep '^bound:' >'$WORK/b2' &&
           test -s '$WORK/b1' && cmp -s '$WORK/b1' '$WORK/b2'"
"$TREEFARM" bound "$WORK/does-not-exist.json" >"$WORK/o" 2>"$WORK/e"
expect "missing config file: exit 2" test "$?" = 2
expect "treefarm bound --help" quiet "$TREEFARM" bound --help
expect "treefarm help bound" quiet "$TREEFARM" help bound
expect "treefarm --help lists bound" bash -c "'$TREEFARM' --help | grep -q '^  bound '"

finish
