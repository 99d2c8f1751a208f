#!/usr/bin/env bash
# make bench: every benchmark part, then one table and bench/results.json.
#
# Each part is scripts/bench-PART.sh, runnable alone; it records its
# figures with scripts/benchlib.py into $BENCH_DIR/PART.json (every figure
# the median of RUNS runs, default 5, with min and max, and where it has
# one its reference timed in the same run). This script runs them in
# order, says how long each took, and collects every figure into
# bench/results.json with the table printed last. Figures never fail the
# build: a target not met is printed "NOT MET" and docs/performance.md
# says why. PARTS="dispatch scale" runs only those parts.
# A part that fails (exits non-zero) is named and the rest still run;
# make bench then exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD
PARTS=${PARTS:-pacing dispatch commands datapath scale efficiency bigfile load}
BENCH_DIR=$(mktemp -d /tmp/treefarm-bench-out.XXXXXX)
export BENCH_DIR
trap 'rm -rf "$BENCH_DIR"' EXIT
t0=$(date +%s)
failed=()
echo "make bench: parts $PARTS; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
for part in $PARTS; do
    script=scripts/bench-$part.sh
    if [ ! -f "$script" ]; then
        echo "make bench: no part $part ($script)" >&2
        failed+=("$part")
        continue
    fi
    echo
    p0=$(date +%s)
    if ! bash "$script"; then
        failed+=("$part")
        echo "make bench: part $part FAILED" >&2
    fi
    echo "  [$part: $(( $(date +%s) - p0 )) s]"
done
echo
mkdir -p bench
python3 scripts/benchlib.py collect "$BENCH_DIR" --json bench/results.json
echo "make bench: $(( $(date +%s) - t0 )) s in all"
if [ ${#failed[@]} -gt 0 ]; then
    echo "make bench: parts that failed: ${failed[*]}" >&2
    exit 1
fi
