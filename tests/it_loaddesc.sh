#!/usr/bin/env bash
# Integration: background load descriptions on the command line. A bad
# --load file makes `treefarm run` and `treefarm bound` exit 2 naming the
# file, the node and the key (file and line for a trace), before anything
# starts; `bound --loaded` prices loaded nodes lower than the dedicated
# bound; `treefarm load record` writes a trace the reader takes.
source "$(dirname "$0")/lib.sh"

CFG=configs/fork7.json
exp_demand='"demand": {"dist": "exp", "mean_s": 0.2}'

# refuse NAME LOADFILE-TEXT PATTERN: run and bound both exit 2 with a
# message matching PATTERN (grep -F), and the run starts nothing.
refuse () {
    local name=$1 text=$2 want=$3 rc
    printf '%s\n' "$text" >"$WORK/$name.json"
    "$TREEFARM" run "$CFG" --load "$WORK/$name.json" --out "$WORK/run-$name" \
        >"$WORK/o" 2>"$WORK/e"
    rc=$?
    expect "run --load $name: exit 2 (got $rc)" test "$rc" = 2
    expect "run --load $name: names file, node and key" grep -qF "$want" "$WORK/e"
    expect "run --load $name: nothing started" test ! -e "$WORK/run-$name"
    "$TREEFARM" bound "$CFG" --load "$WORK/$name.json" --loaded >"$WORK/o" 2>"$WORK/e"
    rc=$?
    expect "bound --load $name: exit 2 (got $rc)" test "$rc" = 2
    expect "bound --load $name: names file, node and key" grep -qF "$want" "$WORK/e"
}

refuse saturated "{\"Lab3\": {\"jobs\": {\"utilization\": 1, $exp_demand}}}" \
    "$WORK/saturated.json: node \"Lab3\": jobs.utilization: must be at most 0.95, got 1 (a saturated node"
refuse negative "{\"Lab4\": {\"contenders\": [{\"compute\": -0.5}]}}" \
    "$WORK/negative.json: node \"Lab4\": contenders[0].compute: must be >= 0, got -0.5"
refuse badcv "{\"Lab5\": {\"jobs\": {\"utilization\": 0.5, \"demand\": {\"dist\": \"exp\", \"mean_s\": 1, \"cv\": 3}}}}" \
    "$WORK/badcv.json: node \"Lab5\": jobs.demand.cv: cv 3: an exponential's cv is 1"
refuse unsorted '{"Lab6": {"steps": [{"at_s": 5, "load": 2}, {"at_s": 1, "load": 3}]}}' \
    "$WORK/unsorted.json: node \"Lab6\": steps[1]: at_s 1 is before the previous step's 5"
refuse unknown '{"Lab99": {"seed": 3}}' "$WORK/unknown.json: no node named \"Lab99\""
printf 'time_s,load\n0,1\n3,2\n2,1\n' >"$WORK/lab3.csv"
refuse trace '{"Lab3": {"trace": "lab3.csv"}}' \
    "$WORK/trace.json: node \"Lab3\": trace: lab3.csv:4: time_s 2 is before the previous row's 3"
refuse notrace '{"Lab3": {"trace": "none.csv"}}' \
    "node \"Lab3\": trace: none.csv: cannot open: No such file or directory"

# The same refusal from the config's own "load": the tree entry is named.
python3 - "$CFG" "$WORK/inconfig.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["tree"][1]["load"] = {"jobs": {"utilization": 0.97, "demand": {"dist": "exp", "mean_s": 1}}}
json.dump(c, open(sys.argv[2], "w"))
PY
"$TREEFARM" run "$WORK/inconfig.json" --out "$WORK/run-inconfig" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "config load: exit 2 (got $rc)" test "$rc" = 2
expect "config load: names tree entry and key" grep -qF \
    'inconfig.json: tree[1] (node "Lab3"): load.jobs.utilization: must be at most 0.95, got 0.97' "$WORK/e"
expect "config load: nothing started" test ! -e "$WORK/run-inconfig"

# Every node receives the experiment, traces inline, in one CONFIG: a
# run whose traces would not fit is refused before anything starts (ten
# nodes, each replaying 100,000 rows).
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
rows = ["%.6f,%.7f" % (10000 + i * 0.013, 1 + (i % 997) / 332.0) for i in range(100000)]
open(w + "/big.csv", "w").write("time_s,load\n" + "\n".join(rows) + "\n")
tree = [{"name": "n0", "compute": 1}] + [
    {"name": "n%d" % i, "parent": "n0", "compute": 1, "link_mbps": 1} for i in range(1, 10)]
json.dump({"name": "wide", "tasks": {"count": 10, "input_mb": 0, "units": 1}, "tree": tree},
          open(w + "/wide.json", "w"))
json.dump({"n%d" % i: {"trace": "big.csv"} for i in range(10)}, open(w + "/wideload.json", "w"))
PY
"$TREEFARM" run "$WORK/wide.json" --load "$WORK/wideload.json" --out "$WORK/run-wide" \
    >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "traces too large to ship: exit 2 (got $rc)" test "$rc" = 2
expect "traces too large to ship: says so" grep -q \
    'wide.json: the experiment is [0-9]* bytes as each node receives it (1000000 load trace rows inline), over the [0-9]* bytes one CONFIG may carry' "$WORK/e"
expect "traces too large to ship: nothing started" test ! -e "$WORK/run-wide"

# bound --loaded: the root at U = 0.5, Lab3 at L = 2 from 10 s on.
printf '{"Lab0": {"jobs": {"utilization": 0.5, %s}}, "Lab3": {"steps": [{"at_s": 10, "load": 2}]}}\n' \
    "$exp_demand" >"$WORK/good.json"
"$TREEFARM" bound "$CFG" --json >"$WORK/plain.json" 2>"$WORK/e"
expect "bound: exit 0" test "$?" = 0
"$TREEFARM" bound "$CFG" --load "$WORK/good.json" --json >"$WORK/unloaded.json" 2>"$WORK/e"
expect "bound --load without --loaded: exit 0" test "$?" = 0
"$TREEFARM" bound "$CFG" --load "$WORK/good.json" --loaded --json >"$WORK/loaded.json" 2>"$WORK/e"
expect "bound --loaded: exit 0" test "$?" = 0
expect "bound --loaded: lower bound, loaded rates, same without --loaded" \
    python3 - "$WORK/plain.json" "$WORK/unloaded.json" "$WORK/loaded.json" <<'PY'
import json, sys
plain, unloaded, loaded = (json.load(open(p)) for p in sys.argv[1:])
c = lambda d, name: next(n["compute"] for n in d["nodes"] if n["name"] == name)
ok = (loaded["loaded"] is True and plain["loaded"] is False
      and unloaded["bound"] == plain["bound"]
      and loaded["bound"] < plain["bound"] - 1e-6
      and abs(c(loaded, "Lab0") - 0.5 * c(plain, "Lab0")) < 1e-9
      and abs(c(loaded, "Lab3") - 0.5 * c(plain, "Lab3")) < 1e-9
      and c(loaded, "Lab4") == c(plain, "Lab4"))
if not ok: print(plain["bound"], unloaded["bound"], loaded["bound"])
sys.exit(0 if ok else 1)
PY
"$TREEFARM" bound "$CFG" --load "$WORK/good.json" --loaded >"$WORK/table" 2>"$WORK/e"
expect "bound --loaded table: says the rates are loaded" grep -q "^rates loaded (--loaded)" "$WORK/table"

# treefarm load record: a trace the reader takes, at the requested rows.
"$TREEFARM" load record --duration 0.3 --interval 0.1 --out "$WORK/rec.csv" \
    >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "load record: exit 0 (got $rc)" test "$rc" = 0
expect "load record: header and 3 rows" test "$(head -1 "$WORK/rec.csv")" = time_s,load -a \
    "$(grep -c '^[0-9.]*,[0-9.]*$' "$WORK/rec.csv")" = 3
expect "load record: progress on stderr, not in the trace" grep -q "3 rows" "$WORK/e"
echo '{"Lab3": {"trace": "rec.csv"}}' >"$WORK/rec.json"
"$TREEFARM" bound "$CFG" --load "$WORK/rec.json" --loaded --json >"$WORK/rec-bound.json" 2>"$WORK/e"
rc=$?
expect "load record: its trace loads as a node's load (exit $rc)" test "$rc" = 0
expect "load record: the trace's kind in the bound" grep -q '"load_kind": "trace"' "$WORK/rec-bound.json"
"$TREEFARM" load record --interval 0.001 --duration 1 >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "load record --interval 0.001: exit 2 (got $rc)" test "$rc" = 2
expect "load record --interval 0.001: says the limit" grep -q "not in \[0.01, 3600\]" "$WORK/e"
"$TREEFARM" load record --help >"$WORK/o" 2>&1
expect "load record --help: exit 0 and usage" grep -q "^usage: treefarm load record" "$WORK/o"

finish
