#!/usr/bin/env bash
# Integration: `treefarm simulate` (docs/simulate.md), through the
# treefarm command as users run it.
#  - The reference fork under every policy: complete, every task exactly
#    once (the same checks as `treefarm run`), results.json "mode"
#    "simulated", never above its bound; IA:Multi's steady state within
#    2% of it over the reference's 1000 tasks, and the
#    ranking the emulated study found where it is clear (IA:Multi ahead
#    of FCFS and RootComputes).
#  - samples/ as run's, adding up to what each node computed.
#  - Interference is live: the fork with the root's IR_s twice as large
#    takes longer; with no interference at all, less.
#  - Background load (--load): a step on Lab3 slows it, contenders on its
#    link take their share of it.
#  - --platform: the SimGrid platform as the config describes it.
#  - --trace: the timeline as run's: a span per task computed and sent.
#  - Command tasks, with stated durations and with a real run's measured
#    ones.
#  - valgrind's memcheck finds nothing (plain builds).
#  - The same run twice gives the same tasks.csv (a simulation is
#    reproducible).
#  - A 1,000-node random tree of depth 6 completes, exactly once.
#  - Adaptation (--adapt) as run's: a load step's change declared, said,
#    on the trace; the live bound up the tree; a reclaim; no later than
#    without it; nothing declared on a dedicated fork; the ratio rule's
#    fan-out; a shrink.
#  - Nodes offered during the run (joins_at_s) decided as run decides:
#    admitted, under the best parent or its own, joining and computing;
#    declined where it gains nothing; every task exactly once.
#  - Bad input as for run: no config, an unknown policy, no tasks, what is
#    not simulated (join_slots: no running process to offer a node to), a
#    node offered without --adapt, a tree deeper
#    than the simulator takes, an unwritable --out: exit 2 naming it;
#    and a treefarm without its simulator says how to get it.
source "$(dirname "$0")/lib.sh"

need_package libsimgrid-dev "$BUILD/bin/treefarm-sim"

# field DIR EXPR: a Python expression over results.json's r.
field () { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1/results.json"; }

F=$WORK/fork7.json
python3 - "$F" <<'PY'
import json, sys
c = json.load(open("configs/fork7.json"))
c["tasks"]["count"] = 300
json.dump(c, open(sys.argv[1], "w"))
PY

declare -A span
for p in fcfs comprate bwc ia-single ia-single-opt ia-multi ia-split root-computes; do
    D=$WORK/f7-$p
    "$TREEFARM" simulate "$F" --policy "$p" --out "$D" --quiet >"$WORK/$p.out" 2>&1
    rc=$?
    expect "$p: exit 0" [ "$rc" = 0 ]
    expect "$p: every task exactly once" tasks_exactly_once "$D" 300
    expect "$p: computed adds up to the bag" computed_sums_to "$D" 300
    expect "$p: results.json says simulated and complete" \
        [ "$(field "$D" 'r["mode"], r["status"]')" = "simulated complete" ]
    eff=$(field "$D" 'r["efficiency"]')
    expect "$p: efficiency $eff within the bound" python3 -c "import sys; sys.exit(not 0 < $eff <= 1.0)"
    span[$p]=$(field "$D" 'r["makespan_s"]')
done
"$TREEFARM" simulate configs/fork7.json --out "$WORK/f7-1000" --quiet >/dev/null 2>&1
eff=$(field "$WORK/f7-1000" 'r["steady"]["efficiency"]')
expect "ia-multi, 1000 tasks: steady state within 2% of its bound ($eff)" \
    python3 -c "import sys; sys.exit(not 0.98 <= $eff <= 1.02)"
for worse in fcfs root-computes; do
    expect "ia-multi (${span[ia-multi]} s) ahead of $worse (${span[$worse]} s)" \
        python3 -c "import sys; sys.exit(not ${span[ia-multi]} * 1.05 < ${span[$worse]})"
done
# The IA order (docs/policies.md): ranked by the IR_s measured while the
# root computes alone (the default), IA:Single is BWC's order but for
# Lab5 and as fast; ranked by the both-compute IR_s it serves Tenn third,
# whose 0.2 MB/s link holds the single port 10 s per task.
python3 -c "
import json; c = json.load(open('$F')); c['platform']['ia_order'] = 'both'
json.dump(c, open('$WORK/f7-both.json', 'w'))"
"$TREEFARM" simulate "$WORK/f7-both.json" --policy ia-single --out "$WORK/f7-both" --quiet \
    >/dev/null 2>&1
both=$(field "$WORK/f7-both" 'r["makespan_s"]')
expect "ia-single by alone (${span[ia-single]} s) within 5% of bwc (${span[bwc]} s)" \
    python3 -c "import sys; sys.exit(not ${span[ia-single]} < 1.05 * ${span[bwc]})"
expect "ia-single by both ($both s) 1.5x slower than by alone" \
    python3 -c "import sys; sys.exit(not $both > 1.5 * ${span[ia-single]})"
"$TREEFARM" simulate "$F" --policy ia-single --ia-order both --out "$WORK/f7-both-cli" \
    --quiet >/dev/null 2>&1
expect "--ia-order both is the config's \"ia_order\": \"both\"" \
    [ "$(field "$WORK/f7-both-cli" 'r["makespan_s"]')" = "$both" ]

# samples/, as run writes them: one CSV per node, run's columns, whose
# units over the intervals add up to what the node computed.
expect "samples: a CSV per node whose units add up to what it computed" \
    python3 - "$WORK/f7-ia-multi" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
res = json.load(open(os.path.join(d, "results.json")))
bad = []
for n in res["nodes"]:
    rows = list(csv.DictReader(open(os.path.join(d, "samples", n["name"] + ".csv"))))
    units = sum(float(r["units_per_s"]) * (float(r["t1"]) - float(r["t0"])) for r in rows)
    want = n["computed"] * 5   # fork7's 5 units a task
    if not rows or "recv_mbps" not in rows[0] or abs(units - want) > 5.01:
        bad.append("%s: %d rows, %.1f units, computed %d tasks" % (n["name"], len(rows),
                                                                 units, n["computed"]))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY

# Interference: the root's IR_s x 2 (IR_r x 2 would leave Lab5 no compute
# at its link's rate: the loader refuses it), and none at all.
for k in 2 0; do
    python3 - "$F" "$WORK/ir$k.json" "$k" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
k = float(sys.argv[3])
for n in c["tree"]:
    for key in ("ir_send", "ir_recv"):
        if key in n and (k == 0 or key == "ir_send"):
            n[key] *= k
json.dump(c, open(sys.argv[2], "w"))
PY
    "$TREEFARM" simulate "$WORK/ir$k.json" --out "$WORK/ir$k" --quiet >/dev/null 2>&1
done
slow=$(field "$WORK/ir2" 'r["makespan_s"]')
fast=$(field "$WORK/ir0" 'r["makespan_s"]')
expect "the root's IR_s x2 slows the run ($slow s > ${span[ia-multi]} s)" \
    python3 -c "import sys; sys.exit(not $slow > ${span[ia-multi]} * 1.02)"
expect "no interference speeds it up ($fast s < ${span[ia-multi]} s)" \
    python3 -c "import sys; sys.exit(not $fast < ${span[ia-multi]})"

# Background load: Lab3 four times slower from 30 s on (--load, as for
# run) computes fewer tasks than dedicated, at a measured rate below its
# configured one, and says its load; contenders that always communicate
# on Lab3's link leave it a quarter of it: fewer tasks still reach it.
echo '{"Lab3": {"steps": [{"at_s": 30, "load": 4.0}]}}' >"$WORK/steps.json"
"$TREEFARM" simulate "$F" --load "$WORK/steps.json" --out "$WORK/steps" --quiet \
    >"$WORK/steps.out" 2>&1
expect "a load step: exit 0" [ $? = 0 ]
expect "a load step: every task exactly once" tasks_exactly_once "$WORK/steps" 300
lab3=$(field "$WORK/steps" '[n for n in r["nodes"] if n["name"] == "Lab3"][0]["computed"]')
free=$(field "$WORK/f7-ia-multi" '[n for n in r["nodes"] if n["name"] == "Lab3"][0]["computed"]')
expect "a load step: Lab3 computes fewer ($lab3 < $free)" [ "$lab3" -lt "$free" ]
expect "a load step: Lab3 measured below its configured rate, kind steps" \
    python3 -c "
import json, sys
n = [n for n in json.load(open('$WORK/steps/results.json'))['nodes'] if n['name'] == 'Lab3'][0]
sys.exit(not (n['compute_measured'] < 0.8 * n['compute_configured']
              and n['load']['kind'] == 'steps'))"
c='{"comm": 1.0, "msg_bytes": 1000}'
echo "{\"Lab3\": {\"contenders\": [$c, $c, $c]}}" >"$WORK/comm.json"
"$TREEFARM" simulate "$F" --load "$WORK/comm.json" --out "$WORK/comm" --quiet >/dev/null 2>&1
expect "contenders: exit 0, every task exactly once" tasks_exactly_once "$WORK/comm" 300
got=$(field "$WORK/comm" '[n for n in r["nodes"] if n["name"] == "Lab3"][0]["received"]')
expect "contenders on Lab3's link: fewer tasks reach it ($got < $free)" [ "$got" -lt "$free" ]

# Adaptation (--adapt, docs/adapt.md), by the runtime's own code
# (node/adaptor.h): fork7 with Lab3's step declares Lab3's compute
# change, says it as run's controller does, passes the live bound up the
# tree (SUBTREE: the tree's first bound agrees with the offline one, the
# live one fell), reclaims from Lab3 through the core's RECLAIM, and ends
# no later than without --adapt; on the dedicated fork nothing is
# declared. The ratio rule keeps 2 of a star's 8 children busy behind its
# send limit (node/fanout.h: k = 2 for 10 MB tasks at 1.1 MB/s), against
# all 8 without --adapt. A child that costs more than it returns is
# shrunk, drains and leaves ("Shrink").
"$TREEFARM" simulate configs/fork7.json --load "$WORK/steps.json" --out "$WORK/a-static" \
    --quiet >/dev/null 2>&1
"$TREEFARM" simulate configs/fork7.json --load "$WORK/steps.json" --adapt \
    --out "$WORK/a-step" --trace "$WORK/a-step.json" --quiet >"$WORK/a-step.out" 2>&1
expect "adapting, a load step: exit 0" [ $? = 0 ]
expect "adapting, a load step: every task exactly once" tasks_exactly_once "$WORK/a-step" 1000
field "$WORK/a-step" 'r["changes"]' | sed 's/^/    changes: /'
expect "adapting: Lab3's compute declared, to 23.86 / 4 +- 15%, at 30..70 s" python3 -c "
import json, sys
r = json.load(open('$WORK/a-step/results.json'))
c = [c for c in r['changes'] if c['node'] == 'Lab3' and c['what'] == 'compute']
sys.exit(not (len(c) == 1 and c[0]['by'] == 'Lab3' and c[0]['from'] == 23.86
              and abs(c[0]['to'] - 23.86 / 4) < 0.15 * 23.86 / 4
              and 30 < c[0]['at_s'] < 70))"
expect "adapting: the log line" \
    grep -q "treefarm simulate: Lab3: compute 23.9 -> [0-9.]* units/s at" "$WORK/a-step.out"
expect "adapting: the trace's instant event on Lab3's process" python3 -c "
import json, sys
ev = [e for e in json.load(open('$WORK/a-step.json'))['traceEvents'] if e.get('ph') == 'i']
sys.exit(not any(e['name'].startswith('compute 23.9 -> ') and e['args']['node'] == 'Lab3'
                 for e in ev))"
field "$WORK/a-step" 'r["actions"]' | sed 's/^/    actions: /'
expect "adapting: Lab0 reclaims from Lab3, and what it took back came back" python3 -c "
import json, sys
r = json.load(open('$WORK/a-step/results.json'))
n = {n['name']: n for n in r['nodes']}
a = [a for a in r['actions'] if a['what'] == 'reclaim' and a['child'] == 'Lab3']
# Lab3 gives back what it still holds unstarted when RECLAIM comes: at
# least one task, at most the number the gate counted.
sys.exit(not (len(a) == 1 and a[0]['node'] == 'Lab0' and a[0]['taken']
              and 1 <= n['Lab0']['reclaimed'] == n['Lab3']['returned'] <= a[0]['tasks']))"
field "$WORK/a-step" 'r["bound"]' | sed 's/^/    bound: /'
expect "adapting: the tree's bound went up by SUBTREE (agrees), the live one fell" \
    python3 -c "
import json, sys
b = json.load(open('$WORK/a-step/results.json'))['bound']
sys.exit(not (b['agree'] is True and b['live'] < b['tree']))"
adapted=$(field "$WORK/a-step" 'r["makespan_s"]')
static=$(field "$WORK/a-static" 'r["makespan_s"]')
expect "adapting: makespan $adapted s, no later than without --adapt ($static s)" \
    python3 -c "import sys; sys.exit(not $adapted <= $static)"
"$TREEFARM" simulate configs/fork7.json --adapt --out "$WORK/a-free" --quiet \
    >"$WORK/a-free.out" 2>&1
expect "adapting, dedicated: every task exactly once" tasks_exactly_once "$WORK/a-free" 1000
expect "adapting, dedicated: nothing declared, no action, nothing said" eval \
    '[ "$(field "$WORK/a-free" "(r[\"changes\"], r[\"actions\"])")" = "([], [])" ] &&
     ! grep -q "compute\|link\|reclaim" "$WORK/a-free.out"'
python3 - "$WORK/star8.json" <<'PY'
import json, sys
tree = [{"name": "P", "compute": 10, "send_limit_mbps": 1.1}]
tree += [{"name": "c%d" % i, "parent": "P", "compute": 10, "link_mbps": 1.1}
         for i in range(8)]
json.dump({"name": "star8", "tasks": {"count": 100, "input_mb": 10, "units": 80},
           "policy": "ia-multi", "tree": tree,
           "platform": {"time_scale": 20, "payload_scale": 0.001, "buffer": 3}},
          open(sys.argv[1], "w"))
PY
busy='sum(n["computed"] > 0 for n in r["nodes"] if n["name"] != "P")'
"$TREEFARM" simulate "$WORK/star8.json" --out "$WORK/star-s" --quiet >/dev/null 2>&1
"$TREEFARM" simulate "$WORK/star8.json" --adapt --out "$WORK/star-a" --quiet >/dev/null 2>&1
expect "the ratio rule: every task exactly once" tasks_exactly_once "$WORK/star-a" 100
kept=$(field "$WORK/star-a" "$busy") all=$(field "$WORK/star-s" "$busy")
expect "the ratio rule: $kept of 8 children busy adapting (2 kept, a spare), $all without" \
    eval '[ "$kept" -ge 2 ] && [ "$kept" -le 3 ] && [ "$all" = 8 ]'
cat >"$WORK/shr.json" <<'JSON'
{
  "name": "shrink3", "tasks": {"count": 500, "input_mb": 10, "units": 5},
  "policy": "ia-multi",
  "platform": {"time_scale": 20, "payload_scale": 0.001, "buffer": 2},
  "tree": [
    {"name": "R", "compute": 30},
    {"name": "A", "parent": "R", "compute": 5, "link_mbps": 20},
    {"name": "X", "parent": "R", "compute": 5, "link_mbps": 10, "ir_send": 0.02}
  ]
}
JSON
echo '{"R": {"steps": [{"at_s": 0, "load": 4.0}, {"at_s": 40, "load": 1.0}]}}' \
    >"$WORK/shr-load.json"
"$TREEFARM" simulate "$WORK/shr.json" --adapt --reclaim always --load "$WORK/shr-load.json" \
    --out "$WORK/shr" --quiet >"$WORK/shr.out" 2>&1
expect "shrink: exit 0, every task exactly once" tasks_exactly_once "$WORK/shr" 500
expect "shrink: R shrinks X once its compute recovered, X leaves after it" python3 -c "
import json, sys
r = json.load(open('$WORK/shr/results.json'))
s = [a for a in r['actions'] if a['what'] == 'shrink']
x = [n for n in r['nodes'] if n['name'] == 'X'][0]
sys.exit(not (len(s) == 1 and s[0]['node'] == 'R' and s[0]['child'] == 'X' and s[0]['taken']
              and 40 < s[0]['at_s'] <= x.get('left_s', -1) and not x['lost']))"
expect "shrink: the log says X drained and left" \
    grep -q "X drained by R: it leaves the run" "$WORK/shr.out"

# Nodes offered during the run (joins_at_s), decided by the run's own
# decision code on tests/it_grow.sh's tree: X, fast, admitted under R at
# 20 s, joining and computing; the same under its fixed parent A; S,
# offered where the root's send port is full, gains nothing and is
# declined (never started); every task exactly once each time.
python3 - "$WORK" <<'PY'
import copy, json, sys
w = sys.argv[1]
base = {"name": "grow3", "tasks": {"count": 200, "input_mb": 1, "units": 5},
        "policy": "ia-multi",
        "platform": {"time_scale": 20, "payload_scale": 0.01, "buffer": 2},
        "tree": [{"name": "R", "compute": 2},
                 {"name": "A", "parent": "R", "compute": 3, "link_mbps": 10},
                 {"name": "B", "parent": "R", "compute": 3, "link_mbps": 10}]}
x = {"name": "X", "joins_at_s": 20, "compute": 10, "link_mbps": 10}
for name, extra, limit in (("grow", x, 0), ("fixed", dict(x, parent="A"), 0),
                           ("port", dict(x, name="S"), 1.2)):
    c = copy.deepcopy(base)
    c["tree"].append(extra)
    if limit:
        c["tree"][0]["send_limit_mbps"] = limit
    json.dump(c, open("%s/%s.json" % (w, name), "w"))
PY
# joined NAME NODE PARENT ADMITTED: the simulation of NAME.json exits 0,
# every task once; results.json "joins" has NODE once, admitted (1) under
# PARENT or declined (0); an admitted node is in nodes[] and nodes.csv
# under PARENT, joined after its offer, and computed; a declined one is in
# neither.
joined () {
    local name=$1
    "$TREEFARM" simulate "$WORK/$name.json" --adapt --out "$WORK/j-$name" >"$WORK/j-$name.out" \
        2>&1
    expect "$name: exit 0" [ $? = 0 ]
    expect "$name: every task exactly once" tasks_exactly_once "$WORK/j-$name" 200
    expect "$name: $2 $([ "$4" = 1 ] && echo "joins under $3 and computes" || echo declined)" \
        python3 - "$WORK/j-$name" "$@" <<'PY'
import csv, json, sys
d, node, parent, admitted = sys.argv[1], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
r = json.load(open(d + "/results.json"))
j = [e for e in r["joins"] if e["node"] == node]
nodes = {n["name"]: n for n in r["nodes"]}
rows = {n["name"]: n for n in csv.DictReader(open(d + "/nodes.csv"))}
ok = len(j) == 1 and j[0]["admitted"] == admitted and j[0]["parent"] == parent
if admitted:
    n = nodes.get(node, {})
    ok = ok and n.get("parent") == parent and n.get("computed", 0) > 0 \
        and n.get("joined_s", 0) >= 20 and rows.get(node, {}).get("parent") == parent
else:
    ok = ok and node not in nodes and node not in rows
sys.exit(0 if ok else 1)
PY
}
joined grow X R 1
expect "grow: said as run says it, the summary's bound grown" eval \
    'grep -q "X joins under R: bound 1.6 -> 3.6 tasks/s, saves" "$WORK/j-grow.out" &&
     grep -q "X joined under R" "$WORK/j-grow.out" &&
     grep -q "grown to 3.600 tasks/s as nodes joined" "$WORK/j-grow.out"'
expect "grow: judged against the bound as it grew (1.6 -> 3.6 tasks/s)" \
    test "$(field "$WORK/j-grow" '"%.1f %.1f" % (r["bound"]["tasks_per_s"], r["bound"]["grown"]["final"])')" = "1.6 3.6"
joined fixed X A 1
joined port S R 0
expect "port: said as run says it" grep -q \
    "S not admitted: under the best parent (R) the bound stays 1.6 tasks/s" "$WORK/j-port.out"

# --trace: Chrome trace-event JSON, as run's: per node, a compute span per
# task it computed and a send span per task it forwarded; a bad path is
# refused before anything runs.
"$TREEFARM" simulate "$F" --out "$WORK/traced" --trace "$WORK/t.json" --quiet >/dev/null 2>&1
expect "--trace: exit 0" [ $? = 0 ]
expect "--trace: a compute span per task computed, a send span per task forwarded" \
    python3 - "$WORK/t.json" "$WORK/traced/results.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
res = json.load(open(sys.argv[2]))
bad = []
for i, n in enumerate(res["nodes"]):
    x = [e for e in ev if e.get("pid") == i + 1 and e.get("ph") == "X"]
    comp = sum(1 for e in x if e["cat"] == "compute" and e["name"] != "idle")
    send = sum(1 for e in x if e["cat"] == "send")
    if comp != n["computed"] or send != n["forwarded"]:
        bad.append("%s: %d compute spans for %d computed, %d send for %d forwarded"
                   % (n["name"], comp, n["computed"], send, n["forwarded"]))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
# --platform: the SimGrid platform it built, as XML: a host per node at
# its compute rate x time scale, a link per child, the root's send limit,
# a route each way per link and no other.
"$TREEFARM" simulate "$F" --out "$WORK/plat" --platform "$WORK/p.xml" --quiet >/dev/null 2>&1
expect "--platform: the fork's hosts, links, send limit and routes" \
    python3 - "$WORK/p.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
hosts = {h.get("id"): h.get("speed") for h in root.iter("host")}
links = {l.get("id") for l in root.iter("link")}
routes = list(root.iter("zoneRoute"))
bad = []
if len(hosts) != 7 or abs(float(hosts.get("n0", "0f")[:-1]) - 9.06 * 20) > 1e-9:
    bad.append("hosts %r" % hosts)
if links != {"s0"} | {"l%d" % i for i in range(1, 7)}:
    bad.append("links %r" % sorted(links))
down = [r for r in routes if r.get("src") == "h0"]
if len(routes) != 12 or any([c.get("id") for c in r] != ["s0", r.get("dst").replace("z", "l")]
                            for r in down):
    bad.append("%d routes, down %r" % (len(routes), [[c.get("id") for c in r] for r in down]))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY

# Under valgrind's memcheck (not in sanitizer builds, which valgrind
# cannot run): no invalid access, no definite or indirect leak, with
# --trace and background load.
case "$BUILD" in
*san-*) skip_part "valgrind: a sanitizer build" ;;
*)
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        "$BUILD/bin/treefarm-sim" "$F" --load "$WORK/comm.json" --trace "$WORK/vg.json" \
        --out "$WORK/vg" --quiet >"$WORK/vg.out" 2>&1
    rc=$?
    expect "under valgrind: clean (exit $rc)" [ "$rc" = 0 ]
    expect "under valgrind: every task exactly once" tasks_exactly_once "$WORK/vg" 300 ;;
esac

# Command tasks (docs/simulate.md, "Command tasks"): 40 inputs of 1 to
# 40 KB. Stated: 0.2 s each, on farm5 (no synthetic tasks): exactly once,
# the rows' ids and bytes those of the inputs, 0.2 s each. Measured: the same
# commands run for real first, then simulated with --measured on farm5
# with compute rates apart: each row's seconds its measured ones scaled
# by the rates of the node that ran it and the node that simulated it. Without
# a duration: refused, naming a command.
mkdir -p "$WORK/in"
for i in $(seq 40); do head -c $((i * 1000)) /dev/zero >"$WORK/in/f$i.dat"; done
CMD=(--command 'gzip -c {} > {/}.gz' --inputs "$WORK/in/*.dat")
"$TREEFARM" simulate configs/farm5.json "${CMD[@]}" --task-seconds 0.2 --out "$WORK/cs" \
    --quiet >"$WORK/cs.out" 2>&1
expect "commands, stated: exit 0" [ $? = 0 ]
expect "commands, stated: every task exactly once" tasks_exactly_once "$WORK/cs" 40 commands
expect "commands, stated: the rows' ids 1..40, their inputs' bytes, 0.2 s each" python3 -c "
import csv, sys
rows = list(csv.DictReader(open('$WORK/cs/tasks.csv')))
sys.exit(not (sorted(int(r['id']) for r in rows) == list(range(1, 41))
              and sorted(int(r['bytes_in']) for r in rows) == [1000 * i for i in range(1, 41)]
              and all(float(r['seconds']) == 0.2 and r['status'] == 'ok' for r in rows)))"
expect "commands, stated: every node's measured rate at least a command per 0.2 s busy" \
    python3 -c "
import json, sys
ns = json.load(open('$WORK/cs/results.json'))['nodes']
sys.exit(not all(n['compute_measured'] >= 4.99 for n in ns if n['computed'] > 0))"
"$TREEFARM" run configs/farm5.json "${CMD[@]}" --out "$WORK/cr" --quiet >"$WORK/cr.out" 2>&1
python3 - "$WORK/farm5v.json" <<'PY'
import json, sys   # farm5 with compute rates apart, to scale by
c = json.load(open("configs/farm5.json"))
for n, r in zip(c["tree"], [100, 50, 200, 25, 100]):
    n["compute"] = r
json.dump(c, open(sys.argv[1], "w"))
PY
"$TREEFARM" simulate "$WORK/farm5v.json" "${CMD[@]}" --measured "$WORK/cr" --out "$WORK/cm" \
    --quiet >"$WORK/cm.out" 2>&1
expect "commands, measured: exit 0, every task exactly once" \
    tasks_exactly_once "$WORK/cm" 40 commands
expect "commands, measured: each its measured seconds, scaled by the compute rates" \
    python3 - "$WORK/cr/tasks.csv" "$WORK/cm/tasks.csv" "$WORK/farm5v.json" <<'PY'
import csv, json, sys
rate = {n["name"]: n["compute"] for n in json.load(open(sys.argv[3]))["tree"]}
real = {r["id"]: r for r in csv.DictReader(open(sys.argv[1]))}
bad = []
for r in csv.DictReader(open(sys.argv[2])):
    m = real[r["id"]]
    want = float(m["seconds"]) * rate[m["node"]] / rate[r["node"]]
    if abs(float(r["seconds"]) - want) > 0.0015:   # tasks.csv has 3 decimals
        bad.append("%s: %s s, want %.4f" % (r["id"], r["seconds"], want))
for b in bad[:5]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY

# Reproducible.
"$TREEFARM" simulate "$F" --policy ia-multi --out "$WORK/again" --quiet >/dev/null 2>&1
expect "the same run twice: the same tasks.csv" cmp -s "$WORK/again/tasks.csv" \
    "$WORK/f7-ia-multi/tasks.csv"

# A 1,000-node random tree, depth 6.
python3 scripts/tree-config.py --random 1000 --depth 6 --count 20000 --policy ia-multi \
    >"$WORK/r1k.json"
"$TREEFARM" simulate "$WORK/r1k.json" --out "$WORK/r1k" --quiet >"$WORK/r1k.out" 2>&1
expect "1,000 nodes: exit 0" [ $? = 0 ]
expect "1,000 nodes: complete" [ "$(field "$WORK/r1k" 'r["status"]')" = complete ]
expect "1,000 nodes: every task exactly once" tasks_exactly_once "$WORK/r1k" 20000
expect "1,000 nodes: computed adds up to the bag" computed_sums_to "$WORK/r1k" 20000

# Bad input.
# refused WHAT PATTERN ARGS...: treefarm simulate ARGS exits 2 and says
# PATTERN.
refused () {
    local what=$1 pattern=$2 rc; shift 2
    "$TREEFARM" simulate "$@" >"$WORK/err" 2>&1
    rc=$?
    expect "$what: exit 2 saying \"$pattern\" (exit $rc)" \
        eval '[ $rc = 2 ] && grep -q -- "$pattern" "$WORK/err"'
}
refused "a missing config" none.json "$WORK/none.json" --out "$WORK/x"
refused "an unknown policy" nosuch "$F" --policy nosuch --out "$WORK/x"
refused "a config without tasks (farm5)" 'no "tasks"' configs/farm5.json --out "$WORK/x"
python3 -c "
import json; c = json.load(open('$F')); c['platform']['join_slots'] = 2
json.dump(c, open('$WORK/slots.json', 'w'))
c['platform']['join_slots'] = 0
c['tree'].append(dict(c['tree'][1], name='N1', joins_at_s=30))
json.dump(c, open('$WORK/offers.json', 'w'))"
refused "nodes joining (join_slots)" 'a simulation has none to offer it to' \
    "$WORK/slots.json" --adapt --out "$WORK/x"
refused "a node offered (joins_at_s) without --adapt" "need --adapt" \
    "$WORK/offers.json" --out "$WORK/x"
refused "--reclaim without --adapt" "--reclaim needs --adapt" "$F" --reclaim always --out "$WORK/x"
refused "commands without a duration" 'command "1" has no duration' configs/farm5.json \
    "${CMD[@]}" --out "$WORK/x"
mkdir -p "$WORK/badrun"
printf 'task,node,id,status,exit,attempts,bytes_in,bytes_out,seconds\n0,nosuch,1,ok,0,1,5,5,0.1\n' \
    >"$WORK/badrun/tasks.csv"
refused "--measured with a row naming no node of the config" "badrun/tasks.csv:2" \
    configs/farm5.json "${CMD[@]}" --measured "$WORK/badrun" --out "$WORK/x"
python3 scripts/tree-config.py --depth 300 --arity 1 --count 10 >"$WORK/deep.json"
refused "a tree 300 deep" "at most 256" "$WORK/deep.json" --out "$WORK/x"
touch "$WORK/file"
refused "an --out that cannot be made" "file: exists and is not a directory" "$F" \
    --out "$WORK/file/sub"
refused "a --trace that cannot be written" "file/t.json" "$F" --trace "$WORK/file/t.json"
TREEFARM_SIM=$WORK/nosim refused "no simulator" libsimgrid-dev "$F"
"$TREEFARM" simulate --help >"$WORK/help" 2>&1
rc=$?
expect "--help: exit 0 with the usage" \
    eval '[ $rc = 0 ] && grep -q "usage: treefarm simulate" "$WORK/help"'

finish
