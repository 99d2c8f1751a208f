#!/usr/bin/env bash
# Integration: nodes on ssh hosts (docs/deploy.md). Starts its own sshd on
# a free loopback port with a throwaway host key and client key, and a
# tree whose root is local and whose two children are ssh://USER@127.0.0.1:
# PORT: runs with --ssh-config complete every task once, with and without
# --push-binary (which copies once, then finds the binary in the cache);
# a host where nothing listens fails with exit 2 naming the node and
# quoting ssh; a controller killed with SIGKILL leaves no node behind.
# Hosts named by Host aliases of a generated ssh config (ssh -G decides
# where they go): a run completes, saying each node's address once; an
# alias whose HostName does not resolve, and a config ssh refuses, fail
# with exit 2 naming the node and the alias.
# CURVE (docs/security.md): an ssh run is CURVE by default (--no-curve
# turns it off); each remote node's certificate file is mode 0600 while it
# runs and removed when it ends, after a run and after a controller killed
# with SIGKILL. It installs nothing: scripts/install-deps.sh installs
# openssh-server.
source "$(dirname "$0")/lib.sh"

SSHD=/usr/sbin/sshd
need_package openssh-server "$SSHD"
need_package openssh-client ssh ssh-keygen

D=$WORK/ssh
mkdir -p "$D"
USER_NAME=$(id -un)
USER_HOME=$(getent passwd "$USER_NAME" | cut -d: -f6)
free_port () {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
PORT=$(free_port)
ssh-keygen -q -t ed25519 -N '' -C treefarm-it-host -f "$D/host_key"
ssh-keygen -q -t ed25519 -N '' -C treefarm-it-client -f "$D/client_key"
cp "$D/client_key.pub" "$D/authorized_keys"
# IPv6 loopback too, where this machine has it.
HAVE_V6=0
python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null && HAVE_V6=1
cat >"$D/sshd_config" <<EOF
ListenAddress 127.0.0.1
$([ "$HAVE_V6" = 1 ] && echo "ListenAddress ::1")
Port $PORT
HostKey $D/host_key
AuthorizedKeysFile $D/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile $D/sshd.pid
EOF
echo "[127.0.0.1]:$PORT,[::1]:$PORT $(cut -d' ' -f1,2 "$D/host_key.pub")" >"$D/known_hosts"
cat >"$D/ssh_config" <<EOF
Host 127.0.0.1 ::1
    Port $PORT
    User $USER_NAME
    IdentityFile $D/client_key
    IdentitiesOnly yes
    UserKnownHostsFile $D/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
EOF

# sshd's privilege separation directory, which the service would create.
[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
"$SSHD" -D -f "$D/sshd_config" -e 2>"$D/sshd.log" & sshd_pid=$!
# The push cache on this host, and whether we created it.
NODE_BIN=$BUILD/bin/treefarm-node
CACHED=$USER_HOME/.cache/treefarm/treefarm-node-$(sha1sum "$NODE_BIN" | cut -d' ' -f1)
cached_before=0; [ -e "$CACHED" ] && cached_before=1
cleanup () {
    kill "$sshd_pid" 2>/dev/null
    wait "$sshd_pid" 2>/dev/null
    if [ "$cached_before" = 0 ]; then
        rm -f "$CACHED"
        rmdir "$(dirname "$CACHED")" 2>/dev/null   # only if we left it empty
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

up=0
for _ in $(seq 50); do
    ssh -F "$D/ssh_config" -o BatchMode=yes 127.0.0.1 true 2>/dev/null && { up=1; break; }
    sleep 0.1
done
expect "sshd (pid $sshd_pid) answers on 127.0.0.1:$PORT" test "$up" = 1
[ "$up" = 1 ] || { tail -5 "$D/sshd.log"; finish; exit; }

# Every process below sshd (its sessions, and the nodes they run).
descendants () { local p; for p in $(pgrep -P "$1"); do echo "$p"; descendants "$p"; done; }
nodes_under_sshd () {
    for p in $(descendants "$sshd_pid"); do ps -o pid=,args= -p "$p" 2>/dev/null; done |
        awk '$2 ~ /treefarm-node/ && $3 == "--name" {print $1}'
}

tree_config () {   # port count time_scale [address of S2's host]
    printf '{"name": "ssh-tree", "tasks": {"count": %s, "input_mb": 0.1, "units": 1},
 "platform": {"time_scale": %s},
 "tree": [{"name": "R", "compute": 20},
  {"name": "S1", "parent": "R", "compute": 20, "link_mbps": 10, "host": "ssh://%s@127.0.0.1:%s"},
  {"name": "S2", "parent": "R", "compute": 20, "link_mbps": 10, "host": "ssh://%s@%s:%s"}]}\n' \
        "$2" "$3" "$USER_NAME" "$1" "$USER_NAME" "${4:-127.0.0.1}" "$1"
}
tree_config "$PORT" 40 20 >"$D/tree.json"

ssh_nodes_computed () {   # dir: S1 and S2 computed tasks between them
    python3 -c 'import json, sys
n = {x["name"]: x["computed"] for x in json.load(open(sys.argv[1]))["nodes"]}
sys.exit(0 if n["S1"] + n["S2"] > 0 else 1)' "$1/results.json"
}

run_ssh_tree () {   # name config options...
    local name=$1 config=$2 out=$WORK/$1; shift 2
    "$TREEFARM" run "$config" --ssh-config "${SSH_CONFIG:-$D/ssh_config}" "$@" \
        --out "$out" --quiet \
        >"$WORK/$name.out" 2>"$WORK/$name.err"
    local rc=$?
    expect "$name: exit status 0 (got $rc)" test "$rc" = 0
    [ "$rc" = 0 ] || { tail -5 "$WORK/$name.err"; return; }
    expect "$name: every task id completed exactly once" tasks_exactly_once "$out" 40
    expect "$name: per-node computed sums to 40, no duplicate" computed_sums_to "$out" 40
    expect "$name: the ssh nodes computed tasks" ssh_nodes_computed "$out"
    expect "$name: no node process outlives the run" no_node_alive "$out"
    expect "$name: results.json says curve ${CURVE_WANT:-True}" test "$(python3 -c '
import json, sys; print(json.load(open(sys.argv[1]))["curve"])' "$out/results.json")" \
        = "${CURVE_WANT:-True}"
    sleep 0.3
    expect "$name: nothing left under sshd" test -z "$(descendants "$sshd_pid")"
}

run_ssh_tree ssh "$D/tree.json"
expect "ssh: sshd took our key" grep -q "Accepted publickey for $USER_NAME" "$D/sshd.log"
CURVE_WANT=False run_ssh_tree no-curve "$D/tree.json" --no-curve

# The remote certificate files of a run's nodes (from the nodes' command
# lines under sshd): each node's, mode 0600, while it runs; none after.
remote_certs () {
    for p in $(nodes_under_sshd); do ps -o args= -p "$p"; done |
        sed -n 's/.* --cert \([^ ]*\).*/\1/p'
}
wait_remote_nodes () {   # until both remote nodes run (10 s at most)
    local i remote
    for i in $(seq 100); do
        remote=$(nodes_under_sshd)
        [ "$(echo $remote | wc -w)" = 2 ] && { echo $remote; return; }
        sleep 0.1
    done
}
# 4000 tasks: about 3 s of wall time, long enough to look at the nodes
# while they run. 400 took about 0.35 s, and on a loaded machine the
# check found one remote node or none before they exited (with main's
# binaries too).
tree_config "$PORT" 4000 20 >"$D/certs.json"
"$TREEFARM" run "$D/certs.json" --ssh-config "$D/ssh_config" --out "$WORK/certs" --quiet \
    >/dev/null 2>"$WORK/certs.err" & ctl=$!
remote=$(wait_remote_nodes)
certs=$(remote_certs)
# ssh carries no environment: the remote script turns glibc's tcache off
# for the node itself (overlay/util.h, TF_MALLOC_TUNABLE).
for p in $remote; do
    expect "tcache: remote node $p started with GLIBC_TUNABLES=glibc.malloc.tcache_count=0" \
        grep -qz '^GLIBC_TUNABLES=glibc.malloc.tcache_count=0$' "/proc/$p/environ"
done
expect "certificates: each remote node was given one (got: $(echo $certs))" \
    test "$(echo $certs | wc -w)" = 2
for f in $certs; do
    expect "certificates: $f is mode 600 while its node runs" \
        test "$(stat -c %a "$f" 2>/dev/null)" = 600
    expect "certificates: $f is the node's, with its secret key" grep -q "secret-key" "$f"
done
wait $ctl; rc=$?
expect "certificates: the run completes (exit $rc)" test "$rc" = 0
sleep 0.3
for f in $certs; do
    expect "certificates: $f removed after the run" test ! -e "$f"
done

[ "$cached_before" = 1 ] || expect "push: the cache is empty before" test ! -e "$CACHED"
run_ssh_tree push "$D/tree.json" --push-binary
expect "push: the binary is in the cache under its SHA-1" test -x "$CACHED"
expect "push: mode 755" test "$(stat -c %a "$CACHED" 2>/dev/null)" = 755
expect "push: the same bytes" cmp -s "$NODE_BIN" "$CACHED"
inode=$(stat -c %i "$CACHED" 2>/dev/null)
run_ssh_tree push-again "$D/tree.json" --push-binary
expect "push again: not copied again" test "$(stat -c %i "$CACHED" 2>/dev/null)" = "$inode"

# An IPv6 host, in brackets: the node binds ::1 and reaches the
# controller's control socket on [::1].
if [ "$HAVE_V6" = 1 ]; then
    tree_config "$PORT" 40 20 "[::1]" >"$D/tree6.json"
    run_ssh_tree ipv6 "$D/tree6.json"
else
    skip_part "IPv6 host: this machine has no IPv6 loopback (::1)"
fi

# A port where nothing listens: exit 2 before anything starts, naming the
# node and quoting ssh.
tree_config "$(free_port)" 40 20 >"$D/down.json"
"$TREEFARM" run "$D/down.json" --ssh-config "$D/ssh_config" --out "$WORK/down" \
    >"$WORK/down.out" 2>"$WORK/down.err"
rc=$?
expect "unreachable: exit 2 (got $rc)" test "$rc" = 2
expect "unreachable: names the node and quotes ssh" \
    grep -q 'tree\[1\] (node "S1"): cannot reach ssh://.*(ssh exited with status 255): ssh: connect to host 127.0.0.1 port [0-9]*: Connection refused' "$WORK/down.err"
expect "unreachable: nothing started" test ! -e "$WORK/down/results.json"
grep -q "cannot reach" "$WORK/down.err" || cat "$WORK/down.err"

# Hosts as users write them: Host aliases of the ssh config in use
# (docs/deploy.md, "Host aliases"). tf-lo's HostName, Port, User and
# IdentityFile are the config's; tf-lo2's Port 1 (nothing listens there)
# gives way to the URL's. S1 has a child, so it binds what ssh -G says
# tf-lo is (127.0.0.1, given with --bind), not the alias, which no
# resolver knows. tf-gone's HostName does not resolve.
cat >"$D/alias_config" <<EOF
Host tf-lo tf-lo2
    HostName 127.0.0.1
    User $USER_NAME
    IdentityFile $D/client_key
    IdentitiesOnly yes
    UserKnownHostsFile $D/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
Host tf-lo
    Port $PORT
Host tf-lo2
    Port 1
Host tf-gone
    HostName nothere.invalid
EOF
alias_config () {   # S1's host
    printf '{"name": "ssh-alias", "tasks": {"count": 40, "input_mb": 0.1, "units": 1},
 "platform": {"time_scale": 20},
 "tree": [{"name": "R", "compute": 20},
  {"name": "S1", "parent": "R", "compute": 20, "link_mbps": 10, "host": "%s"},
  {"name": "S2", "parent": "S1", "compute": 20, "link_mbps": 10, "host": "ssh://tf-lo2:%s"}]}\n' \
        "$1" "$PORT"
}
alias_config ssh://tf-lo >"$D/alias.json"
SSH_CONFIG=$D/alias_config run_ssh_tree alias "$D/alias.json"
expect "alias: one address line per ssh node" test "$(grep -c ' -> ' "$WORK/alias.err")" = 2
expect "alias: S1's address is tf-lo's HostName, Port and User" \
    grep -qx "treefarm: S1: ssh://tf-lo -> $USER_NAME@127.0.0.1:$PORT" "$WORK/alias.err"
expect "alias: S2's port is the URL's, not the config's" \
    grep -qx "treefarm: S2: ssh://tf-lo2:$PORT -> $USER_NAME@127.0.0.1:$PORT" "$WORK/alias.err"

refused_alias () {   # name config S1-host: exit 2, nothing started; the message in name.err
    alias_config "$3" >"$D/$1.json"
    "$TREEFARM" run "$D/$1.json" --ssh-config "$2" --out "$WORK/$1" >"$WORK/$1.out" \
        2>"$WORK/$1.err"
    local rc=$?
    expect "$1: exit 2 (got $rc)" test "$rc" = 2
    expect "$1: nothing started" test ! -e "$WORK/$1"
}
refused_alias gone "$D/alias_config" ssh://tf-gone
expect "gone: names the node, the alias and its HostName" grep -q \
    'tree\[1\] (node "S1"): ssh://tf-gone: cannot resolve "nothere.invalid" here: .*gives "tf-gone" the HostName nothere.invalid (ssh -G)' \
    "$WORK/gone.err"
grep -q nothere.invalid "$WORK/gone.err" || cat "$WORK/gone.err"
{ cat "$D/alias_config"; echo "    NoSuchOption yes"; } >"$D/bad_config"
refused_alias badconf "$D/bad_config" ssh://tf-lo
expect "badconf: names the node and the alias, quotes ssh -G" grep -q \
    'tree\[1\] (node "S1"): ssh://tf-lo: ssh -G tf-lo failed (ssh exited with status 255): .*Bad configuration option' \
    "$WORK/badconf.err"
grep -q "ssh -G" "$WORK/badconf.err" || cat "$WORK/badconf.err"

# The controller killed with SIGKILL mid-run: its ssh clients die with it
# (parent-death signal), their stdin closes, and each remote shell stops
# its node.
tree_config "$PORT" 100000 1 >"$D/long.json"
"$TREEFARM" run "$D/long.json" --ssh-config "$D/ssh_config" --out "$WORK/long" --quiet \
    >/dev/null 2>"$WORK/long.err" & ctl=$!
remote=""
for _ in $(seq 100); do
    remote=$(nodes_under_sshd)
    [ "$(echo $remote | wc -w)" = 2 ] && break
    sleep 0.1
done
expect "controller death: both remote nodes were running (pids: $(echo $remote))" \
    test "$(echo $remote | wc -w)" = 2
killed_certs=$(remote_certs)
expect "controller death: both had a certificate file" \
    test "$(echo $killed_certs | wc -w)" = 2
sleep 0.5
{ kill -KILL "$ctl"; wait "$ctl"; } 2>/dev/null
left=$remote
for _ in $(seq 50); do
    left=$(for p in $remote; do kill -0 "$p" 2>/dev/null && echo "$p"; done)
    [ -z "$left" ] && break
    sleep 0.1
done
expect "controller death: no remote node left (alive: $(echo $left))" test -z "$left"
[ -z "$left" ] || kill -KILL $left 2>/dev/null
sleep 0.3
for f in $killed_certs; do
    expect "controller death: the remote certificate $f removed" test ! -e "$f"
done

kill "$sshd_pid"
wait "$sshd_pid" 2>/dev/null
expect "sshd (pid $sshd_pid) stopped" test -z "$(ps -o pid= -p "$sshd_pid")"
finish
