#!/usr/bin/env bash
# Real mode's background load against the papers (docs/load.md): one JSON
# line per figure on stdout, progress on stderr. Everything runs on CPU 0
# (taskset -c 0), the load processes included (they inherit the mask).
#
# 1. A synthetic task (build/bin/load-probe task: UNITS units of the
#    kernel), alone and under 3 CPU burners on its core (a load L = 4 as
#    node/burner.h generates it): it should take 4 times as long, within
#    15%. The figure is the median over RUNS of each run's ratio.
# 2. Figueira & Berman: a burst of 1,000 messages of 800 bytes over
#    loopback TCP (load-probe burst: the mean of BURSTS bursts), alone,
#    with 1 and with 2 contenders always sending 800-byte datagrams
#    (delay_comm(i) = T_i / T_0 - 1), then with two contenders sending 25%
#    and 76% of the time (idle the rest, periods of mean PERIOD s): the
#    slowdown measured, T / T_0, against 1 + pcomm_1 d_1 + pcomm_2 d_2
#    (overlay/slowdown.h). Medians over RUNS of each time.
#
#   scripts/load-real.sh            RUNS=5 UNITS=80 BURSTS=200 PERIOD=0.05
# make builds the probe first: make build/bin/load-probe.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PROBE=$BUILD/bin/load-probe
RUNS=${RUNS:-5} UNITS=${UNITS:-80} BURSTS=${BURSTS:-200} PERIOD=${PERIOD:-0.05}
[ -x "$PROBE" ] || { echo "load-real: $PROBE missing (make $PROBE)" >&2; exit 2; }
command -v taskset >/dev/null || { echo "load-real: taskset missing (util-linux)" >&2; exit 2; }
OUT=$(mktemp -d /tmp/treefarm-load-real.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
probe () { taskset -c 0 "$PROBE" "$@"; }
echo "load-real: $RUNS runs; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

for r in $(seq "$RUNS"); do
    echo "load-real: run $r" >&2
    probe task --units "$UNITS" >>"$OUT/alone"
    probe task --units "$UNITS" --load 4 >>"$OUT/loaded"
    probe burst --bursts "$BURSTS" --period "$PERIOD" >>"$OUT/c0"
    probe burst --bursts "$BURSTS" --period "$PERIOD" --comm 1 >>"$OUT/c1"
    probe burst --bursts "$BURSTS" --period "$PERIOD" --comm 1,1 >>"$OUT/c2"
    probe burst --bursts "$BURSTS" --period "$PERIOD" --comm 0.25,0.76 >>"$OUT/mix"
done

python3 - "$OUT" "$PROBE" "$RUNS" <<'PY'
import json, statistics, subprocess, sys
out, probe, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def secs(name):
    return [json.loads(l)["seconds"] for l in open(f"{out}/{name}")]
med = statistics.median
alone, loaded = secs("alone"), secs("loaded")
ratio = med(l / a for a, l in zip(alone, loaded))
print(json.dumps({"figure": "cpu_burners", "burners": 3, "runs": runs,
                  "alone_s": round(med(alone), 6), "loaded_s": round(med(loaded), 6),
                  "ratio": round(ratio, 4), "expected": 4,
                  "error": round(abs(ratio - 4) / 4, 4),
                  "met": abs(ratio - 4) / 4 <= 0.15}))
t0, t1, t2, tm = (med(secs(n)) for n in ("c0", "c1", "c2", "mix"))
d1, d2 = t1 / t0 - 1, t2 / t0 - 1
print(json.dumps({"figure": "delay_comm", "msg_bytes": 800, "runs": runs,
                  "burst_s": round(t0, 6), "d1": round(d1, 4), "d2": round(d2, 4)}))
p = subprocess.run([probe, "predict", "--delay", f"{d1},{d2}", "--comm", "0.25,0.76"],
                   check=True, capture_output=True, text=True)
pred = json.loads(p.stdout)["slowdown"]
meas = tm / t0
err = abs(pred - meas) / meas
print(json.dumps({"figure": "contenders", "comm": [0.25, 0.76], "msg_bytes": 800,
                  "runs": runs, "burst_s": round(tm, 6), "predicted": round(pred, 4),
                  "measured": round(meas, 4), "error": round(err, 4), "met": err <= 0.15}))
PY
