#!/usr/bin/env bash
# make study: the reference study, from scratch. Every (send size, compute
# size, policy) cell of the published grid on the reference fork
# (configs/fork7.json: Z in {2, 5, 10} MB x w in {1, 3, 5, 7, 9, 11}
# diagonals x every registered policy x 1000 tasks), in emulation at time scale
# STUDY_SCALE (default 40), with `treefarm bench`; then its summary
# outputs (runs.csv and .json, table.txt, summary.json, study.json, the
# plots, their data and scripts, index.html) are copied into docs/study/,
# whose README.md is the written discussion. Each run's own directory
# stays in the study's DIR ($STUDY_DIR, default results/reference-study),
# which is removed first: nothing is resumed. Then the IA policies again
# ranking by the both-compute IR_s (--ia-order both); IA:Multi and
# IA:Split without the end-game; the unreliable cells again at a lower
# time scale (every policy, and the IA policies ranking both); and from
# them docs/study/split.md (scripts/study-split.py) and docs/study/order.md
# (scripts/study-order.py). About 35 minutes on two cores, more when
# cells must be run again.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
TF=$BUILD/bin/treefarm
DIR=${STUDY_DIR:-results/reference-study}
SCALE=${STUDY_SCALE:-40}
DOCS=docs/study
rm -rf "$DIR"
t0=$(date +%s)
rc=0
"$TF" bench configs/fork7.json --send 2,5,10 --compute 1,3,5,7,9,11 --tasks 1000 \
    --time-scale "$SCALE" --out "$DIR" || rc=$?
t1=$(date +%s)
echo "study: $((t1 - t0)) s of wall time, exit $rc"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || exit "$rc"   # 1: a run failed, recorded; keep what is there
mkdir -p "$DOCS"
find "$DOCS" -maxdepth 1 -type f ! -name README.md -delete
for f in "$DIR"/*; do
    [ -f "$f" ] && cp "$f" "$DOCS/"
done
echo "{\"wall_s\": $((t1 - t0)), \"time_scale\": $SCALE, \"exit\": $rc}" >"$DOCS/wall.json"

# The IA order (docs/study/README.md, "The IA order"): the main grid ranks
# by the IR_s measured while the root computes alone (the default); the
# IA policies again by the both-compute rates, and the per-cell verdict.
rm -rf "$DIR-both"
"$TF" bench configs/fork7.json --send 2,5,10 --compute 1,3,5,7,9,11 --tasks 1000 \
    --time-scale "$SCALE" --policies ia-single,ia-multi,ia-split --ia-order both \
    --out "$DIR-both" || rc=$?
cp "$DIR-both/runs.csv" "$DOCS/order-both-runs.csv"
t_order=$(date +%s)

# IA:Split and the end-game (docs/study/README.md, "IA:Split and the
# end-game"): IA:Multi and IA:Split again without the end-game, and every
# cell a run of which fell behind the emulated clock (fidelity < 0.90)
# again at time scale $RERUN_SCALE; the table from all of them.
RERUN_SCALE=${STUDY_RERUN_SCALE:-10}
rm -rf "$DIR-no-endgame" "$DIR"-rerun-*
"$TF" bench configs/fork7.json --send 2,5,10 --compute 1,3,5,7,9,11 --tasks 1000 \
    --time-scale "$SCALE" --policies ia-multi,ia-split --no-endgame \
    --out "$DIR-no-endgame" || rc=$?
reruns=()
for cell in $(python3 - "$DIR/runs.csv" <<'PY'
import csv, sys
bad = sorted({(r["send_mb"], r["units"]) for r in csv.DictReader(open(sys.argv[1]))
              if r["status"] == "complete" and float(r["fidelity"] or 0) < 0.90})
print(" ".join("%s:%s" % c for c in bad))
PY
); do
    z=${cell%:*} w=${cell#*:}
    "$TF" bench configs/fork7.json --send "$z" --compute "$w" --tasks 1000 \
        --time-scale "$RERUN_SCALE" --out "$DIR-rerun-$z-$w" || rc=$?
    reruns+=("$DIR-rerun-$z-$w")
done
# The IA policies ranking both ways again at $RERUN_SCALE wherever a run of
# the cell fell behind its clock in either order, so that the cell's two
# orders are compared at one time scale.
reruns_both=()
for cell in $(python3 - "$DIR/runs.csv" "$DIR-both/runs.csv" <<'PY'
import csv, sys
bad = sorted({(r["send_mb"], r["units"]) for f in sys.argv[1:] for r in csv.DictReader(open(f))
              if r["status"] == "complete" and float(r["fidelity"] or 0) < 0.90})
print(" ".join("%s:%s" % c for c in bad))
PY
); do
    z=${cell%:*} w=${cell#*:}
    "$TF" bench configs/fork7.json --send "$z" --compute "$w" --tasks 1000 \
        --time-scale "$RERUN_SCALE" --policies ia-single,ia-multi,ia-split --ia-order both \
        --out "$DIR-rerun-both-$z-$w" || rc=$?
    reruns_both+=("$DIR-rerun-both-$z-$w")
done
t2=$(date +%s)
cp "$DIR-no-endgame/runs.csv" "$DOCS/no-endgame-runs.csv"
for d in "${reruns[@]}"; do
    cp "$d/runs.csv" "$DOCS/rerun-$(basename "$d" | sed 's/.*rerun-//')-runs.csv"
done
for d in "${reruns_both[@]}"; do
    cp "$d/runs.csv" "$DOCS/rerun-both-$(basename "$d" | sed 's/.*rerun-both-//')-runs.csv"
done
python3 scripts/study-split.py "$DIR" "$DIR-no-endgame" "${reruns[@]}" --out "$DOCS/split.md"
python3 scripts/study-order.py "$DOCS/runs.csv" "$DOCS/order-both-runs.csv" \
    --rerun "${reruns[@]}" --rerun-both "${reruns_both[@]}" --out "$DOCS/order.md"
echo "{\"wall_s\": $((t1 - t0)), \"time_scale\": $SCALE, \"order_wall_s\": $((t_order - t1)), \
\"split_wall_s\": $((t2 - t_order)), \"rerun_time_scale\": $RERUN_SCALE, \"exit\": $rc}" \
    >"$DOCS/wall.json"
echo "study: outputs in $DOCS (discussion: $DOCS/README.md)"
exit "$rc"
