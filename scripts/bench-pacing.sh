#!/usr/bin/env bash
# make bench, part "pacing": how close a paced link runs to its configured
# rate. One 10 MB/s link from a root to a child that computes instantly
# (the root computes a task a second meanwhile), TASKS tasks of 2 MB, at
# time scales 5, 20 and 40; per run, the mean rate the link achieved while
# sending (results.json rate_mbps: MB sent / time from each transfer's
# start to its last ack, platform terms). The figure is that rate against
# the configured one; the gap is the runtime's latency (ack round trip,
# wake-ups), which a time scale s multiplies by s. No target: it tells
# how fast a time scale may go before the runtime, not the platform,
# sets the pace (docs/measure.md).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
RUNS=${RUNS:-5}
TASKS=${PACING_TASKS:-30}
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/treefarm-bench-out.XXXXXX)}
WORK=$(mktemp -d /tmp/treefarm-bench-pacing.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)

echo "pacing: one 10 MB/s link, $TASKS tasks of 2 MB, $RUNS runs per time scale"
for scale in 5 20 40; do
    cat >"$WORK/link.json" <<JSON
{"name": "link", "tasks": {"count": $TASKS, "input_mb": 2, "units": 1},
 "platform": {"time_scale": $scale, "payload_scale": 0.01},
 "tree": [{"name": "src", "compute": 1},
          {"name": "sink", "parent": "src", "compute": 1000000, "link_mbps": 10}]}
JSON
    rates=() fid=()
    for i in $(seq "$RUNS"); do
        "$TF" run "$WORK/link.json" --out "$WORK/r$scale-$i" --quiet >/dev/null 2>>"$WORK/stderr"
        read -r rate f < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["nodes"][0]["children"][0]["rate_mbps"], r["fidelity"]["min"])' "$WORK/r$scale-$i/results.json")
        rates+=("$rate") fid+=("$f")
    done
    python3 scripts/benchlib.py figure --out "$BENCH_DIR/pacing.json" --id "pacing.scale$scale" \
        --what "a 10 MB/s paced link at time scale $scale: the rate it achieved while sending" \
        --unit "MB/s" --values "${rates[@]}" \
        --note "fidelity (lowest node) per run: ${fid[*]}; below 0.90 the emulation fell behind"
done
echo "  pacing: $(( $(date +%s) - start )) s"
