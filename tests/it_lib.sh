#!/usr/bin/env bash
# The checks the other integration scripts rely on must be able to fail:
# tasks_exactly_once is run on a results directory from a real run, then on
# copies broken one way each (a duplicate, a gap, a stranger, a count that
# disagrees), and must accept the first and refuse every other; a
# re-parented node's count may exceed its rows, never fall short; an
# end-game copy's extra computation is accepted within what the run says
# it wasted and copied.
source "$(dirname "$0")/lib.sh"

sed -e 's/"count": *[0-9]*/"count": 60/' configs/tree3.json >"$WORK/tree3.json"
# The reference run, with the end-game (whose copies compute some tasks
# twice, recorded once), and without (each task computed once: the
# broken copies below start from it).
"$TREEFARM" run "$WORK/tree3.json" --out "$WORK/endgame" --quiet >/dev/null 2>"$WORK/eg.err"
rc=$?
expect "reference run with the end-game: exit 0 (got $rc)" test "$rc" = 0
expect "tasks_exactly_once accepts it" tasks_exactly_once "$WORK/endgame" 60
expect "computed_sums_to accepts it" computed_sums_to "$WORK/endgame" 60
"$TREEFARM" run "$WORK/tree3.json" --out "$WORK/good" --quiet --no-endgame >/dev/null \
    2>"$WORK/good.err"
rc=$?
expect "reference run: exit 0 (got $rc)" test "$rc" = 0
expect "tasks_exactly_once accepts the real run" tasks_exactly_once "$WORK/good" 60
expect "computed_sums_to accepts the real run" computed_sums_to "$WORK/good" 60

# broken NAME SCRIPT: copy the good run to $WORK/NAME and apply the python
# SCRIPT to its rows (a list of [task, node] after the header) and nodes.
broken () {
    cp -r "$WORK/good" "$WORK/$1"
    python3 - "$WORK/$1" "$2" <<'PY'
import csv, json, os, sys
d, script = sys.argv[1], sys.argv[2]
rows = list(csv.reader(open(os.path.join(d, "tasks.csv"))))
head, rows = rows[0], rows[1:]
r = json.load(open(os.path.join(d, "results.json")))
nodes = r["nodes"]
exec(script)
with open(os.path.join(d, "tasks.csv"), "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows([head] + rows)
json.dump(r, open(os.path.join(d, "results.json"), "w"))
PY
}

refuses () { ! tasks_exactly_once "$WORK/$1" 60 >"$WORK/$1.why"; }

# A task computed twice: one row repeated, its node's counter raised too.
broken dup 'rows.append(rows[0]); [x for x in nodes if x["name"] == rows[0][1]][0]["computed"] += 1'
expect "refuses a duplicate task" refuses dup
expect "  ... and says which" grep -q "appears 2 times" "$WORK/dup.why"
# A task never recorded: one row dropped, its node's counter lowered too.
broken gap 'gone = rows.pop(); [x for x in nodes if x["name"] == gone[1]][0]["computed"] -= 1'
expect "refuses a gap" refuses gap
refuses_sum () { ! computed_sums_to "$WORK/$1" 60 >/dev/null; }
expect "computed_sums_to refuses it too" refuses_sum gap
# A lost node's counter behind its rows: its rows count.
broken lost_behind 'n = [x for x in nodes if x["name"] == rows[0][1]][0]; n["lost"] = {"why": "killed"}; n["computed"] -= 1'
expect "computed_sums_to counts a lost node's rows" computed_sums_to "$WORK/lost_behind" 60
expect "  ... and says which" grep -q "missing" "$WORK/gap.why"
# A duplicate hiding a gap: N rows, N distinct-looking lines, one id twice.
broken swap 'rows[-1] = [rows[0][0], rows[-1][1]]'
expect "refuses a duplicate that hides a gap" refuses swap
# A row naming no node of the run.
broken stranger 'rows[0][1] = "nobody"'
expect "refuses a node that is not in the run" refuses stranger
# Rows and counters disagree: a task moved to another node in tasks.csv.
broken moved 'other = [x["name"] for x in nodes if x["name"] != rows[0][1]][0]; rows[0][1] = other'
expect "refuses per-node rows that disagree with computed" refuses moved
# A re-parented node (named in "moves") counts completions that died with
# its old parent: more computed than rows passes, fewer does not.
broken reparented 'n = nodes[-1]; r["moves"] = [{"node": n["name"], "from": "x", "to": "y"}]; n["computed"] += 3'
expect "accepts a re-parented node computing more than its rows" tasks_exactly_once "$WORK/reparented" 60
broken reparented_less 'n = nodes[-1]; r["moves"] = [{"node": n["name"], "from": "x", "to": "y"}]; n["computed"] -= 1'
expect "refuses a re-parented node computing fewer than its rows" refuses reparented_less
# An end-game copy that lost: a node computed one more than its rows,
# accepted when the run says one was wasted, refused when it says none.
broken copied 'n = nodes[0]; n["computed"] += 1; n["copies"] = 1; n["wasted"] = 1'
expect "accepts a computation an end-game copy wasted" tasks_exactly_once "$WORK/copied" 60
expect "computed_sums_to accepts it too" computed_sums_to "$WORK/copied" 60
broken copied_unsaid 'n = nodes[0]; n["computed"] += 2; n["copies"] = 1; n["wasted"] = 0'
expect "refuses more extra computations than copies and wasted allow" refuses copied_unsaid
# An id past the bag.
broken past 'rows[0][0] = "60"'
expect "refuses a task id out of range" refuses past

finish
