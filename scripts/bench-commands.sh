#!/usr/bin/env bash
# make bench, part "commands": short commands on two processes at once,
# treefarm against GNU parallel -j2, interleaved run by run in the same
# invocation (RUNS runs, default 5; median [min, max]):
#
#   spin: N_SPIN (200) commands `spin 0.05` (build/bin/spin, bench/spin.c:
#     50 ms of CPU each, counted in its own CPU time) on a root and one
#     worker, slots 1 each (the config is written into a temp dir; real
#     mode). Efficiency = (N_SPIN x 0.05 s / 2 CPUs) / wall time of the
#     whole command: treefarm's starting and stopping its tree is in it.
#     Target: at least 0.97.
#   noop: N_NOOP (2000) commands `true`, tasks per second of wall time.
#   md5: N_MD5 (300) `md5sum` of a 1 MiB input each: treefarm packs the
#     input into the task and moves it to whichever node runs it; GNU
#     parallel reads the files where they are. Tasks per second.
#
# WORKLOADS="spin md5" runs only those. TF_BASE=DIR adds a third contender, DIR/treefarm (with its
# DIR/treefarm-node), interleaved with the other two: how a change is
# judged against the build before it in one run (its figures are printed
# and recorded as commands-*-base).
#
# Beside each workload's figure, commands-WORKLOAD-floor: the same
# commands started by `xargs -P2`, no scheduler at all, what this machine
# allows that hour (interleaved like the others); and
# commands-WORKLOAD-cpu: the nodes' own CPU
# per task (results.json's cpu_us, every thread of both nodes, the
# commands not included), the per-task cost without the machine's noise
# in wall time.
#
# Figures go to $BENCH_DIR/commands.json (scripts/benchlib.py).
set -euo pipefail
cd "$(dirname "$0")/.."
T_START=$(date +%s)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
SPIN=$BUILD/bin/spin
RUNS=${RUNS:-5}
N_SPIN=${N_SPIN:-200}
N_NOOP=${N_NOOP:-2000}
N_MD5=${N_MD5:-300}
SPIN_S=0.05
WORKLOADS=${WORKLOADS:-spin noop md5}
TF_BASE=${TF_BASE:-}
WORK=$(mktemp -d /tmp/treefarm-bench-commands.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/treefarm-bench.XXXXXX)}
mkdir -p "$BENCH_DIR"
OUT=$BENCH_DIR/commands.json
LIB="python3 scripts/benchlib.py"

[ -x "$SPIN" ] || make -s BUILD="$BUILD" "$SPIN" >/dev/null
if ! command -v parallel >/dev/null; then
    echo "commands: GNU parallel is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
fi
if [ -n "$TF_BASE" ] && [ ! -x "$TF_BASE/treefarm" ]; then
    echo "commands: TF_BASE=$TF_BASE has no treefarm" >&2
    exit 1
fi

python3 - "$WORK" "$SPIN" "$SPIN_S" "$N_SPIN" "$N_NOOP" "$N_MD5" <<'PY'
import json, os, sys
w, spin, spin_s = sys.argv[1], sys.argv[2], sys.argv[3]
n_spin, n_noop, n_md5 = (int(x) for x in sys.argv[4:7])
tree = [{"name": "root", "compute": 100, "slots": 1},
        {"name": "w1", "parent": "root", "compute": 100, "link_mbps": 1000, "slots": 1}]
json.dump({"name": "pair", "policy": "fcfs", "platform": {"mode": "real"}, "tree": tree},
          open(os.path.join(w, "pair.json"), "w"))
def tasks(name, n, argv):
    with open(os.path.join(w, name), "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": "t%d" % i, "argv": argv}) + "\n")
tasks("spin.jsonl", n_spin, [spin, spin_s])
tasks("noop.jsonl", n_noop, ["true"])
os.makedirs(os.path.join(w, "mib"))
for i in range(n_md5):
    with open(os.path.join(w, "mib", "f%04d.bin" % i), "wb") as f:
        f.write(os.urandom(1 << 20))
PY

now () { date +%s.%N; }

# run TOOL WORKLOAD -> the wall seconds of one run
run () {
    local t0 tf=$TF out=$WORK/out
    rm -rf "$out"
    [ "$1" = base ] && tf=$TF_BASE/treefarm
    t0=$(now)
    case "$1/$2" in
    parallel/spin) seq "$N_SPIN" | parallel --will-cite -N0 -j2 "$SPIN" "$SPIN_S" ;;
    parallel/noop) seq "$N_NOOP" | parallel --will-cite -N0 -j2 true ;;
    parallel/md5) ls "$WORK"/mib/*.bin | parallel --will-cite -j2 md5sum >/dev/null ;;
    xargs/spin) seq "$N_SPIN" | xargs -P2 -I{} "$SPIN" "$SPIN_S" ;;
    xargs/noop) seq "$N_NOOP" | xargs -P2 -I{} true ;;
    xargs/md5) ls "$WORK"/mib/*.bin | xargs -P2 -n1 md5sum >/dev/null ;;
    */md5) "$tf" run "$WORK/pair.json" --command 'md5sum {}' --inputs "$WORK/mib/*.bin" \
               --out "$out" --quiet >/dev/null ;;
    */*) "$tf" run "$WORK/pair.json" --tasks "$WORK/$2.jsonl" --out "$out" --quiet >/dev/null ;;
    esac
    python3 -c "import sys; print('%.4f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(now)"
    case $1 in parallel | xargs) ;; *) node_cpu "$out/results.json" >>"$WORK/cpu-$1-$2" ;; esac
}

# node_cpu RESULTS -> the nodes' own CPU (every thread, commands not
# included: results.json's cpu_us) per task, in ms. Less noisy than wall
# time: a change to the per-task work shows here first.
node_cpu () {
    python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("%.3f" % (sum(n["cpu_us"] for n in r["nodes"]) / 1000.0 / max(r["tasks"], 1)))
PY
}

# figure WORKLOAD SECONDS... -> the figure's values (efficiency or tasks/s)
values () {
    local w=$1; shift
    python3 - "$w" "$N_SPIN" "$SPIN_S" "$N_NOOP" "$N_MD5" "$@" <<'PY'
import sys
w, n_spin, spin_s, n_noop, n_md5 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5])
walls = [float(x) for x in sys.argv[6:]]
if w == "spin":
    print(" ".join("%.4f" % (n_spin * spin_s / 2 / s) for s in walls))
else:
    n = n_noop if w == "noop" else n_md5
    print(" ".join("%.1f" % (n / s) for s in walls))
PY
}

tools="treefarm parallel xargs${TF_BASE:+ base}"
echo "commands: a root and one worker, slots 1 each, against GNU parallel -j2" \
     "(${tools// /, }); $RUNS runs, median [min, max]"
for w in $WORKLOADS; do
    declare -A wall=()
    for i in $(seq "$RUNS"); do
        for tool in $tools; do   # interleaved: drift hits every side
            wall[$tool]+="$(run "$tool" "$w") "
        done
    done
    case $w in
    spin) unit=efficiency; target=(--target min:0.97)
          what="treefarm: $N_SPIN commands spinning ${SPIN_S} s of CPU, efficiency (start and stop included)" ;;
    noop) unit=tasks/s; target=()
          what="treefarm: $N_NOOP commands true (wall time)" ;;
    md5)  unit=tasks/s; target=()
          what="treefarm: $N_MD5 md5sum of a 1 MiB input moved with the task (wall time)" ;;
    esac
    # shellcheck disable=SC2046
    $LIB figure --out "$OUT" --id "commands-$w" --unit "$unit" --what "$what" \
        --values $(values "$w" ${wall[treefarm]}) --ref-what "GNU parallel -j2" \
        --ref-values $(values "$w" ${wall[parallel]}) "${target[@]}"
    if [ -n "$TF_BASE" ]; then
        # shellcheck disable=SC2046
        $LIB figure --out "$OUT" --id "commands-$w-base" --unit "$unit" \
            --what "the same with $TF_BASE/treefarm" --values $(values "$w" ${wall[base]}) \
            --ref-what "this build" --ref-values $(values "$w" ${wall[treefarm]})
    fi
    # shellcheck disable=SC2046
    $LIB figure --out "$OUT" --id "commands-$w-floor" --unit "$unit" \
        --what "xargs -P2: the same commands, no scheduler (the machine's floor)" \
        --values $(values "$w" ${wall[xargs]}) --ref-what "treefarm" \
        --ref-values $(values "$w" ${wall[treefarm]})
    # shellcheck disable=SC2046
    $LIB figure --out "$OUT" --id "commands-$w-cpu" --unit "ms/task" \
        --what "treefarm: the nodes' own CPU per task, $w (every thread, not the commands)" \
        --values $(cat "$WORK/cpu-treefarm-$w") \
        ${TF_BASE:+--ref-what "$TF_BASE/treefarm" --ref-values $(cat "$WORK/cpu-base-$w")}
    unset wall
done
echo "commands: part took $(( $(date +%s) - T_START )) s (figures in $OUT)"
