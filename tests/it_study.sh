#!/usr/bin/env bash
# Integration: `treefarm bench` (docs/study/README.md) on the reference fork,
# shortened: 2 send sizes x 2 compute sizes x 3 policies, 40 tasks a run at
# time scale 40 (about 10 s). Every run is in runs.csv and complete in its
# results.json; each cell's normalized makespan is its makespan over
# root-computes' in the same cell (root-computes' exactly 1); the
# efficiency is the run's results.json's; index.html shows every PNG,
# which are PNGs. The same command again runs nothing and leaves runs.csv
# as it was; a study interrupted after its first runs runs only the
# missing ones when started again; another study's DIR, bad values and an
# unknown policy are refused with exit 2 naming them.
# --simulate (a short grid, 4 runs of 100 tasks on SimGrid): every run
# complete, each results.json "mode" "simulated"; again, nothing runs; the
# same DIR without --simulate is refused with exit 2. Without SimGrid
# built that part is skipped (a failure under CI); a simulator that
# cannot be run is refused with exit 2 saying how to get it, and a Ctrl-C
# during a simulated cell ends the simulator (a stand-in that sleeps) and
# exits 130.
source "$(dirname "$0")/lib.sh"

ARGS=(configs/fork7.json --tasks 40 --send 2,10 --compute 1,5
      --policies ia-multi,FCFS,RootComputes --time-scale 40)
D=$WORK/study

# The checker: DIR. Prints what is wrong.
cat >"$WORK/check.py" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
bad = []
rows = list(csv.DictReader(open(os.path.join(d, "runs.csv"))))
if len(rows) != 12:
    bad.append("runs.csv has %d rows, not 2 x 2 x 3 = 12" % len(rows))
span = {}
for r in rows:
    name = "%s-%s-%s-%s" % (r["send_mb"], r["units"], r["policy"], r["repeat"])
    res = json.load(open(os.path.join(d, "runs", name, "results.json")))
    if r["status"] != "complete" or res["status"] != "complete":
        bad.append("%s: %s / results.json %s" % (name, r["status"], res["status"]))
        continue
    if abs(float(r["efficiency"]) - res["efficiency"]) > 1e-8 * res["efficiency"]:
        bad.append("%s: efficiency %s, results.json %s" % (name, r["efficiency"],
                                                          res["efficiency"]))
    if abs(float(r["bound"]) - res["bound"]["tasks_per_s"]) > 1e-8 * float(r["bound"]):
        bad.append("%s: bound %s is not results.json's" % (name, r["bound"]))
    if (r["efficiency_reliable"] == "true") != res["efficiency_reliable"]:
        bad.append("%s: efficiency_reliable differs from results.json's" % name)
    span[(r["send_mb"], r["units"], r["policy"])] = float(r["makespan_s"])
summary = json.load(open(os.path.join(d, "summary.json")))
if summary["normalized_to"] != "root-computes":
    bad.append("normalized to %s" % summary["normalized_to"])
for c in summary["cells"]:
    key = ("%g" % c["send_mb"], "%g" % c["units"], c["policy"])
    ref = span.get((key[0], key[1], "root-computes"))
    if c["policy"] == "root-computes" and c["normalized"] != 1.0:
        bad.append("%s: root-computes normalized %r, not exactly 1" % (key, c["normalized"]))
    if key not in span or ref is None:
        bad.append("%s: no makespan in runs.csv" % (key,))
    elif abs(c["normalized"] - span[key] / ref) > 1e-6 * c["normalized"]:
        bad.append("%s: normalized %r, runs.csv says %r" % (key, c["normalized"],
                                                          span[key] / ref))
html = open(os.path.join(d, "index.html")).read()
for png in ["normalized-2MB.png", "normalized-10MB.png", "efficiency.png"]:
    if ('src="%s"' % png) not in html:
        bad.append("index.html does not show %s" % png)
    p = os.path.join(d, png)
    if not os.path.exists(p) or open(p, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        bad.append("%s is not a PNG" % png)
    svg = p[:-3] + "svg"
    if not os.path.exists(svg) or b"<svg" not in open(svg, "rb").read(2000):
        bad.append("%s is not an SVG" % svg)
table = open(os.path.join(d, "table.txt")).read()
if "root-computes' mean makespan" not in table or table.count("root-computes") < 5:
    bad.append("table.txt lacks the cells or its normalization note")
print("\n".join(bad))
PY

t0=$SECONDS
"$TREEFARM" bench "${ARGS[@]}" --out "$D" >"$WORK/o" 2>"$WORK/e"; rc=$?
expect "study: exit 0 (got $rc)" test "$rc" = 0 || tail -3 "$WORK/e"
expect "study: a progress line per run, the last one done" \
    sh -c "test \$(grep -c '^cell [0-9]*/12 (' '$WORK/e') = 12 && grep -q '12/12.*done' '$WORK/e'"
problems=$(python3 "$WORK/check.py" "$D" 2>&1)
expect "study: runs, normalization, efficiency, plots, index.html${problems:+: $problems}" \
    test -z "$problems"
echo "  (study: $((SECONDS - t0)) s)"

# Again into the same DIR: nothing runs, runs.csv unchanged.
cp "$D/runs.csv" "$WORK/runs.csv.1"
t0=$SECONDS
"$TREEFARM" bench "${ARGS[@]}" --out "$D" >"$WORK/o" 2>"$WORK/e"; rc=$?
expect "again: exit 0 (got $rc)" test "$rc" = 0
expect "again: says every cell is done" grep -q "every cell is done already (12 runs)" "$WORK/e"
expect "again: runs nothing" sh -c "! grep -q '^cell ' '$WORK/e'"
expect "again: runs.csv identical" cmp -s "$D/runs.csv" "$WORK/runs.csv.1"
expect "again: fast ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 5

# Another study into that DIR is refused, naming what differs.
"$TREEFARM" bench "${ARGS[@]}" --repeat 2 --out "$D" >"$WORK/o" 2>"$WORK/e"; rc=$?
expect "another study's DIR: exit 2 (got $rc)" test "$rc" = 2
expect "another study's DIR: names repeat" grep -q "its repeat is 1, not 2" "$WORK/e"

# Interrupted after its first runs, then resumed: only the missing run.
I=$WORK/int
"$TREEFARM" bench "${ARGS[@]}" --out "$I" >"$WORK/o" 2>"$WORK/e1" & ctl=$!
for _ in $(seq 300); do
    n=$(grep -c ',complete,' "$I/runs.csv" 2>/dev/null)
    test "${n:-0}" -ge 2 && break
    sleep 0.1
done
kill -INT $ctl
wait $ctl; rc=$?
expect "interrupt: exit 130 (got $rc)" test "$rc" = 130
done1=$(grep -c ',complete,' "$I/runs.csv")
expect "interrupt: some runs done, not all ($done1)" test "$done1" -ge 2 -a "$done1" -lt 12
sums=$(cd "$I/runs" && for f in */results.json; do
           grep -q '"status": "complete"' "$f" && md5sum "$f"; done)
"$TREEFARM" bench "${ARGS[@]}" --out "$I" >"$WORK/o" 2>"$WORK/e2"; rc=$?
expect "resume: exit 0 (got $rc)" test "$rc" = 0
expect "resume: says what is done" grep -q "resuming: $done1 of 12 runs are done" "$WORK/e2"
expect "resume: runs only the $((12 - done1)) missing" \
    test "$(grep -c '^cell ' "$WORK/e2")" = $((12 - done1))
expect "resume: done runs untouched" sh -c "cd '$I/runs' && echo '$sums' | md5sum -c --quiet"
problems=$(python3 "$WORK/check.py" "$I" 2>&1)
expect "resume: the whole study checks${problems:+: $problems}" test -z "$problems"

# Bad values: exit 2, naming them, before anything runs.
for v in 0 -1 x; do
    "$TREEFARM" bench configs/fork7.json --send "$v" --out "$WORK/bad" >"$WORK/o" 2>"$WORK/e"
    rc=$?
    expect "--send $v: exit 2 (got $rc)" test "$rc" = 2
    expect "--send $v: named" grep -q -- "--send: \"$v\"" "$WORK/e"
done
"$TREEFARM" bench configs/fork7.json --policies fcfs,IA:Mutli --out "$WORK/bad" \
    >"$WORK/o" 2>"$WORK/e"; rc=$?
expect "unknown policy: exit 2 (got $rc)" test "$rc" = 2
expect "unknown policy: named" grep -q '"IA:Mutli" is not a policy' "$WORK/e"
expect "bad values: nothing created" test ! -e "$WORK/bad"
expect "treefarm bench --help" sh -c "'$TREEFARM' bench --help | grep -q -- '--policies LIST'"
expect "treefarm bench --help: --simulate" \
    sh -c "'$TREEFARM' bench --help | grep -q -- '--simulate  '"

# --simulate: every cell by treefarm-sim, in a child.
SBASE=(configs/fork7.json --tasks 100 --send 2 --compute 1,5 --policies ia-multi,fcfs)
SARGS=("${SBASE[@]}" --simulate)
S=$WORK/sim
# Every run of DIR complete in runs.csv (4 rows) and simulated in its
# results.json. Prints what is wrong.
sim_rows () {
    python3 - "$1" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(d, "runs.csv"))))
bad = [] if len(rows) == 4 else ["runs.csv has %d rows, not 4" % len(rows)]
for r in rows:
    name = "%s-%s-%s-%s" % (r["send_mb"], r["units"], r["policy"], r["repeat"])
    res = json.load(open(os.path.join(d, "runs", name, "results.json")))
    if r["status"] != "complete":
        bad.append("%s: %s (%s)" % (name, r["status"], r["error"]))
    if res.get("mode") != "simulated":
        bad.append("%s: results.json mode %r" % (name, res.get("mode")))
print("; ".join(bad))
PY
}
if [ -x "$BUILD/bin/treefarm-sim" ]; then
    "$TREEFARM" bench "${SARGS[@]}" --out "$S" >"$WORK/o" 2>"$WORK/e"; rc=$?
    expect "simulated: exit 0 (got $rc)" test "$rc" = 0 || tail -3 "$WORK/e"
    problems=$(sim_rows "$S" 2>&1)
    expect "simulated: 4 runs complete, each results.json simulated${problems:+: $problems}" \
        test -z "$problems"
    "$TREEFARM" bench "${SARGS[@]}" --out "$S" >"$WORK/o" 2>"$WORK/e"; rc=$?
    expect "simulated again: exit 0 (got $rc), every cell done, nothing run" \
        sh -c "test $rc = 0 && grep -q 'every cell is done already (4 runs)' '$WORK/e' \
               && ! grep -q '^cell ' '$WORK/e'"
    "$TREEFARM" bench "${SBASE[@]}" --out "$S" >"$WORK/o" 2>"$WORK/e"; rc=$?
    expect "simulated DIR without --simulate: exit 2 (got $rc)" test "$rc" = 2
    expect "simulated DIR without --simulate: says so" \
        grep -q "it was made with --simulate, and this study is not" "$WORK/e"
elif [ "${CI:-}" = true ]; then
    nok "simulated: $BUILD/bin/treefarm-sim is missing under CI" \
        "(scripts/install-deps.sh installs libsimgrid-dev)"
else
    skip_part "simulated study: no $BUILD/bin/treefarm-sim (libsimgrid-dev, then make)"
fi

# A simulator that cannot run: refused before DIR is made. Any build.
TREEFARM_SIM=$WORK/nosim "$TREEFARM" bench "${SARGS[@]}" --out "$WORK/nosimdir" \
    >"$WORK/o" 2>"$WORK/e"; rc=$?
expect "no simulator: exit 2 (got $rc), how to get it, nothing created" \
    sh -c "test $rc = 2 && grep -q 'apt-get install libsimgrid-dev' '$WORK/e' \
           && test ! -e '$WORK/nosimdir'"

# A Ctrl-C to the study alone during a simulated cell: the study ends the
# simulator (a stand-in that would sleep a minute) and exits 130 at once.
cat >"$WORK/slowsim" <<EOF
#!/bin/sh
echo \$\$ >"$WORK/slowsim.pid"
exec sleep 60
EOF
chmod +x "$WORK/slowsim"
t0=$SECONDS
TREEFARM_SIM=$WORK/slowsim "$TREEFARM" bench "${SARGS[@]}" --out "$WORK/simint" \
    >"$WORK/o" 2>"$WORK/e" & ctl=$!
for _ in $(seq 100); do test -s "$WORK/slowsim.pid" && break; sleep 0.1; done
kill -INT $ctl
wait $ctl; rc=$?
pid=$(cat "$WORK/slowsim.pid" 2>/dev/null)
expect "simulated, interrupted: exit 130 (got $rc) at once ($((SECONDS - t0)) s)" \
    test "$rc" = 130 -a $((SECONDS - t0)) -le 15
expect "simulated, interrupted: the simulator under way ended" \
    sh -c "test -n '$pid' && ! kill -0 '$pid' 2>/dev/null"
expect "simulated, interrupted: every run pending" \
    test "$(grep -c ',pending,' "$WORK/simint/runs.csv")" = 4


# The reference study's discussion rests on scripts/study-figures.py: it
# reads the committed study whole, and order.md and split.md agree with
# the runs they were made from; a directory without its runs is refused.
python3 scripts/study-figures.py docs/study >"$WORK/fig" 2>"$WORK/fig.e"; rc=$?
expect "study-figures on docs/study: exit 0 (got $rc: $(head -c 300 "$WORK/fig.e"))" test "$rc" = 0
expect "study-figures: order.md agrees with the runs" grep -q "order.md's counts: agree" "$WORK/fig"
expect "study-figures: split.md agrees with the runs" \
    grep -q "split.md's IA:Split and IA:Multi makespans: agree in every cell" "$WORK/fig"
mkdir -p "$WORK/nostudy"
python3 scripts/study-figures.py "$WORK/nostudy" >/dev/null 2>"$WORK/fig.e"; rc=$?
expect "study-figures on a directory without runs.csv: exit 2 naming it (got $rc)" \
    sh -c "test $rc = 2 && grep -q runs.csv '$WORK/fig.e'"
# A run that gave no tail (an empty tail_s, as a failed run's row has)
# is no tail met: the report says "-" for it and counts the cell missed.
cp -r docs/study "$WORK/notail"
python3 - "$WORK/notail/runs.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
col = rows[0].index("tail_s")
for r in rows[1:]:
    if r[rows[0].index("policy")] == "ia-split" and float(r[0]) == 10 and int(r[1]) == 5:
        r[col] = ""
csv.writer(open(sys.argv[1], "w", newline="")).writerows(rows)
PY
python3 scripts/study-figures.py "$WORK/notail" >"$WORK/fig" 2>"$WORK/fig.e"; rc=$?
expect "study-figures with a tail missing: exit 0 (got $rc: $(tail -c 200 "$WORK/fig.e"))" \
    test "$rc" = 0
expect "study-figures with a tail missing: that cell's tail is -, and missed" sh -c "
    grep -q '(10 MB, 5): IA:Split.s tail; .*: - s;' '$WORK/fig' &&
    grep -q '^- ... not met in N: .*(10 MB, 5)' '$WORK/fig'"

finish
