#!/usr/bin/env bash
# Integration: background load in real mode (node/burner.h) is real
# processes on the node's CPUs that die with the node.
# 1. tests/burner_probe starts a load (L = 2, a job stream, a contender)
#    under `taskset -c 0`: its burner, job generator, contender and jobs
#    exist, run on CPU 0 only (the mask they inherit), use CPU time, and
#    the shared counter sees it; SIGKILL of the probe leaves none of them
#    (the jobs, its grandchildren, included) alive a second later.
# 2. burner_stop kills and reaps them all.
# 3. A real run with a --load file (L = 4: three burners) completes and
#    leaves no load process; SIGKILL of a node whose config's load is a
#    trace (L = 4 again) leaves none.
# 4. A run under a job stream and a contender completes; results.json
#    names both kinds and their realized share.
# Processes are told apart from later ones with the same PID by their
# start time (/proc/PID/stat field 22).
# Runs alone (tests/run.sh): real background load on the CPUs, and rates measured under it.
source "$(dirname "$0")/lib.sh"

PROBE=$BUILD/tests/burner_probe
[ -x "$PROBE" ] || { nok "helper $PROBE missing (make check builds it)"; finish; exit; }
declare -A START   # PID -> its start time, for the processes we watch
probe="" ctl=""
# A script that stops early still kills what it started (the load
# processes die with the probe or the node).
trap '[ -z "$probe" ] || kill -9 "$probe" 2>/dev/null; [ -z "$ctl" ] || kill "$ctl" 2>/dev/null; rm -rf "$WORK"' EXIT

# stat_fields PID: the fields of /proc/PID/stat after the command's ")",
# into the array F (F[0] is field 3, the state); fails if PID is gone.
stat_fields () {
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    read -ra F <<<"${s##*) }"
}
watch_pid () { stat_fields "$1" && START[$1]=${F[19]}; }
# ours_alive PID: the process we watched is still there, and no zombie.
ours_alive () { stat_fields "$1" && [ "${F[0]}" != Z ] && [ "${F[19]}" = "${START[$1]}" ]; }
cpu_ticks () { stat_fields "$1" && echo $((F[11] + F[12])); }
# Datagrams this network namespace has sent (the contender's are most).
udp_out () { awk '$1 == "Udp:" && $2 ~ /^[0-9]/ {print $5}' /proc/net/snmp; }
cpus_of () { sed -n 's/^Cpus_allowed_list:\s*//p' "/proc/$1/status" 2>/dev/null; }

# none_alive SECONDS PID...: within SECONDS none of the PIDs is alive;
# prints those that still are.
none_alive () {
    local limit=$1 i p left=""; shift
    for i in $(seq $((limit * 20 + 1))); do
        left=""
        for p in "$@"; do ours_alive "$p" && left="$left $p"; done
        [ -z "$left" ] && return 0
        sleep 0.05
    done
    echo "  still alive:$left"
    return 1
}

# await_line FILE TEXT: wait up to 10 s for a line starting with TEXT.
await_line () {
    local i
    for i in $(seq 200); do grep -q "^$2" "$1" && return 0; sleep 0.05; done
    return 1
}

PIN=""
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then PIN="taskset -c 0"; fi

# --- 1. the processes, their CPUs, their CPU time, SIGKILL --------------
$PIN "$PROBE" 3 hang >"$WORK/p.out" 2>"$WORK/p.err" & probe=$!
expect "probe: the load started" await_line "$WORK/p.out" started
slot=$(awk '$1 == "slot" {print $2}' "$WORK/p.out")
gen=$(awk '$1 == "generator" {print $2}' "$WORK/p.out")
cont=$(awk '$1 == "contender" {print $2}' "$WORK/p.out")
expect "probe: L = 2 is one burner, plus a generator and a contender ($slot/$gen/$cont)" \
    test "$(echo $slot | wc -w)$(echo $gen | wc -w)$(echo $cont | wc -w)" = 111
for p in $slot $gen $cont; do watch_pid "$p"; done
mask=$(cpus_of "$probe")
for p in $slot $gen $cont; do
    expect "probe: load process $p alive, on the probe's CPUs ($mask, got $(cpus_of "$p"))" \
        test -n "$mask" -a "$(cpus_of "$p")" = "$mask"
done
# Jobs: the generator's children; wait for one (U = 0.5 of a shared CPU).
jobs=""
for i in $(seq 100); do jobs=$(pgrep -P "$gen"); [ -n "$jobs" ] && break; sleep 0.05; done
for p in $jobs; do watch_pid "$p"; done
expect "probe: the generator started jobs ($(echo $jobs | wc -w) alive)" test -n "$jobs"
j=$(echo $jobs | cut -d' ' -f1)
expect "probe: a job runs on the probe's CPUs" test -n "$j" -a "$(cpus_of "${j:-0}")" = "$mask"
before_s=$(cpu_ticks "$slot") before_c=$(cpu_ticks "$cont") before_u=$(udp_out)
expect "probe: the counter is read" await_line "$WORK/p.out" cpu
after_s=$(cpu_ticks "$slot") after_c=$(cpu_ticks "$cont") after_u=$(udp_out)
expect "probe: the burner uses CPU time ($before_s -> $after_s ticks)" \
    test "${after_s:-0}" -gt "${before_s:-0}"
expect "probe: the contender uses CPU time ($before_c -> $after_c ticks)" \
    test "${after_c:-0}" -gt "${before_c:-0}"
expect "probe: the contender sends datagrams ($((after_u - before_u)) sent, over 100)" \
    test $((after_u - before_u)) -gt 100
cpu=$(awk '$1 == "cpu" {print $2}' "$WORK/p.out")
expect "probe: the shared counter saw CPU seconds (${cpu:-none})" \
    python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0.1 else 1)' "${cpu:-0}"
jobs=$(pgrep -P "$gen")   # those alive now, when their grandparent dies
for p in $jobs; do watch_pid "$p"; done
kill -9 "$probe"; wait "$probe" 2>/dev/null
expect "SIGKILL: burner, generator and contender gone within a second" \
    none_alive 1 $slot $gen $cont
expect "SIGKILL: the jobs ($(echo $jobs | wc -w)) gone within a second" none_alive 1 $jobs

# --- 2. burner_stop ------------------------------------------------------
$PIN "$PROBE" 1 stop >"$WORK/s.out" 2>"$WORK/s.err" & probe=$!
await_line "$WORK/s.out" started
pids=$(awk '$1 == "slot" || $1 == "generator" || $1 == "contender" {print $2}' "$WORK/s.out")
for p in $pids; do watch_pid "$p"; done
gen=$(awk '$1 == "generator" {print $2}' "$WORK/s.out")
jobs=""
for i in $(seq 18); do jobs="$jobs $(pgrep -P "$gen")"; sleep 0.05; done
for p in $jobs; do watch_pid "$p"; done
expect "stop: burner_stop returned" await_line "$WORK/s.out" stopped
expect "stop: the probe's load processes are gone, reaped" none_alive 0 $pids
expect "stop: its jobs are gone within a second" none_alive 1 $jobs
expect "stop: the probe has no child left" test -z "$(pgrep -P "$probe")"
kill -9 "$probe"; wait "$probe" 2>/dev/null

# --- 3. a node's load ----------------------------------------------------
cat >"$WORK/solo.json" <<'JSON'
{"name": "solo", "tasks": {"count": 300, "input_mb": 0, "units": 20},
 "platform": {"mode": "real", "matrix_n": 512},
 "tree": [{"name": "solo", "compute": 250}]}
JSON
echo '{"solo": {"steps": [{"at_s": 0, "load": 4.0}], "seed": 3}}' >"$WORK/load.json"

# node_burners CTL: wait for the node of run CTL to have three children;
# prints "NODE CHILD..." (nothing if it never does).
node_burners () {
    local i node kids
    for i in $(seq 200); do
        node=$(pgrep -P "$1" -f treefarm-node | head -1)
        kids=$([ -n "$node" ] && pgrep -P "$node")
        [ "$(echo $kids | wc -w)" = 3 ] && { echo "$node" $kids; return; }
        sleep 0.05
    done
}

# Pinned to one CPU: a description is one CPU's load (node/burner.h).
$PIN "$TREEFARM" run "$WORK/solo.json" --load "$WORK/load.json" --out "$WORK/run" --quiet \
    >"$WORK/run.out" 2>"$WORK/run.err" & ctl=$!
found=$(node_burners "$ctl")
wait "$ctl"; rc=$?
{
    expect "run: exit 0 (got $rc)" test "$rc" = 0
    set -- $found
    node=${1:-}; shift 2>/dev/null
    expect "run: L = 4 is three burners, children of the node ($*)" test $# = 3
    for p in "$@"; do watch_pid "$p"; done
    expect "run: no load process outlives the run" none_alive 1 "$@"
    # The node's load in the config, and SIGKILL of the node mid-run.
    printf 'time_s,load\n0,4\n' >"$WORK/l4.csv"
    python3 - "$WORK/solo.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["tree"][0]["load"] = {"trace": "l4.csv", "seed": 3}
c["tasks"]["count"] = 3000
json.dump(c, open(sys.argv[1], "w"))
PY
    $PIN "$TREEFARM" run "$WORK/solo.json" --out "$WORK/kill" --quiet \
        >"$WORK/kill.out" 2>"$WORK/kill.err" & ctl=$!
    set -- $(node_burners "$ctl")
    node=${1:-}; shift 2>/dev/null
    expect "kill: the node's config load, a trace of L = 4, is three burners ($*)" \
        test $# = 3
    for p in "$@"; do watch_pid "$p"; done
    [ -n "$node" ] && kill -9 "$node"
    expect "kill: SIGKILL of the node leaves no load process a second later" \
        none_alive 1 "$@"
    kill "$ctl" 2>/dev/null; wait "$ctl"
}

# --- 4. a job stream and contenders through a run -------------------------
# The other two kinds through the code users run: the node starts a job
# generator and a contender, the run completes with every task once, and
# results.json names both kinds and a realized background share a load of
# U = 0.5 plus a contender computing half the time cannot fall short of
# on one CPU (counted by the load's own processes: a busy machine only
# slows the node's tasks, not what the load burns).
cat >"$WORK/mixed.json" <<'JSON'
{"solo": {"jobs": {"utilization": 0.5, "demand": {"dist": "exp", "mean_s": 0.05}},
          "contenders": [{"compute": 0.5, "comm": 0.3, "msg_bytes": 800}], "seed": 9}}
JSON
python3 - "$WORK/solo.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
del c["tree"][0]["load"]
c["tasks"]["count"] = 300
json.dump(c, open(sys.argv[1], "w"))
PY
$PIN "$TREEFARM" run "$WORK/solo.json" --load "$WORK/mixed.json" --out "$WORK/mixed" \
    --quiet >"$WORK/mixed.out" 2>"$WORK/mixed.err"
rc=$?
expect "jobs+contenders: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || sed 's/^/    /' "$WORK/mixed.err" | head -5
expect "jobs+contenders: every task once" tasks_exactly_once "$WORK/mixed" 300
expect "jobs+contenders: kind and realized share in results.json" python3 -c '
import json, sys
n = json.load(open(sys.argv[1]))["nodes"][0]
u = n["load"]["utilization"]
print("    kind %s, realized share %.3f" % (n["load"]["kind"], u))
sys.exit(0 if n["load"]["kind"] == "jobs+contenders" and 0.3 <= u <= 1.0 else 1)' \
    "$WORK/mixed/results.json"

finish
