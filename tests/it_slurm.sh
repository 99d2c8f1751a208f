#!/usr/bin/env bash
# Integration: a tree inside a Slurm allocation (docs/deploy.md, "Slurm").
# Starts its own Slurm on this machine (scripts/slurm-private.sh): munged
# with a private key and socket, slurmctld and slurmd from Debian's
# slurm-wlm on free loopback ports, with a generated slurm.conf (one node,
# this machine, 64 CPUs declared so that 64 tasks fit) and private state,
# spool and log directories; no systemd; everything it started stopped by
# PID at the end. Then:
#   - refusals, exit 2 and nothing started: --slurm outside an allocation,
#     more tree nodes than the allocation holds, an allocation whose host
#     does not resolve, host "slurm" without --slurm;
#   - salloc -n 5, farm5 through one srun step: 200 gzip -9 commands,
#     every output checked, CURVE on, no certificate file left; the step
#     has one task (one host), which forks the five nodes;
#   - one task of the step killed: its node is lost, its tasks go out
#     again, the run completes;
#   - scancel of the job mid-run: the root is lost, exit 1, the journal
#     kept; --resume in a new allocation finishes every task once;
#   - a job whose time limit comes before the bag's expected end: said;
#   - --tree auto --fanout 2: one node per host (one here), its slots the
#     host's CPUs; refused without --slurm;
#   - a root that only relays ("slots": 0) under Slurm.
# scripts/install-deps.sh installs slurm-wlm and munge: under CI a missing
# one is a failure.
source "$(dirname "$0")/lib.sh"

need_package slurm-wlm /usr/sbin/slurmctld /usr/sbin/slurmd srun salloc scontrol scancel sinfo
need_package munge /usr/sbin/munged
# slurmd starts the tasks of every user, and so runs as root (CI does).
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start a step's tasks"

source "$(dirname "$0")/../scripts/slurm-private.sh"
S=$WORK/slurm
HOST=$(hostname -s)
cleanup () {
    slurm_private_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
up=0
slurm_private_start "$S" && up=1
expect "a private Slurm is up (sinfo: idle)" test "$up" = 1
if [ "$up" != 1 ]; then tail -n 5 "$S"/log/*; finish; exit 1; fi

# 200 small files of words.
mkdir -p "$WORK/data"
python3 - "$WORK/data" <<'PY'
import os, random, sys
random.seed(25)
for i in range(200):
    words = [random.choice(["alpha", "beta", "gamma", "tree", "farm"]) for _ in range(random.randint(0, 3000))]
    open(os.path.join(sys.argv[1], "f%03d.txt" % i), "w").write(" ".join(words))
PY
GZ='gzip -9 -n -c {} > {/}.gz'
BAG=(--command "$GZ" --inputs "$WORK/data/*.txt")

# outputs_right DIR N: every task ok and its output what gzip makes.
outputs_right () {
    python3 - "$WORK/data" "$1" "$2" <<'PY'
import csv, hashlib, os, subprocess, sys
data, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = list(csv.DictReader(open(os.path.join(out, "tasks.csv"))))
files = sorted(os.listdir(data))
bad = 0
for r in rows:
    name = files[int(r["id"]) - 1]
    path = os.path.join(out, "tasks", r["id"], name + ".gz")
    got = open(path, "rb").read() if os.path.exists(path) else b""
    want = subprocess.run(["gzip", "-9", "-n", "-c", os.path.join(data, name)],
                          capture_output=True, check=True).stdout
    if hashlib.sha256(got).digest() != hashlib.sha256(want).digest() or r["status"] != "ok":
        bad += 1
        if bad < 5: print("  task", r["id"], name, "differs or failed:", r["status"])
if len(rows) != n: print("  %d rows, not %d" % (len(rows), n))
sys.exit(1 if bad or len(rows) != n else 0)
PY
}

# --- refusals: exit 2, nothing started ---------------------------------------
refused () {   # WHAT DIR PATTERN RC
    expect "$1: exit 2 (got $4)" test "$4" = 2
    expect "$1: says why" grep -q -e "$3" "$2.err"
    [ "$4" = 2 ] && grep -q -e "$3" "$2.err" || tail -3 "$2.err"
    expect "$1: nothing started (no results directory)" test ! -e "$2"
}
out=$WORK/outside
"$TREEFARM" run configs/farm5.json --slurm --quiet --out "$out" "${BAG[@]}" >/dev/null \
    2>"$out.err"
refused "--slurm outside an allocation" "$out" "not inside a Slurm allocation.*--slurm-args" $?
out=$WORK/small
salloc -Q -n 2 "$TREEFARM" run configs/farm5.json --slurm --quiet --out "$out" \
    "${BAG[@]}" >/dev/null 2>"$out.err"
refused "5 nodes in an allocation of 2 CPUs" "$out" \
    "more tree nodes than the allocation holds: job [0-9]* has 1 host and 2 CPUs" $?
out=$WORK/cpt
salloc -Q -n 3 -c 2 "$TREEFARM" run configs/farm5.json --slurm --quiet --out "$out" \
    "${BAG[@]}" >/dev/null 2>"$out.err"
refused "5 nodes of 2 CPUs each (salloc -c 2) in 6 CPUs" "$out" \
    "has 1 host and 6 CPUs, 2 a node (SLURM_CPUS_PER_TASK), so 3 nodes at most" $?
out=$WORK/unresolved
SLURM_JOB_ID=999999 SLURM_JOB_NODELIST=tf-nowhere.invalid,tf-nowhere2.invalid SLURM_JOB_CPUS_PER_NODE="4(x2)" \
    "$TREEFARM" run configs/farm5.json --slurm --quiet --out "$out" "${BAG[@]}" >/dev/null \
    2>"$out.err"
refused "an allocation whose hosts do not resolve" "$out" \
    "host tf-nowhere.invalid of the allocation (job 999999): cannot resolve" $?
out=$WORK/noflag
sed -e 's/"compute": 100}/"compute": 100, "host": "slurm"}/' configs/farm5.json >"$WORK/farm5-slurm.json"
salloc -Q -n 5 "$TREEFARM" run "$WORK/farm5-slurm.json" --quiet --out "$out" \
    "${BAG[@]}" >/dev/null 2>"$out.err"
refused "host slurm without --slurm" "$out" "host slurm places the node .*give --slurm" $?

out=$WORK/inside
salloc -Q -n 5 "$TREEFARM" run configs/farm5.json --slurm-args '-n 5' --quiet --out "$out" \
    "${BAG[@]}" >/dev/null 2>"$out.err"
refused "--slurm-args inside an allocation" "$out" \
    "--slurm-args asks Slurm for an allocation, and this runs in one (job [0-9]*): give --slurm" $?

# --- --slurm-args: an allocation asked for, the run inside it ------------------
out=$WORK/asked
"$TREEFARM" run configs/farm5.json --slurm-args '-Q -n 5 -J tf-it-asked' --quiet --out "$out" \
    --command "$GZ" --inputs "$WORK/data/f00*.txt" >"$out.out" 2>"$out.err"
rc=$?
expect "--slurm-args '-Q -n 5': exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -n 5 "$out.err"
expect "--slurm-args: ten tasks, every one once, in a job of its own" \
    eval 'tasks_exactly_once "$out" 10 commands && grep -q " -> job [0-9]*, host" "$out.err"'

# --- a step whose tasks cannot run the node: the run fails, naming it ----------
out=$WORK/broken
TREEFARM_NODE_WRAPPER=false salloc -Q -n 5 "$TREEFARM" run configs/farm5.json --slurm --quiet \
    --out "$out" "${BAG[@]}" >/dev/null 2>"$out.err"
rc=$?
expect "tasks that exit at once (wrapper false): exit 1 (got $rc)" test "$rc" = 1
expect "  ... naming the node and its srun step" \
    grep -q "node head (srun step, pid [0-9]*) exited with status 1" "$out.err"

# --- 200 gzip -9 through one srun step ---------------------------------------
out=$WORK/gz
mkdir -p "$WORK/tmp"
TMPDIR=$WORK/tmp salloc -Q -n 5 "$TREEFARM" run configs/farm5.json --slurm --quiet \
    --out "$out" --command "$GZ" --inputs "$WORK/data/*.txt" >"$out.out" 2>"$out.err"
rc=$?
expect "salloc -n 5, farm5 --slurm, 200 gzip: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -5 "$out.err"
expect "gzip: every task recorded exactly once" tasks_exactly_once "$out" 200 commands
expect "gzip: every output equals gzip run directly (sha256)" outputs_right "$out" 200
expect "gzip: every node placed on the allocation's host, ranks 0 to 4" python3 - "$out.err" "$HOST" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if " -> job " in l]
ranks = sorted(int(re.search(r"rank (\d+)", l).group(1)) for l in lines)
ok = ranks == list(range(5)) and all("host %s (127.0.0.1)" % sys.argv[2] in l for l in lines)
if not ok: print("  placements:", lines)
sys.exit(0 if ok else 1)
PY
expect "gzip: computed below the root too" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/tasks.csv")))
sys.exit(0 if any(r["node"] != "head" for r in rows) else 1)' "$out"
expect "gzip: CURVE on by default" python3 -c '
import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["curve"] is True else 1)' \
    "$out/results.json"
expect "gzip: results.json says how long the start-up took (startup_s)" python3 -c '
import json, sys; s = json.load(open(sys.argv[1]))["startup_s"]; sys.exit(0 if s > 0 else 1)' \
    "$out/results.json"
expect "gzip: no certificate file left in the nodes' TMPDIR" \
    test -z "$(ls -A "$WORK/tmp")"
expect "gzip: no node process outlives the run" no_node_alive "$out"

# task_pid RANK [TRIES]: the pid of task RANK of a step of this Slurm
# (its environment says so; not a node it forked, whose parent is a
# treefarm-node), looking TRIES times 50 ms apart (default 100: up to 5 s).
task_pid () {
    local p
    for _ in $(seq "${2:-100}"); do
        for p in $(pgrep -x treefarm-node); do
            [ "$(cat "/proc/$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)/comm" \
                 2>/dev/null)" = treefarm-node ] && continue
            [ "$( { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null |
                   grep -cx -e "SLURM_PROCID=$1" -e "SLURM_CONF=$S/slurm.conf")" = 2 ] &&
                { echo "$p"; return; }
        done
        sleep 0.05
    done
}
# node_pid RANK: the process of the step's node of that rank, in
# $victim, and task 0's nodes in KIDS. All five nodes are on this one
# host, so task 0 starts them: its process forks one child a node, in
# rank order.
node_pid () {
    local task
    victim= KIDS=()
    task=$(task_pid 0)
    [ -n "$task" ] || return 0
    for _ in $(seq 100); do
        mapfile -t KIDS < <(pgrep -P "$task" -x treefarm-node | sort -n)
        [ "${#KIDS[@]}" -gt "$1" ] && { victim=${KIDS[$1]}; return; }
        sleep 0.05
    done
}
SLOW=(--command "sleep 0.05; $GZ" --inputs "$WORK/data/*.txt")

# --- one task of the step killed: a lost node --------------------------------
out=$WORK/lost
salloc -Q -n 5 "$TREEFARM" run configs/farm5.json --slurm --quiet --out "$out" "${SLOW[@]}" \
    >"$out.out" 2>"$out.err" & ctl=$!
await_records "$out" 30
node_pid 4
[ -n "$victim" ] && kill -9 "$victim"
expect "the node of rank 4 (w1b), forked by task 0 of the step, found" test -n "$victim"
expect "task 0 of the step forked the five nodes (got ${#KIDS[@]})" test "${#KIDS[@]}" = 5
expect "  ... and there is no task 1 (one task on the one host)" test -z "$(task_pid 1 1)"
wait "$ctl"
rc=$?
expect "w1b killed: the run completes, exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -n 5 "$out.err"
expect "w1b killed: lost, said so" grep -q "node w1b lost" "$out.err"
expect "w1b killed: results.json marks it lost" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if [n for n in r["nodes"] if n["name"] == "w1b" and n.get("lost")] else 1)' \
    "$out/results.json"
expect "w1b killed: every task recorded exactly once" tasks_exactly_once "$out" 200 commands
expect "w1b killed: every output right" outputs_right "$out" 200

# --- scancel mid-run: the root is lost; --resume finishes -----------------------
out=$WORK/cancel
salloc -Q -n 5 -J tf-it-cancel "$TREEFARM" run configs/farm5.json --slurm --quiet \
    --out "$out" "${SLOW[@]}" >"$out.out" 2>"$out.err" & ctl=$!
await_records "$out" 30
job=$(squeue -h -n tf-it-cancel -o %i)
expect "scancel: the job is found" test -n "$job"
scancel "$job"
wait "$ctl"
rc=$?
expect "scancel: exit 1 (got $rc)" test "$rc" = 1
[ "$rc" = 1 ] || tail -n 5 "$out.err"
expect "scancel: the error names the root and --resume" \
    grep -q "the root node head lost: .*--resume" "$out.err"
grep -q "the root node head lost: .*--resume" "$out.err" ||
    grep -v " slurm -> job " "$out.err" | tail -n 8
expect "scancel: some tasks done, not all" python3 -c '
import csv, sys
n = len(list(csv.DictReader(open(sys.argv[1] + "/tasks.csv"))))
print("  %d of 200 recorded" % n); sys.exit(0 if 0 < n < 200 else 1)' "$out"
salloc -Q -n 5 "$TREEFARM" run configs/farm5.json --slurm --quiet --out "$out" --resume \
    "${SLOW[@]}" >"$out.out2" 2>"$out.err2"
rc=$?
expect "scancel, --resume in a new allocation: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -n 5 "$out.err2"
expect "scancel, --resume: every task recorded exactly once" \
    tasks_exactly_once "$out" 200 commands
expect "scancel, --resume: every output right" outputs_right "$out" 200

# --- the controller killed with SIGKILL: no node left ---------------------------
out=$WORK/killed
salloc -Q -n 5 "$TREEFARM" run configs/farm5.json --slurm --quiet --out "$out" "${SLOW[@]}" \
    >"$out.out" 2>"$out.err" & alloc=$!
await_records "$out" 30
ctl=$(pgrep -P "$alloc" -x treefarm)
expect "controller killed: found" test -n "$ctl"
expect "controller killed: its nodes were running (the probe below sees them)" \
    test -n "$(task_pid 0 1)"
[ -n "$ctl" ] && kill -9 "$ctl"
wait "$alloc"
left=1
for _ in $(seq 100); do
    [ -z "$(task_pid 0 1)" ] && { left=0; break; }
    sleep 0.1
done
expect "controller killed with SIGKILL: no node of the step left within 10 s" test "$left" = 0

# --- a job that ends before the bag can: said, once ---------------------------
out=$WORK/short
salloc -Q -n 5 -t 1 -J tf-it-short "$TREEFARM" run configs/farm5.json --slurm --quiet \
    --out "$out" --command "sleep 4; $GZ" --inputs "$WORK/data/*.txt" >"$out.out" \
    2>"$out.err" & ctl=$!
for _ in $(seq 300); do grep -qs "Slurm job ends" "$out.err" && break; sleep 0.1; done
scancel "$(squeue -h -n tf-it-short -o %i)"
wait "$ctl"
expect "a job of 1 minute for 200 tasks of 4 s on 5 nodes of 2 slots: the run says the job ends first" \
    grep -q "the Slurm job ends in [0-9]* s, before the bag: .*--resume in a new allocation continues" \
    "$out.err"
expect "  ... once" test "$(grep -c "Slurm job ends" "$out.err")" = 1
expect "  ... and a job without a time limit says nothing of it" \
    test "$(grep -c "Slurm job ends" "$WORK/gz.err")" = 0

# --- --tree auto: one node per host, slots its CPUs ------------------------------
out=$WORK/auto
salloc -Q -n 4 "$TREEFARM" run configs/farm5.json --slurm --tree auto --fanout 2 --quiet \
    --out "$out" "${BAG[@]}" >"$out.out" 2>"$out.err"
rc=$?
expect "--tree auto --fanout 2 in salloc -n 4 (one host): exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -n 5 "$out.err"
expect "--tree auto: one node, named after the host, 4 slots, every task once" python3 - \
    "$out/results.json" "$HOST" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tree = r["config"]["tree"]
ok = (len(tree) == 1 and tree[0]["name"] == sys.argv[2] and tree[0]["slots"] == 4
      and tree[0]["host"] == "slurm" and r["completed"] == 200)
if not ok: print("  tree", tree, "completed", r["completed"])
sys.exit(0 if ok else 1)
PY
expect "--tree auto: every output right" outputs_right "$out" 200
out=$WORK/auto-bad
"$TREEFARM" run configs/farm5.json --tree auto --fanout 2 --quiet --out "$out" "${BAG[@]}" \
    >/dev/null 2>"$out.err"
refused "--tree auto without --slurm" "$out" "--tree auto places the nodes with --slurm" $?

# --- a root that only relays, under Slurm -------------------------------------
python3 - configs/farm5.json "$WORK/relay5.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["tree"][0]["slots"] = 0
del c["tree"][0]["compute"]
json.dump(c, open(sys.argv[2], "w"))
PY
out=$WORK/relay
salloc -Q -n 5 "$TREEFARM" run "$WORK/relay5.json" --slurm --quiet --out "$out" "${BAG[@]}" \
    >"$out.out" 2>"$out.err"
rc=$?
expect "relay-only root under Slurm: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -n 5 "$out.err"
expect "relay-only root: every task once, outputs right" \
    eval 'tasks_exactly_once "$out" 200 commands && outputs_right "$out" 200'
expect "relay-only root: the root computed nothing" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/tasks.csv")))
sys.exit(0 if rows and not [r for r in rows if r["node"] == "head"] else 1)' "$out"

finish
