#!/usr/bin/env bash
# make bench, part "dispatch": what treefarm costs per task, against plain
# programs doing the same work on the same machine, timed in the same
# invocation, run by run interleaved (RUNS runs, default 5):
#
#   dispatch: DISPATCH_TASKS (20000) zero-compute tasks of 0 B and of
#     1 KiB through a flat star, a root and 8 emulated workers (config
#     written into a temp dir: tasks of 1 unit, workers compute 1e9
#     units/s, so a task's emulated compute is 1 ns; the root computes
#     ROOT_COMPUTE (100) units/s, 10 ms a task, so that it computes about
#     1% of the bag and the figure is its dispatching, not its own
#     computing, which in the loop costs it next to nothing; links 1e5
#     MB/s, so pacing never holds a chunk; policy DISPATCH_POLICY, fcfs;
#     time scale 1). treefarm's figure is tasks / makespan_s of results.json
#     (START to FINISHED, wall seconds at time scale 1: the tree is up,
#     spawning and the handshake are not in it). The reference is
#     build/bin/raw-dispatch (bench/raw_dispatch.c): a czmq ROUTER and 8
#     forked DEALER workers, 3 requests out each, the same task count and
#     size, from the workers' go to the last result. Target: the median
#     of the per-run ratios at least 1/3. Beside it, unjudged: the share
#     of the tasks the root computed itself, and the tasks/s the root
#     forwarded to its workers.
#   commands: N_NOOP (150) command tasks `true`, and N_SHA (200)
#     `sha256sum` of a 1 MiB file each, on bench/star2.json (a root and two
#     workers, real mode, each with its CPUs as slots), against GNU
#     parallel -j(CPUs) of the same commands; tasks per second of the
#     whole command's wall time (treefarm: starting and stopping the tree
#     included). Target for `true`: at least 1/3 of parallel. N_NOOP is
#     150: GNU parallel runs from 35 to over 400 `true`s a second on this
#     machine depending on its load, and at the slow end its five runs of
#     150 take 40 s of the 15 minutes make bench has.
#
# Figures go to $BENCH_DIR/dispatch.json (scripts/benchlib.py; BENCH_DIR
# defaults to a fresh temp dir) and are printed as they are recorded.
set -euo pipefail
cd "$(dirname "$0")/.."
T_START=$(date +%s)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
RAW=$BUILD/bin/raw-dispatch
RUNS=${RUNS:-5}
N=${DISPATCH_TASKS:-20000}
POLICY=${DISPATCH_POLICY:-fcfs}
ROOT_COMPUTE=${ROOT_COMPUTE:-100}
N_NOOP=${N_NOOP:-150}
N_SHA=${N_SHA:-200}
CPUS=$(nproc)
WORK=$(mktemp -d /tmp/treefarm-bench-dispatch.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/treefarm-bench.XXXXXX)}
mkdir -p "$BENCH_DIR"
OUT=$BENCH_DIR/dispatch.json
LIB="python3 scripts/benchlib.py"

[ -x "$RAW" ] || make -s BUILD="$BUILD" "$RAW" >/dev/null
if ! command -v parallel >/dev/null; then
    echo "dispatch: GNU parallel is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
fi

# star8 SIZE_BYTES -> a config of a root and 8 workers
star8 () {
    python3 - "$1" "$N" "$POLICY" "$ROOT_COMPUTE" <<'PY'
import json, sys
size, n, policy = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
tree = [{"name": "root", "compute": float(sys.argv[4])}]
tree += [{"name": "w%d" % i, "parent": "root", "compute": 1e9, "link_mbps": 1e5}
         for i in range(8)]
print(json.dumps({"name": "star8-%dB" % size, "policy": policy,
                  "tasks": {"count": n, "input_mb": size / 2**20, "units": 1},
                  "platform": {"mode": "emulated", "time_scale": 1},
                  "tree": tree}))
PY
}

# treefarm's run -> "tasks/s root_share forwarded/s"
tf_dispatch () {
    rm -rf "$WORK/out"
    "$TF" run "$WORK/star8-$1.json" --out "$WORK/out" --quiet >/dev/null 2>"$WORK/err" || {
        cat "$WORK/err" >&2; return 1; }
    python3 - "$WORK/out/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "complete", r["status"]
root = r["nodes"][0]
span = r["makespan_s"]
print("%.1f %.4f %.1f" % (r["tasks"] / span, root["computed"] / r["tasks"],
                          root["forwarded"] / span))
PY
}

now () { date +%s.%N; }
rate () { python3 -c "import sys; print('%.1f' % (int(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2]))))" "$@"; }

# tool workload -> tasks/s of one command run
cmd_run () {
    local t0 n out=$WORK/cmdout
    rm -rf "$out"
    case "$1/$2" in
    treefarm/noop) n=$N_NOOP; t0=$(now)
        "$TF" run bench/star2.json --tasks "$WORK/noop.jsonl" --out "$out" --quiet >/dev/null ;;
    treefarm/sha256) n=$N_SHA; t0=$(now)
        "$TF" run bench/star2.json --command 'sha256sum {}' --inputs "$WORK/mib/*.bin" \
            --out "$out" --quiet >/dev/null ;;
    parallel/noop) n=$N_NOOP; t0=$(now)
        seq "$N_NOOP" | parallel --will-cite -j"$CPUS" true >/dev/null ;;
    parallel/sha256) n=$N_SHA; t0=$(now)
        ls "$WORK"/mib/*.bin | parallel --will-cite -j"$CPUS" sha256sum >/dev/null ;;
    esac
    rate "$n" "$t0" "$(now)"
}

echo "dispatch: $N zero-compute tasks through a root and 8 emulated workers ($POLICY)," \
     "against raw-dispatch; $RUNS runs, median [min, max]"
for size in 0 1024; do
    star8 "$size" >"$WORK/star8-$size.json"
done
declare -A tf=() share=() fwd=() raw=()
for i in $(seq "$RUNS"); do
    for size in 0 1024; do   # interleaved: drift hits both sides
        read -r t s f < <(tf_dispatch "$size")
        tf[$size]+="$t "; share[$size]+="$s "; fwd[$size]+="$f "
        raw[$size]+="$("$RAW" --tasks "$N" --size "$size" --quiet) "
    done
done
for size in 0 1024; do
    label=$([ "$size" = 0 ] && echo 0B || echo 1KiB)
    $LIB figure --out "$OUT" --id "dispatch-$label" --unit tasks/s \
        --what "treefarm: $N zero-compute tasks of $size B, root + 8 emulated workers, $POLICY (tasks / makespan)" \
        --values ${tf[$size]} --ref-what "raw czmq ROUTER/DEALER" --ref-values ${raw[$size]} \
        --target ratio-min:0.3333
    $LIB figure --out "$OUT" --id "dispatch-$label-forwarded" --unit tasks/s \
        --what "of which the root forwarded to its workers (forwarded / makespan)" \
        --values ${fwd[$size]} --ref-what "raw czmq ROUTER/DEALER" --ref-values ${raw[$size]}
    $LIB figure --out "$OUT" --id "dispatch-$label-root-share" --unit fraction \
        --what "share of the tasks the root computed itself" --values ${share[$size]}
done

echo "commands: tasks/s of wall time, against GNU parallel -j$CPUS; $RUNS runs"
python3 - "$WORK" "$N_NOOP" "$N_SHA" <<'PY'
import json, os, sys
w, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(os.path.join(w, "noop.jsonl"), "w") as f:
    for i in range(n):
        f.write(json.dumps({"id": "t%d" % i, "argv": ["true"]}) + "\n")
os.makedirs(os.path.join(w, "mib"))
for i in range(m):
    with open(os.path.join(w, "mib", "f%04d.bin" % i), "wb") as f:
        f.write(os.urandom(1 << 20))
PY
for w in noop sha256; do
    declare -A cmd=()
    for i in $(seq "$RUNS"); do
        for tool in treefarm parallel; do   # interleaved
            cmd[$tool]+="$(cmd_run "$tool" "$w") "
        done
    done
    if [ "$w" = noop ]; then
        $LIB figure --out "$OUT" --id commands-true --unit tasks/s \
            --what "treefarm: $N_NOOP command tasks true on bench/star2.json (wall time)" \
            --values ${cmd[treefarm]} --ref-what "GNU parallel -j$CPUS" \
            --ref-values ${cmd[parallel]} --target ratio-min:0.3333
    else
        $LIB figure --out "$OUT" --id commands-sha256 --unit tasks/s \
            --what "treefarm: $N_SHA x sha256sum of a 1 MiB input on bench/star2.json (wall time)" \
            --values ${cmd[treefarm]} --ref-what "GNU parallel -j$CPUS" \
            --ref-values ${cmd[parallel]}
    fi
    unset cmd
done
echo "dispatch: part took $(( $(date +%s) - T_START )) s (figures in $OUT)"
