#!/usr/bin/env bash
# Run the unit test binaries given as arguments, then (unless --unit-only)
# every integration script tests/it_*.sh; print one closing line
# "check: N passed, M failed" and exit non-zero if anything failed.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD TF_SRCDIR=$PWD

unit_only=0
if [ "${1:-}" = --unit-only ]; then unit_only=1; shift; fi

passed=0 failed=0 failures=()
for t in "$@"; do
    name=$(basename "$t")
    echo "=== $name"
    if "$t"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
done
if [ "$unit_only" = 0 ]; then
    for s in tests/it_*.sh; do
        name=$(basename "$s" .sh)
        echo "=== $name"
        start=$SECONDS
        if bash "$s"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
        echo "  ($name: $((SECONDS - start)) s)"
    done
fi
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "check: $passed passed, $failed failed ($SECONDS s)"
[ "$failed" = 0 ]
