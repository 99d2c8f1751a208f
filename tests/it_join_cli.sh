#!/usr/bin/env bash
# Integration: `treefarm join OUT NODE.json` refuses, with exit 2 and a
# message, what no run can take, without a run and without waiting: OUT
# missing, OUT without .join, a .join that is no socket, a stale .join
# socket file nobody listens on (a run that ended), and an invalid
# NODE.json (not JSON, an unknown key, link_mbps missing, a bad name, too
# big), named by file and key before any run is contacted. The round trip
# with a run answering is tests/test_join_sock.c's (join_main against the
# run's socket); a run taking a node is the adapt tests'.
source "$(dirname "$0")/lib.sh"

# join_refused WHAT EXPECTED-TEXT ARGS...: `treefarm join ARGS` exits 2
# with EXPECTED-TEXT in its message. The --timeout is long: a command
# that waits for an answer instead of refusing fails by its message
# (it would say it had no answer), not by the clock.
join_refused () {
    local what=$1 text=$2 rc; shift 2
    "$TREEFARM" join "$@" --timeout 60 >"$WORK/out.txt" 2>&1
    rc=$?
    expect "$what: exit 2 (got $rc)" test "$rc" = 2
    if grep -qF -- "$text" "$WORK/out.txt"; then
        ok "$what: says \"$text\""
    else
        nok "$what: says \"$text\""
        sed 's/^/    /' "$WORK/out.txt" | head -3
    fi
}

echo '{"name": "S9", "compute": 12.5, "link_mbps": 40}' >"$WORK/node.json"
mkdir "$WORK/out"

"$TREEFARM" join --help >"$WORK/help.txt" 2>&1
rc=$?
expect "--help: exit 0 (got $rc)" test "$rc" = 0
expect "--help: shows the usage" grep -q "usage: treefarm join OUT NODE.json" "$WORK/help.txt"
expect "treefarm --help lists join" sh -c "'$TREEFARM' --help | grep -q '^  join '"

join_refused "missing NODE.json operand" "missing NODE.json" "$WORK/out"
join_refused "OUT missing" "$WORK/none: no run is taking nodes here" \
    "$WORK/none" "$WORK/node.json"
join_refused "OUT without .join" \
    "$WORK/out: no run is taking nodes here (no $WORK/out/.join: the run is not running, or it does not adapt)" \
    "$WORK/out" "$WORK/node.json"

: >"$WORK/out/.join"
join_refused ".join not a socket" "($WORK/out/.join is not a socket)" \
    "$WORK/out" "$WORK/node.json"
rm "$WORK/out/.join"

# A socket file left by a run that ended: bound, then closed.
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' "$WORK/out/.join"
expect "the stale .join is a socket" test -S "$WORK/out/.join"
join_refused "stale .join" "$WORK/out: no run is taking nodes here ($WORK/out/.join is left from a run that ended" \
    "$WORK/out" "$WORK/node.json"

# Invalid node descriptions, refused by file and key; OUT has the stale
# socket, which the command must not reach.
bad_node () {   # WHAT CONTENT EXPECTED
    printf '%s\n' "$2" >"$WORK/bad.json"
    join_refused "NODE.json $1" "$WORK/bad.json$3" "$WORK/out" "$WORK/bad.json"
}
bad_node "not JSON" 'name: S9' ":1:4: '[' or '{' expected"
bad_node "an array" '[{"name": "S9"}]' ': node: expected an object, got array'
bad_node "unknown key" '{"name": "S9", "compute": 1, "link_mbps": 1, "colour": "red"}' \
    ': node (node "S9"): unknown key "colour"'
bad_node "without link_mbps" '{"name": "S9", "compute": 1}' \
    ': node (node "S9"): missing required key "link_mbps"'
bad_node "bad name" '{"name": "S 9", "compute": 1, "link_mbps": 1}' ': node: name: must be'
bad_node "duplicate key" '{"name": "S9", "name": "S8", "compute": 1, "link_mbps": 1}' \
    ":1:21: duplicate object key"
python3 -c 'import json
print(json.dumps({"name": "S9", "compute": 1, "link_mbps": 1, "host": "a" * 70000}))' \
    >"$WORK/big.json"
join_refused "NODE.json too big" "$WORK/big.json: more than 65536 bytes" \
    "$WORK/out" "$WORK/big.json"
join_refused "NODE.json missing" "$WORK/nope.json: cannot open" "$WORK/out" "$WORK/nope.json"

# An OUT whose socket path cannot be an AF_UNIX address.
long="$WORK/$(printf 'd%.0s' $(seq 120))"
mkdir "$long"
join_refused "OUT too long for a socket" "more than the 107 a socket's path may have" \
    "$long" "$WORK/node.json"

finish
