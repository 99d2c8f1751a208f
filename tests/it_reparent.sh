#!/usr/bin/env bash
# Integration: re-parenting (docs/adapt.md, "Re-parent"), real processes on
# loopback through `treefarm run --adapt`.
# 1. A chain R -> A -> B -> {C, D}, and R -> E, CURVE on. A is killed
#    (SIGKILL) while tasks flow: B is moved under R with its subtree (R keeps one
#    slot for a lost child's child), C and D with it; only A is lost; B,
#    C and D go on computing after the move (B connects to R with R's key,
#    R admits B's); B had tasks from A that the
#    root queued again (stale, never sent up); every task is recorded
#    exactly once.
# 2. A frozen (SIGSTOP) instead: the same, whichever of R and B finds A
#    silent first. (Without --adapt A's subtree is lost with it:
#    tests/it_recovery.sh.)
# 3. R -> {A -> {A1, A2}, X -> {X1, X2}}: A and X killed together. R keeps
#    two slots: one pair of orphans is moved under R, the other finds no
#    slot and is lost, saying why; every task once.
source "$(dirname "$0")/lib.sh"

# config FILE TREE: an emulated run of 400 tasks of 1 unit (0.1 MB) on
# TREE (JSON list entries), every node 2 units/s at time scale 4 (about 8
# tasks/s of wall time each); heartbeats every 100 ms, a peer silent for
# 1 s is lost.
config () {
    cat >"$1" <<JSON
{"name": "reparent", "tasks": {"count": 400, "input_mb": 0.1, "units": 1},
 "policy": "fcfs",
 "platform": {"time_scale": 4, "payload_scale": 0.01, "buffer": 2,
              "heartbeat_ms": 100, "heartbeat_misses": 10},
 "tree": [$2]}
JSON
}
node () { echo "{\"name\": \"$1\", \"parent\": \"$2\", \"compute\": 2, \"link_mbps\": 50}"; }
config "$WORK/chain.json" "{\"name\": \"R\", \"compute\": 2}, $(node A R), $(node B A),
    $(node C B), $(node D B), $(node E R)"
config "$WORK/pairs.json" "{\"name\": \"R\", \"compute\": 2}, $(node A R), $(node X R),
    $(node A1 A), $(node A2 A), $(node X1 X), $(node X2 X)"

# rows DIR NAMES...: tasks.csv rows of those nodes.
rows () {
    local d=$1; shift
    python3 - "$d/tasks.csv" "$@" <<'PY'
import csv, sys
names = set(sys.argv[2:])
try:
    print(sum(1 for r in csv.reader(open(sys.argv[1])) if len(r) > 1 and r[1] in names))
except FileNotFoundError:
    print(0)
PY
}

# kill_run NAME CONFIG VICTIMS ARGS...: run CONFIG into $WORK/NAME, kill
# VICTIMS (space-separated) together once records flow; RC its exit,
# BEFORE the rows of B, C and D when they were killed.
kill_run () {
    local name=$1 cfg=$2 victims=$3 pids
    shift 3
    "$TREEFARM" run "$cfg" --out "$WORK/$name" --quiet --timeout 60 "$@" >/dev/null \
        2>"$WORK/$name.err" &
    local ctl=$!
    await_records "$WORK/$name" 30
    sleep 1
    pids=$(for v in $victims; do node_pid "$v" "$ctl"; done)
    BEFORE=$(rows "$WORK/$name" B C D)
    [ -n "$pids" ] && kill -9 $pids
    wait "$ctl"
    RC=$?
}

# members DIR LOST MOVED TO: results.json names exactly LOST lost and
# MOVED (space-separated) moved, each to TO, its parent now, not lost.
members () {
    python3 - "$1/results.json" "$2" "$3" "$4" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lost, moved, to = set(sys.argv[2].split()), set(sys.argv[3].split()), sys.argv[4]
bad = []
got = {x["name"] for x in r["lost"]}
if got != lost:
    bad.append("lost %s, expected %s" % (sorted(got), sorted(lost)))
moves = r.get("moves", [])
if {m["node"] for m in moves} != moved or len(moves) != len(moved):
    bad.append("moves %s, expected %s" % ([m["node"] for m in moves], sorted(moved)))
nodes = {n["name"]: n for n in r["nodes"]}
for m in moves:
    n = nodes[m["node"]]
    if m["to"] != to or n["parent"] != to or n["lost"]:
        bad.append("move %s to %s: parent %s, lost %s" % (m["node"], m["to"], n["parent"],
                                                         n["lost"]))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}

# counter DIR NODE KEY: NODE's counter KEY in results.json.
counter () {
    python3 -c 'import json, sys
print([n for n in json.load(open(sys.argv[1]))["nodes"] if n["name"] == sys.argv[2]][0][sys.argv[3]])' \
        "$1/results.json" "$2" "$3"
}

# --- 1. a node lost mid-tree: its child moves with its subtree -----------
kill_run moved "$WORK/chain.json" A --adapt --curve
run_survived "adapting, A killed" "$WORK/moved" 400 "$RC" "$WORK/moved.err"
expect "adapting: only A lost; B moved under R, C and D with it" \
    members "$WORK/moved" A B R
after=$(rows "$WORK/moved" B C D)
expect "adapting: B, C and D computed after the move ($BEFORE rows at the kill, $after at the end)" \
    test "$after" -gt $((BEFORE + 10))
expect "adapting: the log says B re-parented under R" \
    grep -q "B re-parented under R" "$WORK/moved.err"
expect "adapting: B says it moved, and did not stop" \
    grep -q "treefarm-node B: re-parented under R" "$WORK/moved.err"
stale=$(counter "$WORK/moved" B stale)
expect "adapting: B's tasks from A were stale, queued again at the root (stale $stale)" \
    test "$stale" -gt 0

# --- 2. a frozen node: its children find it silent ---------------------
# Nothing exits: R and B each find A silent after 1 s, whichever first;
# B's LOST about its parent moves B as R's LOST about its child does.
freeze_run () {
    "$TREEFARM" run "$WORK/chain.json" --adapt --out "$WORK/frozen" --quiet --timeout 60 \
        >/dev/null 2>"$WORK/frozen.err" &
    local ctl=$! pid
    await_records "$WORK/frozen" 30
    sleep 1
    pid=$(node_pid A "$ctl")
    [ -n "$pid" ] && kill -STOP "$pid"
    wait "$ctl"
    RC=$?
}
freeze_run
run_survived "adapting, A frozen" "$WORK/frozen" 400 "$RC" "$WORK/frozen.err"
expect "adapting, A frozen: only A lost; B moved under R" members "$WORK/frozen" A B R

# --- 3. two lost at once: slots for one pair only -------------------------
kill_run pairs "$WORK/pairs.json" "A X" --adapt
run_survived "adapting, A and X killed" "$WORK/pairs" 400 "$RC" "$WORK/pairs.err"
if members "$WORK/pairs" "A X X1 X2" "A1 A2" R >/dev/null; then
    ok "adapting, two lost: A1 and A2 moved under R, X1 and X2 lost"
else
    expect "adapting, two lost: one pair moved under R, the other lost" \
        members "$WORK/pairs" "A X A1 A2" "X1 X2" R
fi
expect "adapting, two lost: the log says why the other pair could not move" \
    grep -q "cannot be moved: no node above its lost parent has a vacant child slot" \
    "$WORK/pairs.err"

finish
