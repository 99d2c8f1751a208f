#!/usr/bin/env bash
# Integration: the effective compute rate a node measures of itself, on a
# run without background load. A root and a leaf without interference
# (no IR) compute 400 one-unit tasks at time scale 20; each reports its
# configured rate, the rate its (absent) load predicts, which is the
# configured one, and the rate it measured, within 10% of it (generous:
# the measurement counts the loop's lateness at each task's end as
# computing); the background is {utilization 0, kind "none"}; nodes.csv,
# the samples and the trace carry the same, and the summary prints no
# rate line (only nodes with load get one).
# Runs alone (tests/run.sh): measures a node's compute rate against its configured one.
source "$(dirname "$0")/lib.sh"

cat >"$WORK/pair.json" <<'JSON'
{
  "name": "pair",
  "tasks": {"count": 400, "input_mb": 0.01, "units": 1},
  "policy": "fcfs",
  "platform": {"mode": "emulated", "time_scale": 20},
  "tree": [
    {"name": "top", "compute": 9.5},
    {"name": "leaf", "parent": "top", "compute": 6.25, "link_mbps": 50}
  ]
}
JSON

out="$WORK/run"
"$TREEFARM" run "$WORK/pair.json" --out "$out" --trace "$WORK/trace.json" \
    >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
expect "the run completes (exit $rc)" test "$rc" = 0
[ "$rc" = 0 ] || { tail -5 "$WORK/run.err"; finish; }

expect "results.json: configured = C, predicted = C, measured within 10% of C" \
    python3 - "$out/results.json" <<'PY'
import json, math, sys
bad = []
conf = {"top": 9.5, "leaf": 6.25}
for n in json.load(open(sys.argv[1]))["nodes"]:
    c = conf[n["name"]]
    keys = ("compute_configured", "compute_predicted", "compute_measured",
            "compute_stderr", "load")
    if any(k not in n for k in keys):
        bad.append("%s: missing %s" % (n["name"], [k for k in keys if k not in n]))
        continue
    if n["compute_configured"] != c or n["compute_predicted"] != c:
        bad.append("%s: configured %r, predicted %r, not %g"
                   % (n["name"], n["compute_configured"], n["compute_predicted"], c))
    m, se = n["compute_measured"], n["compute_stderr"]
    if n["computed"] < 50:
        bad.append("%s computed only %d tasks" % (n["name"], n["computed"]))
    elif not (isinstance(m, float) and abs(m - c) <= 0.1 * c):
        bad.append("%s: measured %r, not within 10%% of %g" % (n["name"], m, c))
    elif not (isinstance(se, float) and 0 <= se < 0.1 * c):
        bad.append("%s: stderr %r" % (n["name"], se))
    if n["load"] != {"utilization": 0, "kind": "none"}:
        bad.append("%s: load %r" % (n["name"], n["load"]))
bad and print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

expect "nodes.csv: the rate columns agree with results.json" \
    python3 - "$out" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
rows = {r["name"]: r for r in csv.DictReader(open(os.path.join(d, "nodes.csv")))}
ok = True
for n in json.load(open(os.path.join(d, "results.json")))["nodes"]:
    r = rows[n["name"]]
    ok &= float(r["compute_configured"]) == n["compute_configured"]
    ok &= abs(float(r["compute_measured"]) - n["compute_measured"]) < 1e-6 * n["compute_measured"]
    ok &= r["load_utilization"] == "0" and r["load_kind"] == "none"
sys.exit(0 if ok else 1)
PY

expect "samples: load_share 0 throughout, the measured rate once computing" \
    python3 - "$out/samples" <<'PY'
import csv, os, sys
ok = True
for name in ("top", "leaf"):
    rows = list(csv.DictReader(open(os.path.join(sys.argv[1], name + ".csv"))))
    ok &= len(rows) > 3 and all(float(r["load_share"]) == 0 for r in rows)
    ok &= rows[-1]["measured_units_per_s"] != ""
    ok &= float(rows[0]["t0"]) < 1     # platform seconds since START
sys.exit(0 if ok else 1)
PY

expect "the trace has no background track (no node has load)" \
    python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sys.exit(0 if ev and not [e for e in ev if e.get("ph") == "C"] else 1)' "$WORK/trace.json"

expect "the summary prints no rate line without load" \
    bash -c '! grep -q "configured" "$1"' _ "$WORK/run.out"

finish
