#!/usr/bin/env bash
# Integration: emulated background load (docs/load.md). One node, solo,
# computes 100 tasks of 10 units at 5 units/s (200 platform seconds),
# first dedicated, then under a --load file that puts a job stream of
# U = 0.5 on it (exponential demands of 0.2 s). Processor sharing leaves
# the node 1 - U of its CPU, so each unit takes about twice as long: the
# loaded run's compute seconds per unit are between 1.6 and 2.6 times the
# dedicated run's (generous: the stream's own variation over 200 s is a
# few percent, and a busy machine makes both runs late). Every task is
# computed exactly once in both. Then a child's link shared with its
# communicating contender.
# Runs alone (tests/run.sh): compute rates measured under emulated background load.
source "$(dirname "$0")/lib.sh"

cat >"$WORK/solo.json" <<'EOF'
{
  "name": "solo",
  "tasks": {"count": 100, "input_mb": 0.01, "units": 10},
  "policy": "fcfs",
  "platform": {"mode": "emulated", "time_scale": 100},
  "tree": [{"name": "solo", "compute": 5}]
}
EOF
cat >"$WORK/load.json" <<'EOF'
{"solo": {"jobs": {"utilization": 0.5, "demand": {"dist": "exp", "mean_s": 0.2}},
          "seed": 11}}
EOF

"$TREEFARM" run "$WORK/solo.json" --out "$WORK/base" --quiet >/dev/null 2>"$WORK/base.err"
rc=$?
expect "dedicated run: exit 0 (got $rc)" test "$rc" = 0
expect "dedicated run: every task once" tasks_exactly_once "$WORK/base" 100

"$TREEFARM" run "$WORK/solo.json" --load "$WORK/load.json" --out "$WORK/loaded" --quiet \
    >/dev/null 2>"$WORK/loaded.err"
rc=$?
expect "loaded run: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || sed 's/^/    /' "$WORK/loaded.err" | head -5
expect "loaded run: every task once" tasks_exactly_once "$WORK/loaded" 100

# per_unit DIR: compute seconds per unit of solo in DIR/results.json.
per_unit () {
    python3 -c '
import json, sys
n = [n for n in json.load(open(sys.argv[1]))["nodes"] if n["name"] == "solo"][0]
print(n["compute_seconds"] / (n["computed"] * 10))' "$1/results.json"
}
ratio_ok () {
    local base loaded
    base=$(per_unit "$WORK/base") && loaded=$(per_unit "$WORK/loaded") || return 1
    python3 -c '
import sys
b, l = float(sys.argv[1]), float(sys.argv[2])
r = l / b
print("    loaded / dedicated compute seconds per unit: %.3f" % r)
sys.exit(0 if 1.6 <= r <= 2.6 else 1)' "$base" "$loaded"
}
expect "U = 0.5 doubles a unit's compute time (ratio in [1.6, 2.6])" ratio_ok

# The other kinds, each doubling a unit's compute time over the run: a
# contender computing all the time (a second sharer of the CPU); a step
# to L = 3 halfway through the dedicated run's work (100 platform s at
# 5 units/s, then 500 units at 5/3: 400 s for 1000 units); a trace
# holding L = 2. Each run's results.json names its kind and predicts the
# rate at its end.
printf 'time_s,load\n0,2\n' >"$WORK/l2.csv"
kind_run () {   # NAME LOAD-JSON KIND PREDICTED
    echo "{\"solo\": $2}" >"$WORK/$1.json"
    "$TREEFARM" run "$WORK/solo.json" --load "$WORK/$1.json" --out "$WORK/$1" --quiet \
        >/dev/null 2>"$WORK/$1.err"
    local rc=$?
    expect "$1: exit 0 (got $rc)" test "$rc" = 0
    [ "$rc" = 0 ] || sed 's/^/    /' "$WORK/$1.err" | head -5
    expect "$1: every task once" tasks_exactly_once "$WORK/$1" 100
    expect "$1: load kind $3, predicted $4 units/s" python3 -c '
import json, sys
n = [n for n in json.load(open(sys.argv[1]))["nodes"] if n["name"] == "solo"][0]
print("    kind %s, predicted %.3f" % (n["load"]["kind"], n["compute_predicted"]))
sys.exit(0 if n["load"]["kind"] == sys.argv[2]
         and abs(n["compute_predicted"] - float(sys.argv[3])) < 1e-6 else 1)' \
        "$WORK/$1/results.json" "$3" "$4"
    local base loaded
    base=$(per_unit "$WORK/base"); loaded=$(per_unit "$WORK/$1")
    expect "$1: a unit's compute time doubles (ratio in [1.6, 2.6])" python3 -c '
import sys
r = float(sys.argv[2]) / float(sys.argv[1])
print("    loaded / dedicated compute seconds per unit: %.3f" % r)
sys.exit(0 if 1.6 <= r <= 2.6 else 1)' "$base" "$loaded"
}
kind_run contender '{"contenders": [{"compute": 1}], "seed": 5}' contenders 2.5
kind_run step '{"steps": [{"at_s": 100, "load": 3}]}' steps 1.6666666666666667
kind_run trace '{"trace": "l2.csv"}' trace 2.5

# A link: head (1 unit/s) feeds kid (fast, 1 MB/s link) 1 MB tasks of 1
# unit, so each computes about half. A contender on kid communicating all
# the time takes half of kid's link: kid gets 0.5 tasks/s to head's 1, a
# third of the tasks instead of a half (kid's count under load over its
# dedicated count: 2/3; checked within [0.5, 0.85]).
cat >"$WORK/pair.json" <<'EOF'
{
  "name": "pair",
  "tasks": {"count": 60, "input_mb": 1, "units": 1},
  "policy": "fcfs",
  "platform": {"mode": "emulated", "time_scale": 20, "payload_scale": 0.01},
  "tree": [{"name": "head", "compute": 1},
           {"name": "kid", "parent": "head", "compute": 100, "link_mbps": 1}]
}
EOF
cat >"$WORK/comm.json" <<'EOF'
{"kid": {"contenders": [{"compute": 0, "comm": 1, "msg_bytes": 800}], "seed": 3}}
EOF
"$TREEFARM" run "$WORK/pair.json" --out "$WORK/pair0" --quiet >/dev/null 2>"$WORK/pair0.err"
rc=$?
expect "pair, dedicated: exit 0 (got $rc)" test "$rc" = 0
"$TREEFARM" run "$WORK/pair.json" --load "$WORK/comm.json" --out "$WORK/pair1" --quiet \
    >/dev/null 2>"$WORK/pair1.err"
rc=$?
expect "pair, kid's link shared: exit 0 (got $rc)" test "$rc" = 0
expect "pair, kid's link shared: every task once" tasks_exactly_once "$WORK/pair1" 60

# kid_computed DIR: the tasks kid computed.
kid_computed () {
    python3 -c '
import json, sys
print([n for n in json.load(open(sys.argv[1]))["nodes"] if n["name"] == "kid"][0]["computed"])' \
        "$1/results.json"
}
share_ok () {
    local a b
    a=$(kid_computed "$WORK/pair0") && b=$(kid_computed "$WORK/pair1") || return 1
    echo "    kid computed $a dedicated, $b with its link shared"
    python3 -c '
import sys
r = int(sys.argv[2]) / int(sys.argv[1])
sys.exit(0 if 0.5 <= r <= 0.85 else 1)' "$a" "$b"
}
expect "a contender always communicating halves kid's link" share_ok

finish
