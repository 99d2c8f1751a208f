#!/usr/bin/env bash
# Integration: hostile peers (tests/hostile.c). No message may abort a node
# or make it allocate from a number it was sent.
# 1. A hostile parent (the helper plays controller and parent of one node)
#    sends CHUNKs claiming INT64_MAX bytes and lying totals, counts,
#    lengths and units, broken frames, garbage, a wrong version; the node
#    refuses each, still computes a true task, and exits 0 on STOP. A frame
#    over its ZMQ_MAXMSGSIZE comes last: libzmq drops that link for good.
# 2. During a real run, strangers and impostors (a real child's identity)
#    send the same to the children ROUTERs of the root and of an interior
#    node: the run completes every task exactly once, each stranger's
#    message is logged refused and counted, and no node outlives the run.
source "$(dirname "$0")/lib.sh"

HOSTILE=$BUILD/tests/hostile
NODE=$(dirname "$TREEFARM")/treefarm-node
need_hostile || { finish; exit; }

# --- 1. a hostile parent ------------------------------------------------
"$HOSTILE" parent "$NODE" configs/chain4.json kiosk >"$WORK/p.out" 2>"$WORK/p.err"
rc=$?
expect "hostile parent: the node survives, takes a true task after, exits 0 (exit $rc)" \
    test "$rc" = 0
[ "$rc" = 0 ] || { cat "$WORK/p.out"; tail -5 "$WORK/p.err"; }
n=$(grep -c "treefarm-node kiosk: refused" "$WORK/p.err")
expect "hostile parent: every one of its 14 messages logged refused (got $n)" test "$n" = 14
expect "hostile parent: the node's REPORT counts 14 malformed" \
    grep -q "malformed 14" "$WORK/p.out"
expect "hostile parent: the INT64_MAX claim refused before use" \
    grep -q 'kiosk: refused .*"bytes" must be an integer in \[0, 17179869184\]' "$WORK/p.err"

# --- 2. strangers and impostors during a real run -----------------------
N=800   # about 6 s of wall time at time scale 20
sed -e "s/\"count\": *[0-9]*/\"count\": $N/" configs/chain4.json >"$WORK/chain4.json"
printf '#!/bin/sh\nexec "$@" --verbose\n' >"$WORK/verbose.sh"   # nodes log their endpoint
chmod +x "$WORK/verbose.sh"
TREEFARM_NODE_WRAPPER="$WORK/verbose.sh" "$TREEFARM" run "$WORK/chain4.json" \
    --out "$WORK/run" --quiet >"$WORK/run.out" 2>"$WORK/run.err" & ctl=$!

endpoint () {   # the children endpoint node $1 logged, waiting up to 10 s
    local ep i
    for i in $(seq 100); do
        ep=$(sed -n "s/^treefarm-node $1: experiment .* endpoint \"\(tcp:[^\"]*\)\"/\1/p" \
             "$WORK/run.err")
        [ -n "$ep" ] && { echo "$ep"; return; }
        sleep 0.1
    done
}
for pair in campus:metro metro:branch; do
    node=${pair%:*} child=${pair#*:}
    ep=$(endpoint "$node")
    expect "$node logged its children endpoint" test -n "$ep"
    [ -n "$ep" ] && "$HOSTILE" router "$ep" "$child" >>"$WORK/h.out" 2>&1
done
# A flood: FLOOD garbage messages from a stranger at campus. Each is
# counted, but the log says at most 50 refusals a second and sums up the
# rest (overlay/ratelog.h), so it cannot fill a disk.
FLOOD=5000
ep=$(endpoint campus)
[ -n "$ep" ] && "$HOSTILE" flood "$ep" "$FLOOD" >>"$WORK/h.out" 2>&1
expect "the attacks ended while the run was still under way" kill -0 $ctl
wait $ctl; rc=$?
run_survived "run under attack" "$WORK/run" "$N" "$rc" "$WORK/run.err"
for node in campus metro; do
    n=$(grep -c "treefarm-node $node: refused a message from hostile-stranger" "$WORK/run.err")
    expect "$node logged each of the stranger's 11 messages refused (got $n)" test "$n" = 11
    expect "$node: results.json counts them malformed" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if [x for x in r["nodes"] if x["name"] == sys.argv[2]][0]["malformed"] >= 11 else 1)' \
        "$WORK/run/results.json" "$node"
done
n=$(grep -c "treefarm-node campus: refused a message from hostile-flood" "$WORK/run.err")
expect "flood: campus said at most 150 of $FLOOD refusals (said $n)" test "$n" -le 150
expect "flood: and summed up the rest" grep -q "campus: [0-9]* more refusals not shown" \
    "$WORK/run.err"
expect "flood: every message counted malformed" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
m = [x for x in r["nodes"] if x["name"] == "campus"][0]["malformed"]
print("  campus malformed", m)
sys.exit(0 if m >= int(sys.argv[2]) + 11 else 1)' "$WORK/run/results.json" "$FLOOD"
# An impostor under a real child's name is never read: libzmq's ROUTER
# keeps the first connection of an identity (no ZMQ_ROUTER_HANDOVER).
expect "the impostors' messages were never taken for the real children's" \
    test "$(grep -c 'refused .* from \(metro\|branch\)' "$WORK/run.err")" = 0

finish
