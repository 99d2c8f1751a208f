#!/usr/bin/env bash
# Run the unit test binaries given as arguments, then (unless --unit-only)
# the integration scripts tests/it_*.sh, and count each once: passed,
# failed, or skipped. A unit binary passes on exit 0. A script passes on
# exit 0, is skipped on exit 77 (tests/lib.sh's skip: it cannot run here,
# and said why with "skip: REASON"), and fails otherwise; a skip that gives
# no reason is a failure. Under CI (CI=true) a script whose package
# scripts/install-deps.sh installs is missing fails instead of skipping
# (tests/lib.sh's need_package).
#
# The lines before the last name every failure (its first failed check)
# and every skip (its reason), every script that passed with a part left
# out (tests/lib.sh's skip_part), then the elapsed time; the last line is
# exactly "check: N passed, M failed, S skipped". Exits 1 if anything
# failed.
#
# TF_IT (a list of script names, e.g. TF_IT='it_layout it_ssh') runs
# only those integration scripts instead of all of them.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD TF_SRCDIR=$PWD
SKIP=77

unit_only=0
if [ "${1:-}" = --unit-only ]; then unit_only=1; shift; fi

NOTES=$(mktemp -d /tmp/treefarm-run.XXXXXX)
trap 'rm -rf "$NOTES"' EXIT
passed=0 failed=0 skipped=0 failures=() skips=() parts=()

# first_note FILE PREFIX: the first line of FILE starting with PREFIX,
# without it, and how many more there are.
first_note () {
    local n first
    n=$(grep -c "^$2" "$1" 2>/dev/null)
    first=$(grep -m1 "^$2" "$1" 2>/dev/null | cut -c$((${#2} + 1))-)
    [ "${n:-0}" -gt 1 ] && first="$first (and $((n - 1)) more)"
    echo "$first"
}

# count NAME RC NOTES: file the outcome of one test.
count () {
    local name=$1 rc=$2 notes=$3 why part
    part=$(first_note "$notes" "part skipped: ")
    if [ "$rc" = 0 ]; then
        passed=$((passed + 1))
        [ -z "$part" ] || parts+=("$name: $part")
    elif [ "$rc" = "$SKIP" ] && why=$(first_note "$notes" "skip: ") && [ -n "$why" ]; then
        skipped=$((skipped + 1)); skips+=("$name: $why")
    else
        failed=$((failed + 1))
        why=$(first_note "$notes" "FAIL ")
        [ "$rc" = "$SKIP" ] && [ -z "$why" ] && why="exit $SKIP (skip) without a reason"
        failures+=("$name: ${why:-exit $rc}")
    fi
}

for t in "$@"; do
    name=$(basename "$t")
    echo "=== $name"
    "$t"
    rc=$?
    count "$name" "$rc" /dev/null
done
if [ "$unit_only" = 0 ]; then
    if [ -n "${TF_IT:-}" ]; then
        scripts=()
        for s in $TF_IT; do scripts+=("tests/${s%.sh}.sh"); done
    else
        scripts=(tests/it_*.sh)
    fi
    for s in "${scripts[@]}"; do
        name=$(basename "$s" .sh)
        echo "=== $name"
        start=$SECONDS
        TF_NOTES=$NOTES/$name bash "$s"
        rc=$?
        count "$name" "$rc" "$NOTES/$name"
        echo "  ($name: $((SECONDS - start)) s)"
    done
fi
for f in "${failures[@]}"; do echo "failed: $f"; done
for s in "${skips[@]}"; do echo "skipped: $s"; done
for p in "${parts[@]}"; do echo "passed, a part skipped: $p"; done
echo "elapsed: $SECONDS s"
echo "check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
