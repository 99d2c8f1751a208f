#!/usr/bin/env bash
# make bench: benchmarks that print figures (never pass/fail on timing).
#
# pacing: one paced 10 MB/s link from a root to a child that computes
# instantly (the root computes a task a second meanwhile), 60 tasks of
# 2 MB, at time scales 1, 5, 20 and 40. For each,
# the median over 3 runs of the mean rate the link achieved while sending
# (results.json rate_mbps: MB sent / time from each transfer's start to
# its last ack, platform terms), and its ratio to the configured rate. The
# gap is the runtime's latency (ack round trip, wake-ups), which a time
# scale s multiplies by s.
#
# scale: a 255-node binary tree (depth 7) of emulated nodes, 20,000 tasks of
# 0.5 MB and 1 unit, compute 5, links 50 MB/s, FCFS, time scale 5: whether
# it completes with every REPORT filed, its wall time, efficiency against
# its bound and fidelity (how far the nodes fell behind the emulated
# clock; below 0.90 the efficiency is the emulation's, not the policy's).
# SCALE_RUNS runs (default 1: one takes about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
WORK=$(mktemp -d /tmp/treefarm-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
RUNS=${RUNS:-3}

echo "pacing: one 10.00 MB/s link, 60 tasks of 2 MB, median of $RUNS runs"
printf '  %-10s  %12s  %12s  %7s\n' "time scale" "configured" "achieved" "ratio"
for scale in 1 5 20 40; do
    cat >"$WORK/link.json" <<JSON
{"name": "link", "tasks": {"count": 60, "input_mb": 2, "units": 1},
 "platform": {"time_scale": $scale, "payload_scale": 0.01},
 "tree": [{"name": "src", "compute": 1},
          {"name": "sink", "parent": "src", "compute": 1000000, "link_mbps": 10}]}
JSON
    rates=()
    for i in $(seq "$RUNS"); do
        "$TF" run "$WORK/link.json" --out "$WORK/r$scale-$i" --quiet >/dev/null
        rates+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"][0]["children"][0]["rate_mbps"])' "$WORK/r$scale-$i/results.json")")
    done
    median=$(printf '%s\n' "${rates[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf '  %-10s  %12.2f  %12.2f  %7.3f\n' "$scale" 10 "$median" "$(echo "$median / 10" | bc -l)"
done

SCALE_RUNS=${SCALE_RUNS:-1}
echo
echo "scale: 255-node binary tree, 20000 tasks, time scale 5, $SCALE_RUNS run(s)"
python3 scripts/tree-config.py --depth 7 --count 20000 --time-scale 5 >"$WORK/tree255.json"
printf '  %-4s  %-9s  %8s  %8s  %10s  %8s  %s\n' run status reported wall_s efficiency fidelity worst
for i in $(seq "$SCALE_RUNS"); do
    "$TF" run "$WORK/tree255.json" --out "$WORK/t255-$i" --quiet >/dev/null 2>"$WORK/t255-$i.err" || true
    python3 - "$WORK/t255-$i/results.json" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); f = r["fidelity"]
rep = sum(1 for n in r["nodes"] if n["reported"])
print("  %-4s  %-9s  %4d/%-3d  %8.1f  %10s  %8.3f  %s" % (
    sys.argv[2], r["status"], rep, len(r["nodes"]), r["wall_s"],
    "%.3f" % r["efficiency"] if r["efficiency"] is not None else "-", f["min"], f["node"]))
PY
done
