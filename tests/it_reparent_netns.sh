#!/usr/bin/env bash
# Integration: re-parenting (docs/adapt.md, "Re-parent") across a cut
# link. Five network namespaces (head, w1, w1a, w1b, w2), each with one
# veth into a Linux bridge in this namespace, so that every node reaches
# every other (a switch, where scripts/testbed.sh links only a parent to
# its child), run configs/farm5.json's tree emulated, each node
# netns:NAME. Once records flow, the link head<->w1 is cut: blackhole
# routes drop only the traffic between head's and w1's addresses, so w1
# goes silent to head while w1a and w1b still reach head. With --adapt,
# w1 alone is lost and its children move under head and go on computing;
# without it, w1's subtree is lost with it. Every task completes once
# either way. The namespaces and the bridge are removed on every exit.
# Runs alone (tests/run.sh, group netns): network namespaces, veths and tc on the host, each script in its own address range.
source "$(dirname "$0")/lib.sh"

need_package iproute2 ip
PFX=tf-rp-$$
NAMES=(head w1 w1a w1b w2)
BRIDGE=tfrb$$
if ! ip netns add "$PFX-head" 2>"$WORK/netns.err"; then
    skip "network namespaces are not permitted here (ip netns add: $(cat "$WORK/netns.err"));" \
         "no package fixes that: it needs root and a kernel that allows them"
fi
cleanup () {
    local n
    for n in "${NAMES[@]}"; do
        ip link del "tfr$$$n" 2>/dev/null
        ip netns del "$PFX-$n" 2>/dev/null
    done
    ip link del "$BRIDGE" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A /24 of 198.19.128.0/17 no interface here uses yet (198.19.0.0/17 is
# it_netns's, which runs beside this script).
base=""
for i in $(seq 0 127); do
    third=$(( 128 + ($$ + i) % 128 ))
    if ! ip -4 -o addr | grep -q " 198\.19\.$third\."; then base=198.19.$third; break; fi
done
[ -n "$base" ] || skip "no free /24 in 198.19.128.0/17 here"
declare -A ADDR
ip link add "$BRIDGE" type bridge && ip link set "$BRIDGE" up || nok "bridge $BRIDGE made"
for k in "${!NAMES[@]}"; do
    n=${NAMES[k]} ns=$PFX-${NAMES[k]} ADDR[${NAMES[k]}]=$base.$((k + 1))
    { [ "$n" = head ] || ip netns add "$ns"; } &&
        ip link add "tfr$$$n" type veth peer name eth0 netns "$ns" &&
        ip link set "tfr$$$n" master "$BRIDGE" && ip link set "tfr$$$n" up &&
        ip -n "$ns" addr add "${ADDR[$n]}/24" dev eth0 && ip -n "$ns" link set eth0 up &&
        ip -n "$ns" link set lo up || nok "namespace $ns made"
done
reach () { ip netns exec "$PFX-$1" ping -c 1 -W 2 "${ADDR[$2]}" >/dev/null 2>&1; }
expect "w1a reaches head through the bridge" reach w1a head
expect "w1 reaches w2 through the bridge" reach w1 w2

# farm5's shape, emulated: 300 tasks at 10 tasks/s a node, about 10 s;
# a peer silent 10 beats of 100 ms is lost.
cat >"$WORK/tree.json" <<EOF
{"name": "reparent-netns", "tasks": {"count": 300, "input_mb": 0.1, "units": 1},
 "platform": {"mode": "emulated", "time_scale": 1, "heartbeat_ms": 100, "heartbeat_misses": 10},
 "tree": [{"name": "head", "compute": 10, "host": "netns:$PFX-head"},
  {"name": "w1", "parent": "head", "compute": 10, "link_mbps": 20, "host": "netns:$PFX-w1"},
  {"name": "w2", "parent": "head", "compute": 10, "link_mbps": 20, "host": "netns:$PFX-w2"},
  {"name": "w1a", "parent": "w1", "compute": 10, "link_mbps": 20, "host": "netns:$PFX-w1a"},
  {"name": "w1b", "parent": "w1", "compute": 10, "link_mbps": 20, "host": "netns:$PFX-w1b"}]}
EOF

# Cutting head<->w1 (blackhole routes both ways) and mending it.
cut () {
    ip -n "$PFX-head" route "$1" blackhole "${ADDR[w1]}/32" &&
        ip -n "$PFX-w1" route "$1" blackhole "${ADDR[head]}/32"
}
# field DIR PYTHON-EXPRESSION (r: results.json): prints its value.
field () { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]+"/results.json")); print(eval(sys.argv[2]))' "$1" "$2"; }
rows_of () { awk -F, -v n="$2" 'NR > 1 && $2 == n' "$1/tasks.csv" | wc -l; }

# run_cut TAG [ARGS]: a run into $WORK/TAG with the link cut once
# records flow; the rows of w1a and w1b right after the cut are kept in
# $WORK/TAG.at_cut. Sets rc.
run_cut () {
    local tag=$1; shift
    "$TREEFARM" run "$WORK/tree.json" --out "$WORK/$tag" --quiet "$@" \
        >"$WORK/$tag.out" 2>"$WORK/$tag.err" & local ctl=$!
    await_records "$WORK/$tag" 30 || nok "$tag: no record within 30 s"
    cut add || nok "$tag: link head<->w1 cut"
    expect "$tag: the cut drops head->w1" bash -c "! ip netns exec $PFX-head ping -c 1 -W 1 ${ADDR[w1]} >/dev/null 2>&1"
    expect "$tag: w1a still reaches head" reach w1a head
    sleep 1.1   # tasks.csv is flushed every second
    echo "$(rows_of "$WORK/$tag" w1a) $(rows_of "$WORK/$tag" w1b)" >"$WORK/$tag.at_cut"
    wait "$ctl"; rc=$?
    cut del || nok "$tag: link head<->w1 mended"
    expect "$tag: exit status 0 (got $rc)" test "$rc" = 0
    [ "$rc" = 0 ] || tail -5 "$WORK/$tag.err"
    expect "$tag: every task id completed exactly once" tasks_exactly_once "$WORK/$tag" 300
    # Not computed_sums_to: a lost node's counters may count tasks whose
    # DONEs died with the link; tasks_exactly_once holds it to its rows.
    expect "$tag: completed 300, no duplicate, status complete" \
        test "$(field "$WORK/$tag" 'r["completed"], r["duplicates"], r["status"]')" = "(300, 0, 'complete')"
    expect "$tag: no node process outlives the run" no_node_alive "$WORK/$tag"
}

LOST='sorted(x if isinstance(x, str) else x["name"] for x in r.get("lost", []))'
MOVES='sorted((m["node"], m["from"], m["to"]) for m in r.get("moves", []))'
PARENT='{x["name"]: (x.get("parent"), bool(x.get("lost"))) for x in r["nodes"]}'

# Without --adapt: w1's children are lost with it.
run_cut static
lost=$(field "$WORK/static" "$LOST")
expect "static: lost is w1, w1a, w1b (got $lost)" test "$lost" = "['w1', 'w1a', 'w1b']"
moves=$(field "$WORK/static" "$MOVES")
expect "static: no move (got $moves)" test "$moves" = "[]"

# With --adapt: w1 alone is lost; w1a and w1b move under head and go on.
run_cut adapt --adapt
if grep -q "unknown event" "$WORK/adapt.err"; then
    echo "  note: the node's core refuses an event: $(grep -m1 "unknown event" "$WORK/adapt.err")"
fi
lost=$(field "$WORK/adapt" "$LOST")
expect "adapt: lost is exactly w1 (got $lost)" test "$lost" = "['w1']"
moves=$(field "$WORK/adapt" "$MOVES")
expect "adapt: w1a and w1b moved from w1 to head (got $moves)" \
    test "$moves" = "[('w1a', 'w1', 'head'), ('w1b', 'w1', 'head')]"
for n in w1a w1b; do
    got=$(field "$WORK/adapt" "$PARENT[\"$n\"]")
    expect "adapt: $n's parent is head, not lost (got $got)" test "$got" = "('head', False)"
done
read -r a0 b0 <"$WORK/adapt.at_cut"
a1=$(rows_of "$WORK/adapt" w1a) b1=$(rows_of "$WORK/adapt" w1b)
expect "adapt: w1a computed after the move ($a0 rows after the cut, $a1 at the end)" test "$a1" -gt "$a0"
expect "adapt: w1b computed after the move ($b0 rows after the cut, $b1 at the end)" test "$b1" -gt "$b0"

cleanup
trap - EXIT
left=$(ip netns list | grep -c "^$PFX-")
expect "the namespaces are removed ($left left)" test "$left" = 0
expect "the bridge is removed" bash -c "! ip link show $BRIDGE >/dev/null 2>&1"
finish
