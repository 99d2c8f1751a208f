#!/usr/bin/env bash
# Integration: nodes that join a running run (docs/adapt.md, "Grow"),
# real processes through `treefarm run --adapt`.
# - grow3: a root and two children, and X offered at 20 platform seconds
#   (joins_at_s) with a fast link and compute: X is admitted (the bound
#   gains more than its start-up), joins, computes, and every task is
#   recorded once; the tree's own first bound still agrees with the
#   offline one (the vacant slots change nothing); results.json "joins"
#   says where and why; the efficiency is against the bound as it grew.
# - a node offered when the root's send port is full gains nothing
#   anywhere and is declined: no process is started for it.
# - a node offered with a parent goes under that parent.
# - two offered at once and admitted: the run is judged against the bound
#   of the tree with both (each offer weighed against the tree as it is).
# - the joined node killed with SIGKILL: lost like any other node, the
#   run completes, every task once.
# - with CURVE on (--curve): the offered node's keys were made with the
#   run's, it joins.
# - a node that lies about its compute (its machine loaded): its change
#   is declared like any node's, every task once.
# - treefarm join against the running run: admitted (exit 0) and
#   computing; the same name again, and a host that cannot be reached,
#   refused (exit 2); after the run, exit 2; with CURVE on, keys made for
#   the node when offered; where it gains nothing, not admitted (exit 1).
# - the refusals: joins_at_s without --adapt, a bad joins_at_s, an offered
#   node whose parent is not a node, more offers than CONFIG_MAX_JOINS:
#   exit 2 naming the place.
source "$(dirname "$0")/lib.sh"

python3 - "$WORK" <<'PY'
import json, sys, copy
w = sys.argv[1]
base = {"name": "grow3", "tasks": {"count": 200, "input_mb": 1, "units": 5},
        "policy": "ia-multi",
        "platform": {"time_scale": 20, "payload_scale": 0.01, "buffer": 2},
        "tree": [{"name": "R", "compute": 2},
                 {"name": "A", "parent": "R", "compute": 3, "link_mbps": 10},
                 {"name": "B", "parent": "R", "compute": 3, "link_mbps": 10}]}
def save(name, extra, mutate=None):
    c = copy.deepcopy(base)
    c["tree"] += extra
    if mutate:
        mutate(c)
    json.dump(c, open("%s/%s.json" % (w, name), "w"), indent=1)
x = {"name": "X", "joins_at_s": 20, "compute": 10, "link_mbps": 10}
save("grow", [x])
# The root's port (1.2 MB/s: 1.2 tasks/s) is what A and B compute: a node
# anywhere gains the tree nothing.
save("port", [dict(x, name="S")],
     lambda c: c["tree"][0].update(send_limit_mbps=1.2))
save("fixed", [dict(x, parent="A")])
save("late", [dict(x, joins_at_s=10)])
save("two", [x, dict(x, name="X2", compute=6)],
     lambda c: c["platform"].update(admit="always"))
save("liar", [x])
save("slots", [], lambda c: c["platform"].update(join_slots=2))
save("portslots", [], lambda c: (c["platform"].update(join_slots=1),
                                 c["tree"][0].update(send_limit_mbps=1.2)))
json.dump({"name": "Y", "compute": 10, "link_mbps": 10}, open(w + "/y.json", "w"))
json.dump({"name": "Far", "compute": 10, "link_mbps": 10,
           "host": "ssh://nobody@198.18.0.254:1"}, open(w + "/far.json", "w"))
json.dump({"X": {"steps": [{"at_s": 0, "load": 8.0}]}}, open(w + "/liar-load.json", "w"))
save("badat", [dict(x, joins_at_s=-1)])
save("badparent", [dict(x, parent="nobody")])
save("toomany", [dict(x, name="X%d" % i) for i in range(17)])
PY

# run NAME CONFIG ARGS...: the run into $WORK/NAME (stderr NAME.err); rc in RC.
run () {
    local name=$1 cfg=$2; shift 2
    "$TREEFARM" run "$WORK/$cfg.json" --out "$WORK/$name" --quiet "$@" >/dev/null \
        2>"$WORK/$name.err"
    RC=$?
}

# joined DIR NODE PARENT ADMITTED: results.json's joins has NODE,
# admitted (1) or not (0), under PARENT when admitted; an admitted node is
# in nodes[] under PARENT and computed tasks; a declined one is not.
joined () {
    python3 - "$@" <<'PY'
import json, sys
d, node, parent, admitted = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
r = json.load(open(d + "/results.json"))
j = [e for e in r.get("joins", []) if e["node"] == node]
nodes = {n["name"]: n for n in r["nodes"]}
bad = []
if len(j) != 1:
    bad.append("joins has %d entries for %s: %s" % (len(j), node, r.get("joins")))
elif j[0]["admitted"] != admitted or (admitted and j[0]["parent"] != parent):
    bad.append("joins entry %s" % j[0])
if admitted and (node not in nodes or nodes[node]["parent"] != parent
                 or nodes[node]["computed"] <= 0):
    bad.append("nodes[] entry %s" % nodes.get(node))
if not admitted and node in nodes:
    bad.append("%s is in nodes[] though not admitted" % node)
for b in bad:
    print("    " + b)
sys.exit(1 if bad else 0)
PY
}

# start_run NAME CONFIG ARGS...: an adapting run into $WORK/NAME in the
# background (its pid in ctl), once its join socket is there and it runs.
# end_run: wait for it, its exit status in RC.
start_run () {
    local name=$1 cfg=$2; shift 2
    "$TREEFARM" run "$WORK/$cfg.json" --adapt --out "$WORK/$name" --quiet "$@" >/dev/null \
        2>"$WORK/$name.err" &
    ctl=$!
    for _ in $(seq 500); do [ -S "$WORK/$name/.join" ] && break; sleep 0.02; done
    sleep 0.5
}
end_run () { wait "$ctl"; RC=$?; }

# field DIR EXPR: print a Python expression over r (results.json).
field () { python3 -c "import json,sys; r=json.load(open(sys.argv[1]+'/results.json')); print($2)" "$1"; }

run grow grow --adapt --trace "$WORK/grow.trace.json"
run_survived "grow" "$WORK/grow" 200 "$RC" "$WORK/grow.err"
expect "grow: X admitted under R and computed" joined "$WORK/grow" X R 1
expect "grow: the tree's first bound agrees with the offline one" \
    test "$(field "$WORK/grow" 'r["bound"]["agree"]')" = True
expect "grow: judged against the bound as it grew (1.6 -> 3.6 tasks/s)" \
    test "$(field "$WORK/grow" '"%.1f %.1f" % (r["bound"]["tasks_per_s"], r["bound"]["grown"]["final"])')" = "1.6 3.6"
expect "grow: the efficiency is at most 100% of that" \
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if 0 < r['efficiency'] <= 1.02 else 1)" "$WORK/grow/results.json"
expect "grow: the log says where X joins and why" grep -q "X joins under R: bound 1.6 -> 3.6" "$WORK/grow.err"
expect "grow: X's times are the run's: joined_s after 20 s, its samples and spans from then" \
    python3 - "$WORK" <<'PY'
import csv, json, sys
w = sys.argv[1]
r = json.load(open(w + "/grow/results.json"))
x = [n for n in r["nodes"] if n["name"] == "X"][0]
t = json.load(open(w + "/grow.trace.json"))["traceEvents"]
pid = {e["pid"]: e["args"]["name"] for e in t
       if e.get("ph") == "M" and e.get("name") == "process_name"}
spans = [e["ts"] / 1e6 for e in t if pid.get(e["pid"]) == "X" and e.get("ph") == "X"]
rows = list(csv.DictReader(open(w + "/grow/samples/X.csv")))
j = x.get("joined_s", 0)
ok = 20 <= j < 40 and spans and min(spans) >= j - 0.5 and float(rows[0]["t0"]) >= j - 0.5
print("    joined_s %s, first span %s, first sample %s" % (j, min(spans or [None]), rows[0]["t0"]))
sys.exit(0 if ok else 1)
PY

run port port --adapt
run_survived "port" "$WORK/port" 200 "$RC" "$WORK/port.err"
expect "port: S, which gains nothing, is not admitted" joined "$WORK/port" S - 0
expect "port: the log says why" grep -q "S not admitted" "$WORK/port.err"
expect "port: no process was started for S"     python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if len(r['nodes']) == 3 else 1)" "$WORK/port/results.json"

run fixed fixed --adapt
run_survived "fixed" "$WORK/fixed" 200 "$RC" "$WORK/fixed.err"
expect "fixed: X joins under the parent it names, A" joined "$WORK/fixed" X A 1

# Two nodes offered at once, admitted (admit "always"): each offer is
# weighed against the tree as it then is, and the bound the run ends
# judged against is that of the tree with both where they joined (what
# `treefarm bound` says of it), not of the tree before the second.
run two two --adapt
run_survived "two" "$WORK/two" 200 "$RC" "$WORK/two.err"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
c = json.load(open(w + "/two.json"))
r = json.load(open(w + "/two/results.json"))
at = {j["node"]: j["parent"] for j in r["joins"]}
for n in c["tree"]:
    if "joins_at_s" in n:
        del n["joins_at_s"]
        n["parent"] = at.get(n["name"], "R")
json.dump(c, open(w + "/two-grown.json", "w"))
PY
grown=$("$TREEFARM" bound "$WORK/two-grown.json" --model multi 2>/dev/null \
        | sed -n 's/^bound: T(root) = \([0-9.]*\) .*/\1/p')
expect "two: judged against the grown tree's bound ($grown tasks/s)" python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if abs(r['bound']['grown']['final'] - float(sys.argv[2])) < 1e-3 else 1)" \
    "$WORK/two/results.json" "${grown:-0}"

# The joined node killed once it computes: its tasks go out again.
"$TREEFARM" run "$WORK/late.json" --adapt --out "$WORK/kill" --quiet >/dev/null \
    2>"$WORK/kill.err" &
ctl=$!
victim=""
for _ in $(seq 500); do
    victim=$(pgrep -P "$ctl" -f -- "--name X( |$)" || true)
    [ -n "$victim" ] && grep -q "X joined under" "$WORK/kill.err" && break
    sleep 0.02
done
sleep 0.5
[ -n "$victim" ] && kill -9 "$victim" 2>/dev/null
wait "$ctl"
RC=$?
# A lost node's counters are its last STATS (docs/reliability.md): the
# sum of "computed" is not held to 200 here, tasks.csv is.
expect "kill: exit 0 (got $RC)" test "$RC" = 0
expect "kill: every task exactly once" tasks_exactly_once "$WORK/kill" 200
expect "kill: no duplicate recorded" \
    test "$(field "$WORK/kill" 'r["duplicates"], r["completed"]')" = "0 200"
expect "kill: no node process outlives the run" no_node_alive "$WORK/kill"
expect "kill: X, killed after it joined, is named lost" \
    test "$(field "$WORK/kill" '" ".join(x["name"] for x in r["lost"])')" = X

run curve grow --adapt --curve
run_survived "curve" "$WORK/curve" 200 "$RC" "$WORK/curve.err"
expect "curve: X joins with the key made for it" joined "$WORK/curve" X R 1

# A node that lies about its compute rate: X says 10 units/s, but its
# machine is loaded (8.0 from the start: 1.25). Its live estimate says
# so, the change is declared, and the run still records every task once.
run liar liar --adapt --load "$WORK/liar-load.json"
run_survived "liar" "$WORK/liar" 200 "$RC" "$WORK/liar.err"
expect "liar: X joined, and its compute change is declared" python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
ch = [c for c in r['changes'] if c['node'] == 'X' and c['what'] == 'compute']
sys.exit(0 if ch and ch[0]['to'] < 5 else 1)" "$WORK/liar/results.json"

# treefarm join against a running run with two join slots: Y pays and
# joins (exit 0); Y again is refused (its name is taken: exit 2); a node
# whose host cannot be reached is refused (exit 2); after the run, exit 2.
start_run cli slots
"$TREEFARM" join "$WORK/cli" "$WORK/y.json" >"$WORK/j1.out" 2>&1; rc1=$?
"$TREEFARM" join "$WORK/cli" "$WORK/y.json" >"$WORK/j2.out" 2>&1; rc2=$?
"$TREEFARM" join "$WORK/cli" "$WORK/far.json" >"$WORK/j3.out" 2>&1; rc3=$?
end_run
"$TREEFARM" join "$WORK/cli" "$WORK/y.json" >"$WORK/j4.out" 2>&1; rc4=$?
run_survived "join" "$WORK/cli" 200 "$RC" "$WORK/cli.err"
expect "join: Y admitted (exit $rc1): $(cat "$WORK/j1.out")" test "$rc1" = 0
expect "join: Y joined under R and computed" joined "$WORK/cli" Y R 1
expect "join: Y again refused, its name taken (exit $rc2)" \
    eval 'test "$rc2" = 2 && grep -q "is in the run already" "$WORK/j2.out"'
expect "join: a host that cannot be reached refused (exit $rc3)" \
    eval 'test "$rc3" = 2 && grep -q "Far refused" "$WORK/j3.out"'
expect "join: after the run, no run is taking nodes (exit $rc4)" \
    eval 'test "$rc4" = 2 && grep -q "no run is taking nodes" "$WORK/j4.out"'

# The same with CURVE on: keys are made for Y when it is offered; its
# parent admits them (ATTACH carries its public key), it joins.
start_run clic slots --curve
"$TREEFARM" join "$WORK/clic" "$WORK/y.json" >"$WORK/j6.out" 2>&1; rc6=$?
end_run
run_survived "join, CURVE" "$WORK/clic" 200 "$RC" "$WORK/clic.err"
expect "join, CURVE: Y admitted with keys made for it, joined and computed (exit $rc6)" \
    eval 'test "$rc6" = 0 && joined "$WORK/clic" Y R 1 && test "$(field "$WORK/clic" "r[\"curve\"]")" = True'

# Offered where it gains nothing (the full port): not admitted, exit 1.
start_run cli1 portslots
"$TREEFARM" join "$WORK/cli1" "$WORK/y.json" >"$WORK/j5.out" 2>&1; rc5=$?
end_run
run_survived "join declined" "$WORK/cli1" 200 "$RC" "$WORK/cli1.err"
expect "join declined: exit 1, saying why (exit $rc5)" \
    eval 'test "$rc5" = 1 && grep -q "Y not admitted" "$WORK/j5.out"'

# refused NAME CONFIG TEXT ARGS...: exit 2 and the message holds TEXT.
refused () {
    local name=$1 cfg=$2 text=$3; shift 3
    run "$name" "$cfg" "$@"
    expect "$name: exit 2 (got $RC)" test "$RC" = 2
    expect "$name: says \"$text\"" grep -qF -- "$text" "$WORK/$name.err"
}
refused noadapt grow "need --adapt"
refused badat badat "joins_at_s" --adapt
refused badparent badparent "parent \"nobody\" is not a node of the tree" --adapt
refused toomany toomany "at most 16 nodes may join a run" --adapt

finish
