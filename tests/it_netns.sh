#!/usr/bin/env bash
# Integration: a node in a network namespace (docs/deploy.md). Creates a
# namespace joined to this one by a veth pair with a /30 of 198.19.0.0/17
# (in the benchmarking range 198.18.0.0/15, clear of the testbed's
# 198.18.0.0/16), and runs a tree whose root is local, whose child is
# netns:NAME and whose grandchild is local again: every task completes
# once, the child runs inside the namespace and reaches the controller
# over ipc in a private 0700 directory, removed afterwards; a namespace
# that does not exist fails with exit 2 naming the node. The namespace is
# removed on every exit.
# Runs alone (tests/run.sh, group netns): network namespaces, veths and tc on the host, each script in its own address range.
source "$(dirname "$0")/lib.sh"

NS=tf-it-netns-$$
OUTSIDE=tfn$$a
INSIDE=tfn$$b
need_package iproute2 ip
if ! ip netns add "$NS" 2>"$WORK/netns.err"; then
    skip "network namespaces are not permitted here (ip netns add: $(cat "$WORK/netns.err"));" \
         "no package fixes that: it needs root and a kernel that allows them"
fi
cleanup () {
    ip link del "$OUTSIDE" 2>/dev/null
    ip netns del "$NS" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A /30 of 198.19.0.0/17 no interface here uses yet (198.19.128.0/17 is
# it_reparent_netns's, which runs beside this script).
base=""
for i in $(seq 0 63); do
    third=$(( ($$ + i) % 128 )) fourth=$(( ((($$ / 256) + i) % 64) * 4 ))
    if ! ip -4 -o addr | grep -q " 198\.19\.$third\.\($fourth\|$((fourth + 1))\|$((fourth + 2))\)/"; then
        base=198.19.$third; break
    fi
done
OUT_ADDR=$base.$((fourth + 1)) IN_ADDR=$base.$((fourth + 2))
ip link add "$OUTSIDE" type veth peer name "$INSIDE" &&
    ip link set "$INSIDE" netns "$NS" &&
    ip addr add "$OUT_ADDR/30" dev "$OUTSIDE" && ip link set "$OUTSIDE" up &&
    ip -n "$NS" addr add "$IN_ADDR/30" dev "$INSIDE" && ip -n "$NS" link set "$INSIDE" up &&
    ip -n "$NS" link set lo up
expect "namespace $NS has $IN_ADDR, joined to $OUT_ADDR" \
    test "$(ip -n "$NS" -o -4 addr show scope global | awk '{print $4}')" = "$IN_ADDR/30"

tree_config () {   # namespace count time_scale
    printf '{"name": "netns-tree", "tasks": {"count": %s, "input_mb": 0.1, "units": 1},
 "platform": {"time_scale": %s},
 "tree": [{"name": "R", "compute": 20},
  {"name": "N1", "parent": "R", "compute": 20, "link_mbps": 10, "host": "netns:%s"},
  {"name": "L2", "parent": "N1", "compute": 20, "link_mbps": 10}]}\n' "$2" "$3" "$1"
}
tree_config "$NS" 40 20 >"$WORK/tree.json"
"$TREEFARM" run "$WORK/tree.json" --out "$WORK/run" --quiet >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
expect "netns: exit status 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -5 "$WORK/run.err"
expect "netns: every task id completed exactly once" tasks_exactly_once "$WORK/run" 40
expect "netns: per-node computed sums to 40, no duplicate" computed_sums_to "$WORK/run" 40
expect "netns: no node process outlives the run" no_node_alive "$WORK/run"

# A longer run, looked at while it goes: the child is in the namespace,
# talks to the controller over ipc in a private directory, and its
# parent, local, binds the address that routes to it. Ctrl-C ends it.
tree_config "$NS" 100000 1 >"$WORK/long.json"
"$TREEFARM" run "$WORK/long.json" --out "$WORK/long" --quiet >/dev/null 2>"$WORK/long.err" & ctl=$!
n1="" r=""
for _ in $(seq 100); do
    for p in $(children_of "$ctl"); do
        case "$(ps -o args= -p "$p")" in
            *"--name N1 "*) n1=$p ;;
            *"--name R "*) r=$p ;;
        esac
    done
    [ -n "$n1" ] && [ -n "$r" ] && break
    sleep 0.1
done
sleep 0.5
args=$(ps -o args= -p "$n1" 2>/dev/null)
expect "N1 runs in namespace $NS" test "$(ip netns identify "$n1" 2>/dev/null)" = "$NS"
expect "N1 binds the namespace's address" grep -q -- "--bind $IN_ADDR" <<<"$args"
ipc=$(sed -n 's|.*--controller ipc://\([^ ]*\).*|\1|p' <<<"$args")
expect "N1 reaches the controller over ipc ($ipc)" test -S "$ipc"
expect "the ipc directory is private (0700)" test "$(stat -c %a "$(dirname "$ipc")" 2>/dev/null)" = 700
expect "R binds the address that routes to N1" grep -q -- "--bind $OUT_ADDR" <<<"$(ps -o args= -p "$r")"
kill -INT "$ctl"
wait "$ctl"; rc=$?
expect "interrupted: exit 130 (got $rc)" test "$rc" = 130
expect "interrupted: no node process left" no_node_alive "$WORK/long"
expect "the ipc directory is removed" test ! -e "$(dirname "$ipc")"

# A namespace that does not exist: exit 2, naming the node, nothing started.
tree_config "tf-it-missing-$$" 40 20 >"$WORK/missing.json"
"$TREEFARM" run "$WORK/missing.json" --out "$WORK/missing" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "missing namespace: exit 2 (got $rc)" test "$rc" = 2
expect "missing namespace: names the node" \
    grep -q "tree\[1\] (node \"N1\"): network namespace \"tf-it-missing-$$\" does not exist" "$WORK/e"
expect "missing namespace: nothing started" test ! -e "$WORK/missing/results.json"

finish
