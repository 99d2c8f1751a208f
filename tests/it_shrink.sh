#!/usr/bin/env bash
# Integration: a child that costs its parent more than it returns is
# drained and let go (docs/adapt.md, "Shrink"), real processes through
# `treefarm run --adapt`.
# The tree: a fast root R (30 units/s, 6 tasks/s of 5 units) and two
# children of 5 units/s, A on a free link and X whose transfers cost R
# (IR_s 0.02 per MB/s, 10 MB tasks): IR_s Z C = 1.2 on the dedicated
# platform, so the bound never uses X. R's background load of 4.0 until
# 40 s makes sending to X pay (IR_s Z C = 0.3): once R declares its
# compute fell, X gets tasks; once R declares it recovered, X costs more
# than it returns again.
# - --reclaim always: R shrinks X (an action "shrink", taken), X gives
#   back or finishes what it holds, R says DRAINED, the controller stops
#   X: X has left (left_s after the recovery), is not lost, and every task
#   is recorded once.
# - gated: moving X's last tasks back costs more than it saves here (one
#   10 MB task over its 10 MB/s link against under 1 s saved): the shrink
#   is weighed, declined and said, and X stays.
# - on the dedicated platform R declares nothing: the configured plan
#   never uses X, nothing is shrunk.
# Runs alone (tests/run.sh): decisions from rates measured live, which another script's CPU would move.
source "$(dirname "$0")/lib.sh"

cat >"$WORK/shr.json" <<'JSON'
{
  "name": "shrink3", "tasks": {"count": 500, "input_mb": 10, "units": 5},
  "policy": "ia-multi",
  "platform": {"time_scale": 20, "payload_scale": 0.001, "buffer": 2},
  "tree": [
    {"name": "R", "compute": 30},
    {"name": "A", "parent": "R", "compute": 5, "link_mbps": 20},
    {"name": "X", "parent": "R", "compute": 5, "link_mbps": 10, "ir_send": 0.02}
  ]
}
JSON
echo '{"R": {"steps": [{"at_s": 0, "load": 4.0}, {"at_s": 40, "load": 1.0}]}}' \
    >"$WORK/load.json"

# run NAME ARGS...: the run into $WORK/NAME (stderr NAME.err); rc in RC.
run () {
    local name=$1; shift
    "$TREEFARM" run "$WORK/shr.json" --adapt --out "$WORK/$name" --quiet "$@" >/dev/null \
        2>"$WORK/$name.err"
    RC=$?
}

# shrunk DIR TAKEN LEFT: results.json's actions hold exactly one "shrink"
# of X by R, taken (1) or not (0), after 40 s; X has left (LEFT 1, its
# left_s after the action) or not (0); X is not lost.
shrunk () {
    python3 - "$@" <<'PY'
import json, sys
d, taken, left = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
r = json.load(open(d + "/results.json"))
s = [a for a in r["actions"] if a["what"] == "shrink"]
x = [n for n in r["nodes"] if n["name"] == "X"][0]
bad = []
if len(s) != 1 or s[0]["child"] != "X" or s[0]["node"] != "R" or s[0]["taken"] != taken \
        or not s[0]["at_s"] > 40:
    bad.append("shrink actions %s" % s)
if left != ("left_s" in x) or (left and s and not x["left_s"] >= s[0]["at_s"]):
    bad.append("X %s" % x)
if x["lost"] or r["lost"]:
    bad.append("lost %s" % r["lost"])
for b in bad:
    print("    " + b)
sys.exit(1 if bad else 0)
PY
}

run always --load "$WORK/load.json" --reclaim always
run_survived "always" "$WORK/always" 500 "$RC" "$WORK/always.err"
expect "always: R shrinks X once its compute recovered, X leaves, not lost" \
    shrunk "$WORK/always" 1 1
expect "always: the log says X drained and left" grep -q "X drained by R: it leaves the run" \
    "$WORK/always.err"

run gated --load "$WORK/load.json"
run_survived "gated" "$WORK/gated" 500 "$RC" "$WORK/gated.err"
expect "gated: the shrink is weighed and declined, X stays" shrunk "$WORK/gated" 0 0
expect "gated: the log says why" grep -q "no shrink X: sending to it costs more" \
    "$WORK/gated.err"

run dedicated
run_survived "dedicated" "$WORK/dedicated" 500 "$RC" "$WORK/dedicated.err"
expect "dedicated: nothing declared, nothing shrunk" \
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if not [a for a in r['actions'] if a['what']=='shrink'] else 1)" "$WORK/dedicated/results.json"

finish
