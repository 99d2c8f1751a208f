#!/usr/bin/env bash
# make bench, scale part: hundreds of emulated nodes on this machine, and
# memory that does not grow with the bag (docs/performance.md, "Scale and
# memory").
#
# tree255: a binary tree of depth 7 (255 nodes, scripts/tree-config.py)
#   runs SCALE_TASKS tasks (default 100,000) to completion, SCALE_RUNS
#   times (default 1: make bench gives this part 4 minutes, and one such
#   run and the 1,000,000-task run take about that on 2 cores; the doc
#   says so). Each run: every task
#   recorded exactly once with status complete, wall time, efficiency and
#   fidelity (results.json), and each process's peak RssAnon, sampled
#   every 0.25 s (scripts/scale-run.py; the kernel keeps no RssAnon
#   high-water mark): the largest over the nodes (target: every run at
#   most 2 MiB) and the controller's.
# flat15: a binary tree of depth 3 (15 nodes) runs FLAT_TASKS tasks
#   (default 1,000,000) FLAT_RUNS times (default 1, for the same reason), sampling every 0.5 s; each process's growth
#   is its RssAnon at its last sample before the end (99% of the tasks)
#   over its sample at 10% of the tasks; the figure is the largest over
#   the nodes and the controller (target: at most 0.10).
#
# The tasks are small and short (0.01 MB; 0.1 unit at 10 units/s in the
# 255-node tree, 0.01 unit in the 15-node one; links of 100 MB/s,
# IA:Multi, time scale 1), so the runs measure the runtime at scale rather
# than a platform that takes minutes: the trees' bounds in wall terms
# (25,500 and 15,000 tasks/s) are above what 2 cores carry, and
# efficiency and fidelity are recorded, not held to a target.
#
#   bash scripts/bench-scale.sh           (BENCH_DIR, BUILD, SCALE_RUNS,
#                                          SCALE_TASKS, FLAT_RUNS, FLAT_TASKS)
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
[ -x "$TF" ] || make -s -j2 BUILD="$BUILD" >/dev/null
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/treefarm-bench-scale.XXXXXX)}
mkdir -p "$BENCH_DIR/scale-runs"   # each run's summary and samples, for a closer look
WORK=$(mktemp -d /tmp/treefarm-scale.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
OUT=$BENCH_DIR/scale.json
SCALE_RUNS=${SCALE_RUNS:-1}
FLAT_RUNS=${FLAT_RUNS:-1}
SCALE_TASKS=${SCALE_TASKS:-100000}
FLAT_TASKS=${FLAT_TASKS:-1000000}
LIB="python3 scripts/benchlib.py"
TREE="--input-mb 0.01 --compute 10 --link 100 --policy ia_multi --time-scale 1"

echo "scale: 255-node tree, $SCALE_TASKS tasks, $SCALE_RUNS runs; 15-node tree, $FLAT_TASKS tasks, $FLAT_RUNS runs"
echo "  (load before: $(cut -d' ' -f1-3 /proc/loadavg))"
python3 scripts/tree-config.py --depth 7 --count "$SCALE_TASKS" $TREE --units 0.1 \
    >"$WORK/tree255.json"
python3 scripts/tree-config.py --depth 3 --count "$FLAT_TASKS" $TREE --units 0.01 \
    >"$WORK/tree15.json"

# One run through scale-run.py; its JSON summary in $WORK/NAME.json.
run() {
    local name=$1 cfg=$2 every=$3
    python3 scripts/scale-run.py --treefarm "$TF" --config "$cfg" --out "$WORK/$name" \
        --every "$every" --series "$BENCH_DIR/scale-runs/$name-series.json" \
        >"$WORK/$name.json"
    cp "$WORK/$name.json" "$BENCH_DIR/scale-runs/"
}

# Field of every summary named PREFIX-*.json, one value per run.
field() {
    python3 - "$1" "$WORK" "$2" <<'PY'
import glob, json, sys
expr, work, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
for path in sorted(glob.glob("%s/%s-*.json" % (work, prefix))):
    r = json.load(open(path))
    print(eval(expr, {"r": r, "max": max}))
PY
}

for i in $(seq "$SCALE_RUNS"); do
    run "t255-$i" "$WORK/tree255.json" 0.25
    python3 - "$WORK/t255-$i.json" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("  tree255 run %s: %s, %d/%d tasks, once %d, wall %.1f s, efficiency %.3f, "
      "fidelity %.3f, peak node %d KiB, controller %d KiB" % (
      sys.argv[2], r["status"], r["completed"], r["count"], r["once"], r["wall_s"],
      r["efficiency"] or 0, r["fidelity"], max(r["peak_node_kib"].values()),
      r["peak_controller_kib"]))
PY
done
BAD='0 if r["exit"] == 0 and r["status"] == "complete" and r["once"] and r["completed"] == r["count"] else 1'
$LIB figure --out "$OUT" --id scale.tree255.incomplete --unit "1=failed" \
    --what "255-node tree, $SCALE_TASKS tasks: a run not complete with every task recorded once" \
    --values $(field "$BAD" t255) --target max-all:0
$LIB figure --out "$OUT" --id scale.tree255.wall --unit s \
    --what "255-node tree, $SCALE_TASKS tasks: wall time" --values $(field 'r["wall_s"]' t255)
$LIB figure --out "$OUT" --id scale.tree255.efficiency --unit "of bound" \
    --what "255-node tree: throughput over the multi-port bound" \
    --values $(field 'r["efficiency"] or 0' t255) \
    --note "runtime-bound on 2 cores: the bound in wall terms exceeds what they carry"
$LIB figure --out "$OUT" --id scale.tree255.fidelity --unit "" \
    --what "255-node tree: fidelity (worst node)" --values $(field 'r["fidelity"]' t255)
$LIB figure --out "$OUT" --id scale.tree255.node_mib --unit MiB \
    --what "255-node tree: largest peak RssAnon of a node (sampled every 0.25 s)" \
    --values $(field 'max(r["peak_node_kib"].values()) / 1024' t255) --target max-all:2
$LIB figure --out "$OUT" --id scale.tree255.controller_mib --unit MiB \
    --what "255-node tree: the controller's peak RssAnon" \
    --values $(field 'r["peak_controller_kib"] / 1024' t255)

for i in $(seq "$FLAT_RUNS"); do
    run "f15-$i" "$WORK/tree15.json" 0.5
    python3 - "$WORK/f15-$i.json" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g = {k: v for k, v in r["growth"].items() if v is not None}
worst = max(g, key=g.get) if g else "-"
print("  tree15 run %s: %s, %d/%d tasks, once %d, wall %.1f s, %d samples; growth from 10%% "
      "to the end: worst %s %+.3f, controller %+.3f" % (
      sys.argv[2], r["status"], r["completed"], r["count"], r["once"], r["wall_s"], r["samples"],
      worst, g.get(worst, 0), g.get("controller", float("nan"))))
print("    every process: " + ", ".join("%s %+.3f" % (k, v) for k, v in sorted(g.items())))
PY
done
$LIB figure --out "$OUT" --id scale.flat15.incomplete --unit "1=failed" \
    --what "15-node tree, $FLAT_TASKS tasks: a run not complete with every task recorded once" \
    --values $(field "$BAD" f15) --target max-all:0
$LIB figure --out "$OUT" --id scale.flat15.wall --unit s \
    --what "15-node tree, $FLAT_TASKS tasks: wall time" --values $(field 'r["wall_s"]' f15)
$LIB figure --out "$OUT" --id scale.flat15.growth --unit fraction \
    --what "15-node tree: largest RssAnon growth of a process (nodes, controller), 10% to end" \
    --values $(field 'max(v for v in r["growth"].values() if v is not None)' f15) \
    --target max-all:0.10
$LIB figure --out "$OUT" --id scale.flat15.controller_growth --unit fraction \
    --what "15-node tree: the controller's RssAnon growth, 10% to end" \
    --values $(field 'r["growth"]["controller"]' f15)
$LIB figure --out "$OUT" --id scale.flat15.node_growth --unit fraction \
    --what "15-node tree: largest RssAnon growth of a node, 10% to end" \
    --values $(field 'max(v for k, v in r["growth"].items() if k != "controller" and v is not None)' f15)

echo "  (load after: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "scale: done in $(( $(date +%s) - T0 )) s (figures in $OUT)"
