#!/usr/bin/env bash
# Integration under valgrind: the controller and every node of a 3-level
# tree run under memcheck; any invalid access or definite/indirect leak
# makes that process exit 99, which fails the run. Not in sanitizer builds:
# valgrind cannot run AddressSanitizer binaries (that pass is the
# sanitizers' own check).
# Runs alone (tests/run.sh): CPU-bound under memcheck; its nodes must say
# HELLO within the controller's handshake timeout.
source "$(dirname "$0")/lib.sh"

case "$BUILD" in
*san-*) skip "sanitizer build: valgrind cannot run AddressSanitizer binaries;" \
             "memcheck is the plain build's check" ;;
esac

VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"
sed -e 's/"count": *[0-9]*/"count": 60/' configs/tree3.json >"$WORK/tree3-small.json"
# With CURVE (docs/security.md): the certificates, the ZAP handlers, the
# CURVE sockets of the controller and of every node under memcheck too;
# with --trace, the nodes' span recorders and the timeline's writer; with
# background load of every kind (docs/load.md), the emulated load's
# models, a parent pacing its child's shared link, and their tracks; with
# --adapt, the live estimates, their changes and what they re-plan, and
# with --reclaim always, the reclaim a declared slowdown starts (edge7's,
# about 18 platform seconds in: RECLAIM to it, RETURN of what it holds
# beyond its new hold).
printf 'time_s,load\n0,1.5\n2,2\n' >"$WORK/vg-load.csv"
cat >"$WORK/vg-load.json" <<'EOF'
{"rackA": {"jobs": {"utilization": 0.5, "demand": {"dist": "h2", "mean_s": 0.1, "cv": 3}}},
 "rackA-n1": {"contenders": [{"compute": 0.3, "comm": 0.5, "msg_bytes": 800}]},
 "edge7": {"steps": [{"at_s": 1, "load": 2}], "trace": "vg-load.csv", "seed": 4}}
EOF
TREEFARM_NODE_WRAPPER="$VG" $VG "$TREEFARM" run "$WORK/tree3-small.json" --curve \
    --load "$WORK/vg-load.json" --out "$WORK/vg" --quiet --trace "$WORK/vg.trace.json" --adapt \
    --reclaim always \
    >"$WORK/vg.out" 2>"$WORK/vg.err"
rc=$?
expect "controller and 9 nodes valgrind-clean with CURVE, run complete (exit $rc)" \
    test "$rc" = 0
[ "$rc" = 0 ] || tail -30 "$WORK/vg.err"
expect "every task exactly once under valgrind" tasks_exactly_once "$WORK/vg" 60
# One compute span a task, and one more for each end-game copy at most.
expect "the trace under valgrind: 60 compute spans, and the copies'" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["traceEvents"]
copies = sum(x.get("copies", 0) for x in json.load(open(sys.argv[2]))["nodes"])
n = sum(1 for e in t if e["ph"] == "X" and e["cat"] == "compute")
sys.exit(0 if 60 <= n <= 60 + copies else "%d compute spans, %d copies" % (n, copies))' \
    "$WORK/vg.trace.json" "$WORK/vg/results.json"
expect "the loaded nodes' kinds in results.json" python3 -c '
import json, sys
k = {n["name"]: n["load"]["kind"] for n in json.load(open(sys.argv[1]))["nodes"]}
sys.exit(0 if (k["rackA"], k["rackA-n1"], k["edge7"], k["head"])
         == ("jobs", "contenders", "steps+trace", "none") else str(k))' "$WORK/vg/results.json"

# A node lost mid-run under memcheck, adapting: rackB killed with SIGKILL
# once records arrive; its parent re-queues what its subtree had, its
# children wait, are moved under head and go on (docs/adapt.md,
# "Re-parent": ATTACH, REPARENT, the stale tasks dropped); the controller
# names rackB alone lost and the run completes. Every surviving process
# stays clean. (The orphans that stop on their own, without --adapt, are
# the sanitizer pass's: tests/it_recovery.sh.)
python3 - configs/tree3.json "$WORK/tree3-loss.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["tasks"]["count"] = 200
c["platform"]["time_scale"] = 5
json.dump(c, open(sys.argv[2], "w"))
PY
TREEFARM_NODE_WRAPPER="$VG" $VG "$TREEFARM" run "$WORK/tree3-loss.json" --adapt \
    --out "$WORK/vgl" --quiet >"$WORK/vgl.out" 2>"$WORK/vgl.err" &
ctl=$!
await_records "$WORK/vgl" 30
victim=$(pgrep -P "$ctl" -f -- "--name rackB( |$)" || true)
[ -n "$victim" ] && kill -KILL "$victim"
wait "$ctl"
rc=$?
expect "a lost node: controller and surviving nodes valgrind-clean, run complete (exit $rc)" \
    test "$rc" = 0
[ "$rc" = 0 ] || tail -30 "$WORK/vgl.err"
expect "a lost node: every task exactly once, rackB alone lost, its children moved" \
    eval 'tasks_exactly_once "$WORK/vgl" 200 && python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
lost = sorted(x[\"name\"] for x in r[\"lost\"])
moved = sorted((m[\"node\"], m[\"to\"]) for m in r.get(\"moves\", []))
sys.exit(lost != [\"rackB\"] or moved != [(\"rackB-n1\", \"head\"), (\"rackB-n2\", \"head\")])" \
    "$WORK/vgl/results.json"'
# The lost node's exit is not judged by the controller (it was killed):
# memcheck's own lines are.
expect "a lost node: no memcheck report from any process, the moved ones' included" \
    eval '! grep -m3 "^==[0-9]*== " "$WORK/vgl.err"'

# Nodes that join and leave under memcheck (docs/adapt.md, "Grow",
# "Shrink"): X offered at 4 platform seconds joins a three-node tree
# (the controller's placement; admit "always", since memcheck's start-up
# cost would rightly make the gate decline; the spawn, ATTACH in R's
# vacant slot, X's CONFIG and START), with CURVE on (the offered node's
# keys); then, R's background load ending at 30 s, R shrinks Y
# (--reclaim always: RECLAIM 0, DRAINED, the controller stops Y). Time
# scale 5: at 10, memcheck's R fell so far behind its clock (fidelity
# 0.70) that its live rate came back at 22.5 units/s, not 30, and the
# shrink never came.
cat >"$WORK/vg-grow.json" <<'EOF'
{"name": "vggrow", "tasks": {"count": 300, "input_mb": 10, "units": 5}, "policy": "ia-multi",
 "platform": {"time_scale": 5, "payload_scale": 0.001, "buffer": 2, "admit": "always"},
 "tree": [{"name": "R", "compute": 30},
          {"name": "A", "parent": "R", "compute": 5, "link_mbps": 20},
          {"name": "Y", "parent": "R", "compute": 5, "link_mbps": 10, "ir_send": 0.02},
          {"name": "X", "joins_at_s": 4, "compute": 10, "link_mbps": 20}]}
EOF
echo '{"R": {"steps": [{"at_s": 0, "load": 4.0}, {"at_s": 30, "load": 1.0}]}}' \
    >"$WORK/vg-grow-load.json"
TREEFARM_NODE_WRAPPER="$VG" $VG "$TREEFARM" run "$WORK/vg-grow.json" --curve --adapt \
    --reclaim always --load "$WORK/vg-grow-load.json" --out "$WORK/vgg" --quiet \
    >"$WORK/vgg.out" 2>"$WORK/vgg.err"
rc=$?
expect "grow and shrink: controller and nodes valgrind-clean, run complete (exit $rc)" \
    test "$rc" = 0
[ "$rc" = 0 ] || tail -30 "$WORK/vgg.err"
expect "grow and shrink: every task exactly once, X joined, Y left" \
    eval 'tasks_exactly_once "$WORK/vgg" 300 && python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
n = {x[\"name\"]: x for x in r[\"nodes\"]}
ok = \"X\" in n and n[\"X\"][\"computed\"] > 0 and \"left_s\" in n[\"Y\"]
if not ok:
    print(\"  X:\", n.get(\"X\", {}).get(\"computed\"), \"computed; Y left_s:\",
          n[\"Y\"].get(\"left_s\"), \"joins:\", r.get(\"joins\"), \"actions:\", r.get(\"actions\"))
sys.exit(not ok)" "$WORK/vgg/results.json"'
expect "grow and shrink: no memcheck report from any process" \
    eval '! grep -m3 "^==[0-9]*== " "$WORK/vgg.err"'

# Calibration under memcheck: measure mode in every node (probe streams,
# MEASURE/MEASURED), the controller's plan, platform file and plot.
TREEFARM_NODE_WRAPPER="$VG" $VG "$TREEFARM" measure configs/chain4.json --seconds 10 \
    --dir "$WORK/vgm" --quiet >"$WORK/vgm.out" 2>"$WORK/vgm.err"
rc=$?
expect "measure: controller and 4 nodes valgrind-clean (exit $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -30 "$WORK/vgm.err"
expect "measure under valgrind wrote the platform file" test -s "$WORK/vgm/platform.json"

# Failure paths under valgrind too: a bad policy, and Ctrl-C mid-run.
$VG "$TREEFARM" run configs/chain4.json --policy nosuch >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "usage error path valgrind-clean (exit $rc, want 2)" test "$rc" = 2

sed -e 's/"time_scale": *[0-9.]*/"time_scale": 1/' configs/chain4.json >"$WORK/slow.json"
$VG "$TREEFARM" run "$WORK/slow.json" --out "$WORK/int" --quiet >"$WORK/o" 2>"$WORK/e" &
ctl=$!
sleep 5
kill -INT $ctl
wait $ctl; rc=$?
expect "interrupt path valgrind-clean (exit $rc, want 130)" test "$rc" = 130
[ "$rc" = 130 ] || tail -20 "$WORK/e"

finish
