#!/usr/bin/env bash
# make bench, parts "efficiency" and "overhead".
#
# efficiency: every registered policy on the reference fork
#   (configs/fork7.json, 1000 tasks of 2 MB and 5 units, emulated), RUNS
#   runs each (default 5), the policies interleaved run by run so that the
#   machine's drift hits them all alike. Per policy, two figures: the
#   whole run's efficiency (throughput over makespan / the bound of the
#   policy's own port model: results.json "efficiency") and the steady
#   state's (results.json "steady": from the k-th record to the (n-k)-th,
#   k the tree's in-flight capacity; docs/bounds.md, "Efficiency"). The
#   reference of both is that bound, computed for the same config. Targets:
#   IA:Multi's steady-state efficiency >= 0.95, IA:Split's >= 0.97 (the
#   bound's own split of the port, docs/policies.md).
#   Each policy runs at the time scale of PLAN: IA:Multi and IA:Split at fork7's own
#   (20), the others faster to fit make bench's budget, each where its
#   fidelity was measured to stay >= 0.90 (docs/performance.md). A run
#   whose fidelity (results.json "fidelity.min") falls below 0.90 measured
#   the emulation, not the policy: the output says so, per policy.
#
# overhead: in every one of those runs, each node's sampler and online fit
#   (node/observe.c, sampler.c, fit.c) timed by the node itself with the
#   thread CPU clock, over its process's CPU time (getrusage), both from
#   its REPORT (results.json nodes[].observe_cpu_us, cpu_us). Figures: the
#   root's fraction (the busiest node) and the largest over all nodes, per
#   run. Target: every run's largest below 1%.
#
#   RUNS=5 BENCH_DIR=DIR bash scripts/bench-efficiency.sh
#
# Writes DIR/efficiency.json (benchlib.py figures; DIR defaults to a new
# temporary directory) and prints the figures and its own wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
RUNS=${RUNS:-5}
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/treefarm-bench.XXXXXX)}
OUT=$BENCH_DIR/efficiency.json
CONFIG=configs/fork7.json
# policy:time_scale, in the order run.
PLAN=${EFF_PLAN:-"ia-multi:20 ia-split:20 comprate:30 ia-single-opt:30 bwc:30 fcfs:150 ia-single:150 root-computes:150"}
WORK=$(mktemp -d /tmp/treefarm-bench-eff.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
t_start=$(date +%s.%N)
elapsed () { python3 -c 'import sys, time; print("%.0f" % (time.time() - float(sys.argv[1])))' "$t_start"; }
mkdir -p "$BENCH_DIR"
rm -f "$OUT"

[ -x "$TF" ] || { echo "bench-efficiency: $TF missing: run make first" >&2; exit 2; }

for entry in $PLAN; do
    scale=${entry#*:}
    python3 - "$CONFIG" "$scale" "$WORK/fork7-$scale.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["platform"]["time_scale"] = float(sys.argv[2])
json.dump(c, open(sys.argv[3], "w"), indent=1)
PY
done

echo "efficiency: $CONFIG, 1000 tasks, every policy, $RUNS runs each (uptime:$(uptime | sed 's/.*load average//'))"
for i in $(seq "$RUNS"); do
    for entry in $PLAN; do
        policy=${entry%%:*} scale=${entry#*:}
        dir=$WORK/$policy-$i
        # A failed run still writes results.json; the summary judges it.
        "$TF" run "$WORK/fork7-$scale.json" --policy "$policy" --out "$dir" --quiet \
            >"$dir.log" 2>&1 || echo "  run $i $policy: treefarm exited $? (see below)"
    done
    echo "  round $i of $RUNS done, $(elapsed) s"
done

python3 - "$WORK" "$RUNS" "$OUT" "$PLAN" <<'PY'
import json, os, subprocess, sys
work, runs, out, plan = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()
FID_MIN = 0.90

def load(policy, i):
    path = os.path.join(work, "%s-%d" % (policy, i), "results.json")
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        sys.stdout.write(open(os.path.join(work, "%s-%d.log" % (policy, i))).read())
        sys.exit("bench-efficiency: run %d of %s left no results.json" % (i, policy))

def figure(*args):
    subprocess.run([sys.executable, "scripts/benchlib.py", "figure", "--out", out]
                   + [str(a) for a in args], check=True)

def num(x):
    return "-" if x is None else "%.3f" % x

print("  %-14s %5s %6s %8s %6s  %-24s %-24s %s" % ("policy", "scale", "wall s",
      "bound", "model", "whole-run efficiency", "steady-state efficiency",
      "fidelity min"))
root_share, max_share, worst_node, per_s = [], [], [], []
for entry in plan:
    policy, scale = entry.split(":")
    rs = [load(policy, i) for i in range(1, runs + 1)]
    bad = [r for r in rs if r["status"] != "complete"]
    if bad:
        sys.exit("bench-efficiency: %s: %d of %d runs did not complete (%s)"
                 % (policy, len(bad), runs, bad[0]["error"]))
    whole = [r["efficiency"] for r in rs]
    steady = [r["steady"]["efficiency"] for r in rs if r["steady"]]
    fid = [r["fidelity"]["min"] for r in rs]
    low = [f for f in fid if f < FID_MIN]
    bound, model = rs[0]["bound"]["tasks_per_s"], rs[0]["bound"]["model"]
    med = lambda xs: sorted(xs)[len(xs) // 2] if xs else None
    print("  %-14s %5s %6.1f %8.3f %6s  %.3f [%.3f, %.3f]     %s [%s, %s]     %.3f%s" % (
        policy, scale, med([r["wall_s"] for r in rs]), bound, model, med(whole),
        min(whole), max(whole),
        num(med(steady)), num(min(steady) if steady else None),
        num(max(steady) if steady else None), min(fid),
        "  UNRELIABLE in %d of %d runs" % (len(low), runs) if low else ""))
    note = ("fork7 at time scale %s, bound %.4f tasks/s (%s-port model); fidelity "
            "min %.3f" % (scale, bound, model, min(fid)))
    if low:
        note += ("; %d of %d runs below %.2f: their efficiency is the emulation's, "
                 "not the policy's" % (len(low), runs, FID_MIN))
    figure("--id", "efficiency.%s.whole" % policy, "--unit", "of bound",
           "--what", "%s whole-run efficiency, fork7 1000 tasks" % policy,
           "--values", *whole, "--note", note)
    if len(steady) == runs:
        target = {"ia-multi": ["--target", "min:0.95"],
                  "ia-split": ["--target", "min:0.97"]}.get(policy, [])
        figure("--id", "efficiency.%s.steady" % policy, "--unit", "of bound",
               "--what", "%s steady-state efficiency (k-th to (n-k)-th record)" % policy,
               "--values", *steady, "--note", note, *target)
    for r in rs:
        shares = [(n["observe_cpu_us"] / n["cpu_us"], n["name"]) for n in r["nodes"]
                  if n.get("cpu_us")]
        root = r["nodes"][0]
        root_share.append(root["observe_cpu_us"] / root["cpu_us"])
        s, name = max(shares)
        max_share.append(s)
        per_s.append(max(n["observe_cpu_us"] for n in r["nodes"]) / r["wall_s"])
        worst_node.append("%s/%s" % (policy, name))

print("overhead: sampler + online fit CPU over the node's CPU, %d runs" % len(max_share))
figure("--id", "overhead.root", "--unit", "of CPU",
       "--what", "sampler+fit share of the root's CPU time (fork7, every policy)",
       "--values", *root_share)
w = max(range(len(max_share)), key=lambda i: max_share[i])
figure("--id", "overhead.max", "--unit", "of CPU",
       "--what", "sampler+fit share of CPU time, the largest over nodes, per run",
       "--values", *max_share, "--target", "max-all:0.01",
       "--note", "largest: %s, %.4f" % (worst_node[w], max_share[w]))
figure("--id", "overhead.us_per_s", "--unit", "us/s",
       "--what", "sampler+fit CPU per wall second, the largest over nodes, per run",
       "--values", *per_s)
PY
echo "efficiency: $(elapsed) s (figures in $OUT)"
