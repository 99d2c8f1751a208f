# Helpers for the integration scripts (sourced). Each script runs real
# treefarm processes on loopback and counts its own assertions.
set -u
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TREEFARM=${TREEFARM:-$BUILD/bin/treefarm}
WORK=$(mktemp -d /tmp/treefarm-it.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
checks=0 bad=0

# TF_NOTES (set by tests/run.sh, one file per script) receives the lines
# the closing summary quotes: each failed check, each skip and its reason.
note () { [ -z "${TF_NOTES:-}" ] || echo "$*" >>"$TF_NOTES"; }
ok ()   { checks=$((checks + 1)); echo "  ok   $*"; }
nok ()  { checks=$((checks + 1)); bad=$((bad + 1)); echo "  FAIL $*"; note "FAIL $*"; }
expect () { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

# The run's record of who computed what is whole and consistent: in
# DIR/tasks.csv (header "task,node,...", rows in any order) every task id
# 0..N-1 appears exactly once, nothing else appears, and each row names a
# node of the run; per node, its rows number exactly its "computed" counter
# in DIR/results.json, and those counters add up to N. With a third
# argument "commands" (retries and resumed runs), a node's rows number at
# most its counter (a failed attempt computes without a row; a resumed
# task has a row without computing). A node results.json marks lost is
# held to nothing but its rows (its last counters may be stale); a node of
# a subtree moved under a new parent (results.json "moves", docs/adapt.md
# "Re-parent") to at least as many computed as rows (what it computed for
# its lost parent may have been lost with it). Prints what is wrong.
tasks_exactly_once () {
    python3 - "$1" "$2" "${3:-}" <<'PY'
import csv, json, os, sys
d, n, loose = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "commands"
bad = []
with open(os.path.join(d, "tasks.csv"), newline="") as f:
    rows = list(csv.reader(f))
if not rows or rows[0][:2] != ["task", "node"] or len(rows[0]) != 9:
    bad.append("tasks.csv header is %r, not task,node,..." % (rows[0] if rows else None))
    rows = [[]]
res = json.load(open(os.path.join(d, "results.json")))
nodes = {x["name"]: x for x in res["nodes"]}
moved = {m["node"] for m in res.get("moves", [])}
for x in list(nodes.values()):   # and their subtrees, by their parents now
    p, chain = x["name"], set()
    while p in nodes and p not in chain:
        chain.add(p)
        if p in moved:
            moved.add(x["name"])
            break
        p = nodes[p].get("parent")
seen, per_node = {}, {}
for line, row in enumerate(rows[1:], start=2):
    if len(row) != 9 or not row[0].isdigit() or row[1] not in nodes:
        bad.append("tasks.csv:%d: bad row %r" % (line, row))
        continue
    t = int(row[0])
    if t >= n:
        bad.append("tasks.csv:%d: task %d out of 0..%d" % (line, t, n - 1))
    seen[t] = seen.get(t, 0) + 1
    per_node[row[1]] = per_node.get(row[1], 0) + 1
bad += ["task %d appears %d times" % (t, k) for t, k in sorted(seen.items()) if k > 1]
missing = [t for t in range(n) if t not in seen]
if missing:
    bad.append("%d task(s) missing, first %s" % (len(missing), missing[:5]))
# A lost node's counters are its last STATS before it was lost: they can
# be behind its rows (STATS not sent) or ahead (DONEs lost with a parent),
# so its rows count as computed.
# A re-parented node's counter also counts the completions that died
# with its old parent or were dropped as stale, so it is at least its rows.
# An end-game copy that lost was computed but not recorded: the run's
# nodes computed `wasted` such tasks (dropped where the copies met), and
# at most one more per copy (a losing copy under way at the end); so a
# node may compute more than its rows, by that much over the run.
wasted = sum(x.get("wasted", 0) for x in nodes.values())
copies = sum(x.get("copies", 0) for x in nodes.values())
extra = 0
for name, x in nodes.items():
    rows_n = per_node.get(name, 0)
    if name in moved and not x.get("lost") and rows_n > x["computed"]:
        bad.append("node %s (moved): %d rows in tasks.csv, computed only %d"
                   % (name, rows_n, x["computed"]))
    elif (rows_n != x["computed"] and not loose and not x.get("lost")
          and name not in moved):
        if rows_n < x["computed"] and copies > 0:
            extra += x["computed"] - rows_n
        else:
            bad.append("node %s: %d rows in tasks.csv, computed %d"
                       % (name, rows_n, x["computed"]))
# wasted also counts the stale tasks a re-parented node computed for its
# lost parent (the moved nodes are held to their rows above): with moves,
# only the upper end holds.
if extra and not (0 if moved else wasted) <= extra <= wasted + copies:
    bad.append("nodes computed %d more than their rows, with %d wasted and %d copies"
               % (extra, wasted, copies))
total = sum(per_node.get(name, 0) if x.get("lost") or name in moved
            else x["computed"] for name, x in nodes.items()) - extra
if total != n and not loose:
    bad.append("per-node computed adds up to %d, not %d" % (total, n))
for b in bad[:10]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}

# Sum of per-node "computed" in results.json equals N, and the root saw no
# duplicate. A run that moved nodes (results.json "moves") may have computed
# more: what a moved subtree computed for its lost parent was lost with it
# (tasks_exactly_once holds those nodes to their rows); at least N then.
computed_sums_to () {
    python3 - "$1/results.json" "$2" <<'PY'
import csv, json, os, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
# A lost node's counter is its last STATS before it was lost, which can
# be behind its rows in tasks.csv: its rows count for it (as in
# tasks_exactly_once).
rows = {}
with open(os.path.join(os.path.dirname(sys.argv[1]), "tasks.csv"), newline="") as f:
    for row in list(csv.reader(f))[1:]:
        if len(row) > 1:
            rows[row[1]] = rows.get(row[1], 0) + 1
s = sum(max(x["computed"], rows.get(x["name"], 0)) if x.get("lost") else x["computed"]
        for x in r["nodes"])
if r.get("moves") and s >= n:
    s = n
# An end-game copy that lost was computed twice and dropped where the
# copies met (wasted); a losing copy still under way at the end is
# dropped nowhere (at most one per copy).
wasted = sum(x.get("wasted", 0) for x in r["nodes"])
copies = sum(x.get("copies", 0) for x in r["nodes"])
if n + wasted <= s <= n + wasted + copies:
    s = n
ok = s == n and r["completed"] == n and r["duplicates"] == 0 and r["status"] == "complete"
if not ok: print("  computed sum", s, "completed", r["completed"], "dup", r["duplicates"], "status", r["status"], "wasted", wasted, "copies", copies)
sys.exit(0 if ok else 1)
PY
}

# No node process listed in results.json is alive any more.
no_node_alive () {
    local pids p
    pids=$(python3 -c 'import json,sys; print(" ".join(str(x["pid"]) for x in json.load(open(sys.argv[1]))["nodes"] if x.get("pid")))' "$1/results.json")
    [ -n "$pids" ] || { echo "  no pids recorded"; return 1; }
    for p in $pids; do
        if kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ]; then
            echo "  node pid $p still alive: $(ps -o args= -p "$p")"; return 1
        fi
    done
}

# Wait up to SECONDS (default 30) for the first records of the run into
# DIR to reach DIR/tasks.csv (flushed every second): the run is under way.
await_records () {
    local i
    for i in $(seq $((${2:-30} * 50))); do
        [ "$(cat "$1/tasks.csv" 2>/dev/null | wc -l)" -gt 1 ] && return 0
        sleep 0.02
    done
    return 1
}

# WHAT: the run into DIR of N tasks, which exited with RC (its stderr in
# ERR), ended well: exit 0, every task exactly once, computed sums to N
# with no duplicate, no node process left.
run_survived () {
    expect "$1: exit 0 (got $4)" test "$4" = 0
    [ "$4" = 0 ] || tail -5 "$5"
    expect "$1: every task exactly once" tasks_exactly_once "$2" "$3"
    expect "$1: computed sums to $3, no duplicate" computed_sums_to "$2" "$3"
    expect "$1: no node process outlives the run" no_node_alive "$2"
}

# The hostile peer helper (tests/hostile.c, built by make check) is there;
# a failed check otherwise.
need_hostile () {
    [ -x "$BUILD/tests/hostile" ] && return 0
    nok "helper $BUILD/tests/hostile missing (make check builds it)"
    return 1
}

# Children of a pid (node processes of a running controller).
children_of () { pgrep -P "$1" || true; }

# node_pid NAME CTL: the pid of node NAME, a child of the controller
# CTL, waiting up to 4 s for it to appear.
node_pid () {
    local p
    for _ in $(seq 200); do
        p=$(pgrep -P "$2" -f -- "--name $1( |$)" || true)
        [ -n "$p" ] && { echo "$p"; return; }
        sleep 0.02
    done
}

# A script that cannot run here exits SKIP (the automake convention):
# tests/run.sh counts it apart from the passed and the failed.
SKIP=77

# skip REASON: the script cannot run in this environment, for a reason
# scripts/install-deps.sh cannot fix (not root, no network namespaces in
# this container): print "skip: REASON" and exit SKIP. After a failed
# check it exits 1 instead: a failure is never hidden by a later skip.
skip () {
    if [ "$bad" != 0 ]; then nok "skipped after a failure: $*"; finish; exit 1; fi
    echo "  skip: $*"
    note "skip: $*"
    exit $SKIP
}

# skip_part REASON: a part of the script cannot run here and is left out
# (no IPv6 loopback, no netem); the script goes on and the summary lists
# the reason next to its result.
skip_part () { echo "  skip: $*"; note "part skipped: $*"; }

# The packages scripts/install-deps.sh installs, one a line.
deps_packages () {
    sed -n '/^PACKAGES=(/,/)/p' "$(dirname "${BASH_SOURCE[0]}")/../scripts/install-deps.sh" |
        sed -e 's/^PACKAGES=(//' -e 's/)$//' | tr -s ' \t' '\n' | grep -v '^$'
}

# need_package PACKAGE TOOL...: every TOOL (a command name or a path) is
# there; else the script cannot run. A PACKAGE that scripts/install-deps.sh
# installs is a failure under CI (CI=true: the CI ran install-deps.sh, so
# the package is missing by mistake) and a skip elsewhere, naming the
# package; a PACKAGE it does not install is a skip everywhere. TF_MISSING
# (for tests/run.sh's own checks only) lists tools to take as missing.
need_package () {
    local pkg=$1 tool; shift
    for tool in "$@"; do
        case " ${TF_MISSING:-} " in *" $tool "*) ;; *) command -v "$tool" >/dev/null && continue ;; esac
        if ! deps_packages | grep -qx -- "$pkg"; then
            skip "$tool is missing (package $pkg, which scripts/install-deps.sh does not install)"
        elif [ "${CI:-}" = true ]; then
            nok "$tool is missing: package $pkg is not installed, under CI" \
                "(scripts/install-deps.sh installs it)"
            finish; exit 1
        else
            skip "$tool is missing (run scripts/install-deps.sh as root: it installs $pkg)"
        fi
    done
}

# The script's result: 0 if every check passed. A script that checked
# nothing has not passed (it should have called skip, saying why).
finish () {
    [ "$checks" -gt 0 ] || nok "no check ran"
    echo "  $((checks - bad))/$checks checks passed"
    [ "$bad" = 0 ]
}
