#!/usr/bin/env bash
# Integration: re-planning for free (docs/adapt.md, "Re-planning"). A star
# of a root and two children under IA:Single, Z = 4 MB, w = 10 units, the
# root at C = 40 units/s (C^n = 4 tasks/s): IR_s Z C^n is 0.07 x 4 x 4 =
# 1.12 and 0.08 x 4 x 4 = 1.28 for the children, both >= 1, so the
# never-use rule leaves the root computing alone. --load puts a step to
# load 4.0 on the root at 5 platform seconds: its compute rate falls to a
# fraction of 40, and IR_s Z C^n below 1 for both. With --adapt the root
# declares the change in its compute rate, the policy applies the rule
# with the live C, and the children receive tasks; without --adapt they
# get none. Every task is recorded exactly once in both runs.
source "$(dirname "$0")/lib.sh"

# The changes are declared by the live estimates and re-planned by the
# adaptation (node/adaptor.c); without them nothing re-plans.
src=${TF_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
grep -q "core_set_compute_rate" "$src/node/adaptor.c" 2>/dev/null ||
    skip "the adaptation (node/adaptor.c) does not re-plan changes in this build"

cat >"$WORK/star.json" <<'EOF'
{
  "name": "star",
  "tasks": {"count": 200, "input_mb": 4, "units": 10},
  "policy": "ia-single",
  "platform": {"mode": "emulated", "time_scale": 20, "payload_scale": 0.01},
  "tree": [
    {"name": "root", "compute": 40},
    {"name": "c1", "parent": "root", "compute": 40, "link_mbps": 10,
     "link_idle_mbps": 10, "ir_send": 0.07, "ir_recv": 0.02},
    {"name": "c2", "parent": "root", "compute": 40, "link_mbps": 10,
     "link_idle_mbps": 10, "ir_send": 0.08, "ir_recv": 0.02}
  ]
}
EOF
cat >"$WORK/load.json" <<'EOF'
{"root": {"steps": [{"at_s": 5, "load": 4.0}]}}
EOF

# children_computed DIR: c1's and c2's computed counters, summed.
children_computed () {
    python3 -c '
import json, sys
print(sum(n["computed"] for n in json.load(open(sys.argv[1]))["nodes"]
          if n["name"] in ("c1", "c2")))' "$1/results.json"
}

for mode in static adapt; do
    flag=
    [ "$mode" = adapt ] && flag=--adapt
    "$TREEFARM" run "$WORK/star.json" --load "$WORK/load.json" $flag --out "$WORK/$mode" \
        --quiet >/dev/null 2>"$WORK/$mode.err"
    rc=$?
    expect "$mode run: exit 0 (got $rc)" test "$rc" = 0
    [ "$rc" = 0 ] || sed 's/^/    /' "$WORK/$mode.err" | head -5
    expect "$mode run: every task once" tasks_exactly_once "$WORK/$mode" 200
done

n=$(children_computed "$WORK/static") || n=?
echo "    without --adapt the children computed $n tasks"
expect "without --adapt the never-use rule keeps the children idle" test "$n" = 0

n=$(children_computed "$WORK/adapt") || n=?
echo "    with --adapt the children computed $n tasks"
expect "with --adapt the root's lower compute rate lets the children work" \
    test "$n" != ? -a "$n" != 0
# nodes.csv says the same, per node.
expect "nodes.csv: c1 or c2 computed tasks" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sys.exit(0 if sum(int(r["computed"]) for r in rows if r["name"] in ("c1", "c2")) > 0
         else 1)' "$WORK/adapt/nodes.csv"

# The change behind it: the root's compute rate, declared and logged.
expect "the root declared a change in its compute rate" \
    grep -q "root: compute [0-9.]* -> [0-9.]* units/s at" "$WORK/adapt.err"
grep "root: compute" "$WORK/adapt.err" | head -2 | sed 's/^/    /'
# The first bound (the dedicated platform's) still agrees with the
# controller's; the live one is below it.
expect "results.json: bound agrees, the live bound below the first" python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["bound"]
print("    tree %s, live %s" % (b["tree"], b.get("live")))
sys.exit(0 if b["agree"] is True and b.get("live") is not None
         and b["live"] < b["tree"] else 1)' "$WORK/adapt/results.json"

finish
