#!/usr/bin/env bash
# make bench, part "commands": command tasks through treefarm against GNU
# parallel and a plain shell loop of the same commands, each timed in the
# same invocation, CMD_RUNS times (default 5), median with min and max:
#
#   no-op: N_NOOP (2000) tasks `true` on bench/star2.json (a root and two
#          workers on this machine, each with its default slots: the CPUs);
#          parallel runs them with -j of the machine's CPUs, the loop one
#          after the other;
#   sha256: N_SHA (500) files of 1 MiB, `sha256sum FILE` (treefarm stages
#          each file into the task's work directory on the node that runs
#          it, and brings its stdout back); parallel and the loop read the
#          files where they are.
#
# Figures in tasks per second of wall time from start to last result
# (treefarm: the controller's wall time, including starting and stopping
# its nodes). Prints a table and writes bench/commands.json.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
RUNS=${CMD_RUNS:-5}
N_NOOP=${N_NOOP:-2000}
N_SHA=${N_SHA:-500}
CPUS=$(nproc)
WORK=$(mktemp -d /tmp/treefarm-bench-cmd.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

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

now () { date +%s.%N; }
rate () { python3 -c "import sys; print('%.1f' % (int(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2]))))" "$@"; }

# tool workload -> tasks/s of one run
one () {
    local t0 t1 n out=$WORK/out
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
    loop/noop) n=$N_NOOP; t0=$(now)
        for _ in $(seq "$N_NOOP"); do /bin/true; done ;;
    loop/sha256) n=$N_SHA; t0=$(now)
        for f in "$WORK"/mib/*.bin; do sha256sum "$f"; done >/dev/null ;;
    esac
    t1=$(now)
    rate "$n" "$t0" "$t1"
}

if ! command -v parallel >/dev/null; then
    echo "commands: GNU parallel is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
fi
echo "commands: tasks/s of wall time, median of $RUNS runs [min, max], $CPUS CPUs"
printf '  %-8s  %-22s  %-22s  %-22s  %s\n' workload treefarm "GNU parallel -j$CPUS" "shell loop" "treefarm/parallel"
json="{"
for w in noop sha256; do
    declare -A all=()
    for i in $(seq "$RUNS"); do
        for tool in treefarm parallel loop; do   # interleaved: drift hits all three
            all[$tool]+="$(one "$tool" "$w") "
        done
    done
    line=$(python3 - "$w" "${all[treefarm]}" "${all[parallel]}" "${all[loop]}" <<'PY'
import json, statistics, sys
w = sys.argv[1]
runs = {k: [float(x) for x in v.split()] for k, v in zip(("treefarm", "parallel", "loop"), sys.argv[2:5])}
cell = lambda xs: "%7.1f [%6.1f, %6.1f]" % (statistics.median(xs), min(xs), max(xs))
ratio = statistics.median(runs["treefarm"]) / statistics.median(runs["parallel"])
print("  %-8s  %-22s  %-22s  %-22s  %.2f" % (w, cell(runs["treefarm"]), cell(runs["parallel"]), cell(runs["loop"]), ratio))
print("JSON" + json.dumps({w: {k: {"median": statistics.median(v), "min": min(v), "max": max(v), "runs": v} for k, v in runs.items()}})[1:-1])
PY
)
    echo "$line" | grep -v '^JSON'
    json+="$(echo "$line" | sed -n 's/^JSON//p'),"
    unset all
done
mkdir -p bench
echo "${json%,}}" | python3 -m json.tool >bench/commands.json
echo "  (written to bench/commands.json)"
