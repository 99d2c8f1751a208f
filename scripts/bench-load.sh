#!/usr/bin/env bash
# make bench, part "load": what emulated background load costs a node's CPU.
#
# One node, solo, computes LOAD_TASKS tasks of 20 units at time scale 40,
# under a busy job stream: U = 0.75, exponential demands of LOAD_MEAN_S
# (default 0.1 s), so 7.5 arrivals and as many ends per platform second,
# 300 of each per wall second, every one an event of the node's model
# (node/bgload.c) and an end up to one wake of its loop (node/loademul.c). The
# reference is the same run without load at the rate the load leaves it,
# C x (1 - U): the same tasks in the same wall time, so the node's own
# work per wall second (its loop, sampler, reports) is the same on both
# sides and the difference is the load's. The two are run alternately,
# RUNS pairs (default 5).
#
# Figure: the node's CPU seconds per wall second (results.json
# nodes[].cpu_us, the process's user + system time at its REPORT, over
# the run's wall_s), loaded minus unloaded, per pair. Target: the median
# under 0.01 (1% of a CPU). Beside it, that difference per background
# event (an arrival or an end: 2 U / LOAD_MEAN_S x the time scale per
# wall second), in microseconds: the cost grows with the event rate, and
# this says how busy a stream may be for the 1%. A run whose fidelity
# (results.json "fidelity.min") falls below 0.90 is named: its loop fell
# behind.
#
#   RUNS=5 LOAD_TASKS=25 LOAD_MEAN_S=0.1 BENCH_DIR=DIR bash scripts/bench-load.sh
#
# Writes DIR/load.json (benchlib.py figures; DIR defaults to a new
# temporary directory) and prints the figures and its own wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
RUNS=${RUNS:-5}
TASKS=${LOAD_TASKS:-25}
MEAN_S=${LOAD_MEAN_S:-0.1}
U=0.75 C=5 SCALE=40
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/treefarm-bench.XXXXXX)}
OUT=$BENCH_DIR/load.json
WORK=$(mktemp -d /tmp/treefarm-bench-load.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
t_start=$(date +%s.%N)
elapsed () { python3 -c 'import sys, time; print("%.0f" % (time.time() - float(sys.argv[1])))' "$t_start"; }
mkdir -p "$BENCH_DIR"
rm -f "$OUT"

[ -x "$TF" ] || { echo "bench-load: $TF missing: run make first" >&2; exit 2; }
case "$TASKS" in ''|*[!0-9]*) echo "bench-load: LOAD_TASKS must be a count" >&2; exit 2 ;; esac
[ "$TASKS" -ge 1 ] && [ "$TASKS" -le 10000 ] || {
    echo "bench-load: LOAD_TASKS $TASKS out of 1..10000" >&2; exit 2; }

# solo.json at C x (1 - U) for the reference, solo-c.json at C, loaded.
python3 - "$WORK" "$TASKS" "$U" "$C" "$SCALE" "$MEAN_S" <<'PY'
import json, sys
work, tasks, u, c, scale, mean = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
def config(rate):
    return {"name": "solo", "tasks": {"count": tasks, "input_mb": 0, "units": 20},
            "policy": "fcfs", "platform": {"mode": "emulated", "time_scale": scale},
            "tree": [{"name": "solo", "compute": rate}]}
json.dump(config(c * (1 - u)), open(work + "/solo.json", "w"))
json.dump(config(c), open(work + "/solo-c.json", "w"))
json.dump({"solo": {"jobs": {"utilization": u, "demand": {"dist": "exp", "mean_s": mean}},
                    "seed": 5}}, open(work + "/load.json", "w"))
PY

echo "load: solo, $TASKS tasks of 20 units, U $U exp $MEAN_S s at time scale $SCALE, against no load at C x (1 - U); $RUNS pairs (uptime:$(uptime | sed 's/.*load average//'))"
for i in $(seq "$RUNS"); do
    "$TF" run "$WORK/solo.json" --out "$WORK/base-$i" --quiet >"$WORK/base-$i.log" 2>&1 \
        || echo "  pair $i: the unloaded run exited $?"
    "$TF" run "$WORK/solo-c.json" --load "$WORK/load.json" --out "$WORK/load-$i" --quiet \
        >"$WORK/load-$i.log" 2>&1 || echo "  pair $i: the loaded run exited $?"
    echo "  pair $i of $RUNS done, $(elapsed) s"
done

python3 - "$WORK" "$RUNS" "$OUT" "$U" "$MEAN_S" "$SCALE" <<'PY'
import json, os, subprocess, sys
work, runs, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
u, mean, scale = map(float, sys.argv[4:])
FID_MIN = 0.90

def load(name):
    path = os.path.join(work, name, "results.json")
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        sys.stdout.write(open(os.path.join(work, name + ".log")).read())
        sys.exit("bench-load: run %s left no results.json" % name)
    if r["status"] != "complete":
        sys.exit("bench-load: run %s did not complete (%s)" % (name, r["error"]))
    return r

def cpu_per_s(r):
    return r["nodes"][0]["cpu_us"] / 1e6 / r["wall_s"]

def figure(*args):
    subprocess.run([sys.executable, "scripts/benchlib.py", "figure", "--out", out]
                   + [str(a) for a in args], check=True)

base = [load("base-%d" % i) for i in range(1, runs + 1)]
loaded = [load("load-%d" % i) for i in range(1, runs + 1)]
b, l = [cpu_per_s(r) for r in base], [cpu_per_s(r) for r in loaded]
fid = [r["fidelity"]["min"] for r in base + loaded]
util = [r["nodes"][0]["load"]["utilization"] for r in loaded]
low = sum(f < FID_MIN for f in fid)
print("  %4s %16s %16s %10s %10s" % ("pair", "unloaded CPU/s", "loaded CPU/s", "wall s",
                                      "realized U"))
for i in range(runs):
    print("  %4d %16.5f %16.5f %10.1f %10.3f" % (i + 1, b[i], l[i], loaded[i]["wall_s"],
                                                 util[i]))
events = 2 * u / mean * scale
note = ("solo under U %g (exp, %g s demands): %.0f background events (arrivals and ends) "
        "per wall second; realized U %.3f to %.3f; fidelity min %.3f"
        % (u, mean, events, min(util), max(util), min(fid)))
if low:
    note += "; %d of %d runs below %.2f: the loop fell behind" % (low, 2 * runs, FID_MIN)
figure("--id", "load.cpu_per_s", "--unit", "CPU s/s",
       "--what", "node CPU per wall second, loaded minus unloaded (emulated job stream)",
       "--values", *[x - y for x, y in zip(l, b)], "--target", "max:0.01", "--note", note)
figure("--id", "load.us_per_event", "--unit", "us",
       "--what", "node CPU per background event, loaded minus unloaded",
       "--values", *[(x - y) / events * 1e6 for x, y in zip(l, b)], "--note", note)
figure("--id", "load.node_cpu_per_s", "--unit", "CPU s/s",
       "--what", "node CPU per wall second under the job stream",
       "--values", *l, "--ref-what", "unloaded", "--ref-values", *b)
PY
echo "load: $(elapsed) s (figures in $OUT)"
