# Helpers for the integration scripts (sourced). Each script runs real
# treefarm processes on loopback and counts its own assertions.
set -u
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TREEFARM=${TREEFARM:-$BUILD/bin/treefarm}
WORK=$(mktemp -d /tmp/treefarm-it.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
checks=0 bad=0

ok ()   { checks=$((checks + 1)); echo "  ok   $*"; }
nok ()  { checks=$((checks + 1)); bad=$((bad + 1)); echo "  FAIL $*"; }
expect () { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

# Every task id 0..N-1 appears exactly once in DIR/tasks.csv, with a node.
tasks_exactly_once () {
    local dir=$1 n=$2
    awk -F, -v n="$n" '
        NR == 1 { next }
        $2 == "" { print "  task " $1 " has no node"; bad = 1 }
        { seen[$1]++ }
        END {
            for (i = 0; i < n; i++) if (seen[i] != 1) { print "  task " i " seen " seen[i] + 0 " times"; bad = 1 }
            if (length (seen) != n) { print "  " length (seen) " distinct ids, expected " n; bad = 1 }
            exit bad
        }' "$dir/tasks.csv"
}

# Sum of per-node "computed" in results.json equals N, and the root saw no
# duplicate.
computed_sums_to () {
    python3 - "$1/results.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
s = sum(x["computed"] for x in r["nodes"])
ok = s == n and r["completed"] == n and r["duplicates"] == 0 and r["status"] == "complete"
if not ok: print("  computed sum", s, "completed", r["completed"], "dup", r["duplicates"], "status", r["status"])
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

# Children of a pid (node processes of a running controller).
children_of () { pgrep -P "$1" || true; }

finish () {
    echo "  $((checks - bad))/$checks checks passed"
    [ "$bad" = 0 ]
}
