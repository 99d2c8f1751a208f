#!/usr/bin/env bash
# Integration: nodes measure their own interference.
# - treefarm measure (3-point calibration) recovers, in emulation, every
#   node's C within 5% and every IR within 15% relative, on a fork whose
#   root has three children and on a 3-level tree whose inner nodes have
#   several children and stream while receiving; ir_send_alone (each
#   link's phase again with the child idle) within 15% of the configured
#   ir_send, since the emulated interference does not depend on whether
#   the child computes;
# - in each idle phase the idle child computes nothing (emulated and real
#   kernel) while its parent streams to it, and only it is idle; the
#   IR_s alone measure.json and platform.json give is the formula on that
#   phase's own figures (not its twin's, which in emulation agree but for
#   noise);
# - the platform file it writes is accepted by bound and run; the plot is
#   written as PNG and SVG;
# - the online fit during a run recovers C within 5% and every IR within 10%;
# - measuring changes no task's outcome: calibration touches no task, and a
#   run with sampling completes every task exactly once;
# - a real-kernel calibration on loopback writes a platform file and plot;
# - every file of a calibration goes into one directory: by default
#   results/NAME-TIME below the current directory, which gets nothing else;
#   with --dir, that directory, and the current one gets nothing; the last
#   line says where; a --dir or --out that cannot be written fails at once
#   with exit 2, naming it;
# - the plot draws no label inside the plot area (they covered each other)
#   and keeps its key outside, to the right.
# Runs alone (tests/run.sh): measures compute rates and interference against the config's.
source "$(dirname "$0")/lib.sh"

# The tolerances are wide enough for a machine busy with other work (on a
# quiet one every IR comes within 4 to 8%, docs/measure.md; under load
# tree3's smallest IR_s, rackA-n2's 0.0212, came out 11% low three runs
# in a row, before this session's changes and after) and narrow enough
# for any error of the formulas: the published misprint of IR_s, a
# swapped rate or a missing term is off by far more than 15%.
close_to () {   # platform.json reference.json: C 5%, IR 15% relative
    python3 - "$1" "$2" <<'PY'
import json, sys
got = {n["name"]: n for n in json.load(open(sys.argv[1]))["tree"]}
ref = {n["name"]: n for n in json.load(open(sys.argv[2]))["tree"]}
bad = []
for name, r in ref.items():
    g = got[name]
    if abs(g["compute"] - r["compute"]) > 0.05 * r["compute"]:
        bad.append("%s C %.4f vs %.4f" % (name, g["compute"], r["compute"]))
    for k, want in (("ir_recv", "ir_recv"), ("ir_send", "ir_send"),
                    ("ir_send_alone", "ir_send")):
        if r.get(want) and abs(g.get(k, 0) - r[want]) > 0.15 * r[want]:
            bad.append("%s %s %.5f vs %.5f" % (name, k, g.get(k, 0), r[want]))
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY
}

# idle_phases MEASURE.json CONFIG: 1 + 2 x links phases; in each idle
# phase (every second one from phase 2) the link's child is the one idle
# node and computed nothing, and its parent sent to it.
idle_phases () {
    python3 - "$1" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
tree = json.load(open(sys.argv[2]))["tree"]
parent = {n["name"]: n.get("parent") for n in tree}
links = [n["name"] for n in tree if n.get("parent")]
bad = []
if len(m["phases"]) != 1 + 2 * len(links):
    bad.append("%d phases for %d links" % (len(m["phases"]), len(links)))
for k, child in enumerate(links):
    both, idle = m["phases"][1 + 2 * k], m["phases"][2 + 2 * k]
    rows = {r["node"]: r for r in idle["nodes"]}
    if both["idle"] is not None or idle["idle"] != child:
        bad.append("phases %d, %d: idle %s, %s" % (both["phase"], idle["phase"],
                                                   both["idle"], idle["idle"]))
        continue
    if rows[child]["units_per_s"] != 0:
        bad.append("%s computed %g units/s idle" % (child, rows[child]["units_per_s"]))
    if not rows[parent[child]]["send_mbps"][child] > 0:
        bad.append("%s sent nothing to idle %s" % (parent[child], child))
    busy = [n for n, r in rows.items() if n != child and not r["units_per_s"] > 0]
    if busy:
        bad.append("phase %d: %s idle too" % (idle["phase"], busy))
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY
}

# alone_formula MEASURE.json PLATFORM.json CONFIG: every non-root node's
# ir_s_alone is IR_s's formula on its parent's figures in its idle phase,
# and platform.json's ir_send_alone that, a negative one as 0.
alone_formula () {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
plat = {n["name"]: n for n in json.load(open(sys.argv[2]))["tree"]}
tree = json.load(open(sys.argv[3]))["tree"]
parent = {n["name"]: n.get("parent") for n in tree}
res = {n["name"]: n for n in m["nodes"]}
bad = []
for k, child in enumerate(n["name"] for n in tree if n.get("parent")):
    p = parent[child]
    row = {r["node"]: r for r in m["phases"][2 + 2 * k]["nodes"]}[p]
    rr = row["recv_mbps"] if parent[p] else 0
    ir_r = res[p].get("ir_r", 0)
    want = (1 - ir_r * rr - row["units_per_s"] / res[p]["c"]) / row["send_mbps"][child]
    got = res[child]["ir_s_alone"]
    if abs(got - want) > 1e-9 * max(abs(want), 1e-6):
        bad.append("%s ir_s_alone %.9g, its idle phase gives %.9g" % (child, got, want))
    if abs(plat[child]["ir_send_alone"] - max(got, 0)) > 1e-12:
        bad.append("%s platform ir_send_alone %.9g" % (child, plat[child]["ir_send_alone"]))
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY
}

# Accuracy is a timing property: on a machine busy with other work the
# emulated nodes fall behind their clock and measure rates a few percent
# off (the fidelity the runs report). So an accuracy check that misses is
# tried again, up to ATTEMPTS times in all, and says so; it fails only if
# every attempt misses. A wrong calibration misses every time.
ATTEMPTS=3

# measure_close CFG NAME: calibrate CFG; 0 if C and every IR are close.
measure_close () {
    local cfg=$1 name=$2 try
    for try in $(seq "$ATTEMPTS"); do
        rm -rf "$WORK/m-$name"
        "$TREEFARM" measure "$cfg" --dir "$WORK/m-$name" \
            --out "$WORK/$name-platform.json" --quiet >"$WORK/m-$name.out" \
            2>"$WORK/m-$name.err"
        echo $? >"$WORK/m-$name.rc"
        [ "$(cat "$WORK/m-$name.rc")" = 0 ] || return 1
        close_to "$WORK/$name-platform.json" "$cfg" && return 0
        echo "  (attempt $try of $ATTEMPTS missed)"
    done
    return 1
}

for cfg in tests/configs/good/interference.json configs/tree3.json; do
    name=$(basename "$cfg" .json)
    expect "measure $name: C within 5%, every IR within 15%" measure_close "$cfg" "$name"
    rc=$(cat "$WORK/m-$name.rc")
    expect "measure $name: exit 0 (got $rc)" test "$rc" = 0
    [ "$rc" = 0 ] || { tail -5 "$WORK/m-$name.err"; continue; }
    expect "measure $name: table printed, with IR_s alone" grep -q "IR_s alone" "$WORK/m-$name.out"
    expect "measure $name: each idle phase's child computed nothing" \
        idle_phases "$WORK/m-$name/measure.json" "$cfg"
    expect "measure $name: IR_s alone from the idle phases' figures" \
        alone_formula "$WORK/m-$name/measure.json" "$WORK/m-$name/platform.json" "$cfg"
    expect "measure $name: no task touched" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["completed"] == 0 and sum(n["computed"] for n in r["nodes"]) == 0 else 1)' \
        "$WORK/m-$name/results.json"
    root=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tree"][0]["name"])' "$cfg")
    expect "measure $name: PNG plot" sh -c "head -c 8 '$WORK/m-$name/interference-$root.png' | grep -q PNG"
    expect "measure $name: SVG plot" grep -q "<svg" "$WORK/m-$name/interference-$root.svg"
    expect "measure $name: bound accepts the platform file" \
        "$TREEFARM" bound "$WORK/$name-platform.json" --json
done
no_node_alive "$WORK/m-tree3" && ok "measure: no node process left" || nok "measure: no node process left"

# A run on the measured platform (60 of its 400 tasks: only that it runs
# and completes is checked here), and the online fit during a run.
python3 - "$WORK/interference-platform.json" "$WORK/platform-60.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["tasks"]["count"] = 60
json.dump(c, open(sys.argv[2], "w"))
PY
"$TREEFARM" run "$WORK/platform-60.json" --out "$WORK/run-measured" --quiet \
    >/dev/null 2>"$WORK/rm.err"
expect "run accepts the measured platform" tasks_exactly_once "$WORK/run-measured" 60
fit_close () {   # results.json: the online fit, C 5%, IR 10%, with errors
    python3 - "$1" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
cfg = {n["name"]: n for n in r["config"]["tree"]}
bad = []
for n in r["nodes"]:
    f, c = n["fit"], cfg[n["name"]]
    if f["n"] < 20 or abs(f["c"] - c["compute"]) > 0.05 * c["compute"]:
        bad.append("%s n %d C %s" % (n["name"], f["n"], f["c"]))
    if "ir_recv" in c and abs(f["ir_recv"] - c["ir_recv"]) > 0.1 * c["ir_recv"]:
        bad.append("%s ir_recv %s" % (n["name"], f["ir_recv"]))
    for k, v in f["ir_send"].items():
        if abs(v - cfg[k]["ir_send"]) > 0.1 * cfg[k]["ir_send"] or not f["ir_send_se"][k] > 0:
            bad.append("%s ir_send %s %s" % (n["name"], k, v))
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY
}

# online_close: a run with sampling whose online fit is close.
online_close () {
    local try
    for try in $(seq "$ATTEMPTS"); do
        rm -rf "$WORK/fit"
        "$TREEFARM" run tests/configs/good/interference.json --out "$WORK/fit" --quiet \
            >/dev/null 2>&1 || return 1
        fit_close "$WORK/fit/results.json" && return 0
        echo "  (attempt $try of $ATTEMPTS missed)"
    done
    return 1
}
expect "online fit: C within 5%, every IR within 10%, with standard errors" online_close
expect "sampled run: every task exactly once" tasks_exactly_once "$WORK/fit" 400
expect "sampled run: a samples CSV per node" \
    test "$(ls "$WORK/fit/samples" | wc -l)" = 4

# "ir": "measured": IA policies order by the online estimates; still every
# task exactly once (150 tasks: the estimates are in use after the first
# samples).
sed -e 's/"sample_ms": 100/"sample_ms": 100, "ir": "measured"/' \
    -e 's/"count": 400/"count": 150/' \
    tests/configs/good/interference.json >"$WORK/measured-ir.json"
"$TREEFARM" run "$WORK/measured-ir.json" --out "$WORK/mir" --quiet >/dev/null 2>&1
expect "\"ir\": \"measured\" run: every task exactly once" tasks_exactly_once "$WORK/mir" 150

# The real kernel on loopback: whatever it measures, it writes it down.
"$TREEFARM" measure configs/real4.json --seconds 1 --dir "$WORK/real" --plot w2 --quiet \
    >"$WORK/real.out" 2>"$WORK/real.err"
rc=$?
expect "real-kernel measure: exit 0 (got $rc)" test "$rc" = 0
expect "real-kernel measure: platform file loads" "$TREEFARM" bound "$WORK/real/platform.json" --json
expect "real-kernel measure: plot written" test -s "$WORK/real/interference-w2.png"
expect "real-kernel measure: each idle phase's child computed nothing" \
    idle_phases "$WORK/real/measure.json" configs/real4.json
expect "real-kernel measure: IR_s alone from the idle phases' figures" \
    alone_formula "$WORK/real/measure.json" "$WORK/real/platform.json" configs/real4.json

# Where a calibration writes. CAL_FILES: every file of one (chain4 plots
# its root, campus).
CAL_FILES="calibration.txt platform.json measure.json results.json nodes.csv
    interference-campus.png interference-campus.svg interference-campus.gp
    interference-campus.dat"
all_in () {   # DIR: every calibration file is in DIR; prints the missing
    local f missing=
    for f in $CAL_FILES; do [ -s "$1/$f" ] || missing="$missing $f"; done
    [ -z "$missing" ] || echo "  missing in $1:$missing"
    [ -z "$missing" ]
}
CHAIN4=$PWD/configs/chain4.json
mkdir "$WORK/cwd-default" "$WORK/cwd-named"
(cd "$WORK/cwd-default" && "$TREEFARM" measure "$CHAIN4" --seconds 2 --quiet \
    >"$WORK/def.out" 2>"$WORK/def.err")
rc=$?
expect "measure, default directory: exit 0 (got $rc: $(tail -c 300 "$WORK/def.err"))" test "$rc" = 0
expect "measure, default directory: nothing in the current directory but results/" \
    test "$(ls -A "$WORK/cwd-default")" = results
def=$(ls -d "$WORK"/cwd-default/results/chain4-* 2>/dev/null | head -1)
expect "measure, default directory: every file in results/chain4-TIME" all_in "$def"
expect "measure, default directory: the last line names it" \
    test "$(tail -1 "$WORK/def.out")" = "results: results/${def##*/}/"
expect "measure: the table is calibration.txt, as printed first" sh -c \
    "head -n \$(wc -l <'$def/calibration.txt') '$WORK/def.out' | cmp -s - '$def/calibration.txt'"
(cd "$WORK/cwd-named" && "$TREEFARM" measure "$CHAIN4" --seconds 2 --quiet \
    --dir "$WORK/named" --out "$WORK/named-copy.json" >"$WORK/named.out" 2>&1)
rc=$?
expect "measure --dir: exit 0 (got $rc: $(tail -c 300 "$WORK/named.out"))" test "$rc" = 0
expect "measure --dir: nothing in the current directory" \
    test -z "$(ls -A "$WORK/cwd-named")"
expect "measure --dir: every file in DIR" all_in "$WORK/named"
expect "measure --out: a copy of DIR/platform.json" \
    cmp -s "$WORK/named/platform.json" "$WORK/named-copy.json"
expect "measure --dir: the last line names it" \
    test "$(tail -1 "$WORK/named.out")" = "results: $WORK/named/"

# The plot: no label inside the plot area, the key outside on the right.
gp=$WORK/named/interference-campus.gp
expect "measure plot: no labels in the plot area" \
    sh -c "! grep -E -q 'with labels|^set label' '$gp'"
expect "measure plot: key outside, right, as a table" \
    grep -q "^set key outside right top vertical Left reverse" "$gp"
expect "measure plot: a key entry per phase with its point" \
    test "$(grep -c 'with linespoints.* title "to ' "$gp")" = 1
expect "measure plot: PNG rendered" \
    sh -c "head -c 8 '$WORK/named/interference-campus.png' | grep -q PNG"

# A directory that cannot be written: exit 2 before any node starts. Root
# writes through permission bits, but not into /proc.
ro=$WORK/read-only
mkdir "$ro" && chmod 555 "$ro"
[ "$(id -u)" = 0 ] && ro=/proc
"$TREEFARM" measure "$CHAIN4" --seconds 2 --dir "$ro" >"$WORK/ro.out" 2>"$WORK/ro.err"
rc=$?
expect "measure --dir unwritable: exit 2 (got $rc)" test "$rc" = 2
expect "measure --dir unwritable: the error names it" grep -q -F "$ro" "$WORK/ro.err"
expect "measure --dir unwritable: no phase ran" test ! -s "$WORK/ro.out"
"$TREEFARM" measure "$CHAIN4" --seconds 2 --dir "$WORK/ro-out" --out "$ro/p.json" \
    >"$WORK/ro.out" 2>"$WORK/ro.err"
rc=$?
expect "measure --out unwritable: exit 2 (got $rc), naming it" \
    sh -c "test $rc = 2 && grep -q -F '$ro/p.json' '$WORK/ro.err'"

# Bad usage.
"$TREEFARM" measure configs/tree3.json --plot nosuch --dir "$WORK/x" >/dev/null 2>"$WORK/e"
expect "measure --plot of an unknown node: exit 2" test "$?" = 2
"$TREEFARM" measure configs/tree3.json --seconds 1 --warmup 2 >/dev/null 2>"$WORK/e"
expect "measure --warmup >= --seconds: exit 2" test "$?" = 2
expect "treefarm measure --help" "$TREEFARM" measure --help
expect "treefarm measure --help: the idle phases" \
    sh -c "'$TREEFARM' measure --help | grep -q 'child idle'"

finish
