#!/usr/bin/env bash
# Integration: bad input and failures. A broken config exits 2 naming the
# place; an unknown policy exits 2; Ctrl-C stops every node and exits 130;
# a node killed mid-run fails the run with its name and stops the others.
source "$(dirname "$0")/lib.sh"

"$TREEFARM" run tests/configs/bad/missing_parent.json --out "$WORK/x" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "broken config: exit 2 (got $rc)" test "$rc" = 2
expect "broken config: message names the file" grep -q "missing_parent.json" "$WORK/e"

# IR values that leave a node no compute: the loader takes them (the bound
# prices them), a run refuses them before starting anything.
"$TREEFARM" run tests/configs/bad/ir_recv_no_compute.json --out "$WORK/x" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "IR leaves no compute: exit 2 (got $rc)" test "$rc" = 2
expect "IR leaves no compute: names node and key" grep -q 'node "Lab3"): ir_recv 50 x link_mbps 10' "$WORK/e"

# Hosts: a host the syntax refuses (docs/config.md) is a config error
# naming the node; a local host that is not an address of this machine is
# refused, naming node and host, before any process starts; a local
# address other than 127.0.0.1 runs. (ssh and netns hosts: it_ssh, it_netns.)
hosts_config () {
    printf '{"tasks": {"count": 20, "input_mb": 0.1, "units": 1}, "platform": {"time_scale": 100},
 "tree": [{"name": "A", "compute": 50, "host": "%s"},
  {"name": "B", "parent": "A", "compute": 50, "link_mbps": 10, "host": "%s"}]}\n' "$1" "$2"
}
hosts_config 127.0.0.1 "no such host!" >"$WORK/host1.json"
"$TREEFARM" run "$WORK/host1.json" --out "$WORK/h1" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "malformed host: exit 2 (got $rc)" test "$rc" = 2
expect "malformed host: names node and host" grep -q 'node "B"): host: "no such host!" is not one of' "$WORK/e"
expect "malformed host: nothing started" test ! -e "$WORK/h1/results.json"
hosts_config 127.0.0.1 "no-such-host.invalid" >"$WORK/host1b.json"
"$TREEFARM" run "$WORK/host1b.json" --out "$WORK/h1b" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "unresolvable host: exit 2 (got $rc)" test "$rc" = 2
expect "unresolvable host: names node and host" grep -q 'node "B"): host "no-such-host.invalid" cannot be resolved' "$WORK/e"
# TEST-NET-3 (RFC 5737): an address no machine here has.
hosts_config 203.0.113.1 127.0.0.1 >"$WORK/host2.json"
"$TREEFARM" measure "$WORK/host2.json" --out "$WORK/h2.json" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "non-local host (measure): exit 2 (got $rc)" test "$rc" = 2
expect "non-local host: names node and host" grep -q 'node "A"): host "203.0.113.1" is not an address of this machine' "$WORK/e"
"$TREEFARM" run "$WORK/host2.json" --out "$WORK/h2" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "non-local host (run): exit 2 (got $rc)" test "$rc" = 2
# A (the parent, which binds) on localhost, a name; B on 127.0.0.2.
hosts_config localhost 127.0.0.2 >"$WORK/host3.json"
"$TREEFARM" run "$WORK/host3.json" --out "$WORK/h3" --quiet >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "local hosts localhost and 127.0.0.2: exit 0 (got $rc)" test "$rc" = 0
expect "local hosts: every task once" tasks_exactly_once "$WORK/h3" 20
# IPv6 loopback, where this machine has it.
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
    hosts_config ::1 ::1 >"$WORK/host4.json"
    "$TREEFARM" run "$WORK/host4.json" --out "$WORK/h4" --quiet >"$WORK/o" 2>"$WORK/e"
    rc=$?
    expect "IPv6 host ::1: exit 0 (got $rc)" test "$rc" = 0
else
    skip_part "IPv6 host ::1: this machine has no IPv6 loopback"
fi

"$TREEFARM" run configs/chain4.json --policy nosuch --out "$WORK/x" >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "unknown policy: exit 2 (got $rc)" test "$rc" = 2
expect "unknown policy: message lists the known ones" grep -q "fcfs" "$WORK/e"

"$TREEFARM" run --no-such-flag >"$WORK/o" 2>"$WORK/e"
expect "unknown flag: exit 2" test "$?" = 2
"$TREEFARM" run "$WORK/does-not-exist.json" >"$WORK/o" 2>"$WORK/e"
expect "missing config file: exit 2" test "$?" = 2
expect "missing config file: named" grep -q "does-not-exist.json" "$WORK/e"
expect "treefarm --help" "$TREEFARM" --help
expect "treefarm run --help" "$TREEFARM" run --help
expect "treefarm-node --help" "$(dirname "$TREEFARM")/treefarm-node" --help

# A long run (fork7 at scale 1 would take minutes), interrupted.
sed -e 's/"time_scale": *[0-9.]*/"time_scale": 1/' configs/fork7.json >"$WORK/long.json"
"$TREEFARM" run "$WORK/long.json" --out "$WORK/int" --quiet >"$WORK/o" 2>"$WORK/e" & ctl=$!
sleep 2
nodes=$(children_of $ctl)
expect "interrupt: 7 node processes were running" test "$(echo $nodes | wc -w)" = 7
kill -INT $ctl
wait $ctl; rc=$?
expect "interrupt: exit 130 (got $rc)" test "$rc" = 130
expect "interrupt: results.json says interrupted" grep -q '"interrupted"' "$WORK/int/results.json"
alive=0; for p in $nodes; do kill -0 "$p" 2>/dev/null && alive=1; done
expect "interrupt: no node process left" test "$alive" = 0

# The root dies mid-run: the run fails, naming it (a node other than the
# root is survived: tests/it_recovery.sh).
"$TREEFARM" run "$WORK/long.json" --out "$WORK/kill" --quiet >"$WORK/o" 2>"$WORK/e" & ctl=$!
sleep 2
victim=$(for p in $(children_of $ctl); do ps -o pid=,args= -p "$p"; done | awk '/--name Lab0( |$)/ {print $1}')
nodes=$(children_of $ctl)
expect "root death: found Lab0's process" test -n "$victim"
kill -KILL $victim
wait $ctl; rc=$?
expect "root death: exit 1 (got $rc)" test "$rc" = 1
expect "root death: error names the root Lab0" grep -q "the root node Lab0 lost" "$WORK/e"
alive=0; for p in $nodes; do kill -0 "$p" 2>/dev/null && alive=1; done
expect "root death: no node process left" test "$alive" = 0

finish
