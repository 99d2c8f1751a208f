#!/usr/bin/env bash
# The start-up of a tree: wall seconds from `treefarm run` to every node
# ready (results.json "startup_s": from the session's start, before the
# up-front checks, to START) for trees of 8, 32 and 64 nodes, started
#   - by one srun step (--slurm, inside `salloc -n N`),
#   - by one ssh session per node to this machine (ssh://127.0.0.1),
#   - as local child processes (the reference),
# and a bare `srun -n N true` in the same allocation (wall seconds),
# with CURVE as each runs by default (on for slurm and ssh, off local).
# Starts its own Slurm (scripts/slurm-private.sh) and its own sshd on a
# free loopback port, and stops both by PID. Needs root and make.
#
#   scripts/bench-slurm-startup.sh [REPEATS] > table.md
#
# Prints a markdown table of the medians over REPEATS runs (default 3);
# docs/deploy.md, "Start-up", quotes it.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
BUILD=${BUILD:-build}
TREEFARM=$PWD/$BUILD/bin/treefarm
[ -x "$TREEFARM" ] || { echo "bench-slurm-startup: build first (make)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-slurm-startup: slurmd needs root" >&2; exit 2; }
source scripts/slurm-private.sh

D=$(mktemp -d /tmp/treefarm-bench-slurm.XXXXXX)
sshd_pid=
cleanup () {
    slurm_private_stop
    [ -z "$sshd_pid" ] || { kill "$sshd_pid" 2>/dev/null; wait "$sshd_pid" 2>/dev/null || true; }
    rm -rf "$D"
}
trap cleanup EXIT
slurm_private_start "$D/slurm" || { echo "bench-slurm-startup: Slurm did not come up" >&2; exit 1; }

# An sshd of our own on a free loopback port; a throwaway client key.
PORT=$(slurm_private_port)
ssh-keygen -q -t ed25519 -N '' -f "$D/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$D/client_key"
cat >"$D/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $PORT
HostKey $D/host_key
AuthorizedKeysFile $D/client_key.pub
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
MaxStartups 200
MaxSessions 200
PidFile $D/sshd.pid
EOF
echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$D/host_key.pub")" >"$D/known_hosts"
cat >"$D/ssh_config" <<EOF
Host 127.0.0.1
    Port $PORT
    User $(id -un)
    IdentityFile $D/client_key
    IdentitiesOnly yes
    UserKnownHostsFile $D/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
EOF
mkdir -p /run/sshd
/usr/sbin/sshd -D -f "$D/sshd_config" -e 2>"$D/sshd.log" & sshd_pid=$!

# config N HOST: a random tree of N nodes, 3 levels, N tiny tasks, every
# node on HOST.
config () {
    scripts/tree-config.py --random "$1" --depth 3 --count "$1" --name "start$1" |
        python3 -c 'import json, sys
c = json.load(sys.stdin)
for n in c["tree"]:
    n["host"] = sys.argv[1]
json.dump(c, sys.stdout)' "$2"
}
startup () { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["startup_s"])' "$1/results.json"; }
median () { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "| nodes | bare \`srun -n N true\` | one srun step (--slurm) | ratio | one ssh session a node | local processes |"
echo "|---|---|---|---|---|---|"
for n in 8 32 64; do
    config "$n" local >"$D/local$n.json"
    config "$n" ssh://127.0.0.1 >"$D/ssh$n.json"
    bare=() slurm=() ssh=() local=()
    for r in $(seq "$REPEATS"); do
        out=$D/run-$n-$r
        # Both in one allocation: the bare step, then the run.
        b=$(salloc -Q -n "$n" bash -c '
            t0=$EPOCHREALTIME; srun -n "$1" true; t1=$EPOCHREALTIME
            "$2" run "$3" --slurm --quiet --out "$4" >/dev/null 2>"$4.err"
            echo "$t0 $t1"' _ "$n" "$TREEFARM" "$D/local$n.json" "$out-slurm")
        bare+=("$(echo "$b" | awk '{printf "%.3f", $2 - $1}')")
        slurm+=("$(startup "$out-slurm")")
        "$TREEFARM" run "$D/ssh$n.json" --ssh-config "$D/ssh_config" --quiet \
            --out "$out-ssh" >/dev/null 2>"$out-ssh.err"
        ssh+=("$(startup "$out-ssh")")
        "$TREEFARM" run "$D/local$n.json" --quiet --out "$out-local" >/dev/null \
            2>"$out-local.err"
        local+=("$(startup "$out-local")")
    done
    mb=$(median "${bare[@]}") ms=$(median "${slurm[@]}")
    printf '| %d | %.2f s | %.2f s | %.2f | %.2f s | %.2f s |\n' "$n" "$mb" "$ms" \
        "$(echo "$ms $mb" | awk '{print $1 / $2}')" "$(median "${ssh[@]}")" \
        "$(median "${local[@]}")"
done
