#!/usr/bin/env bash
# make fuzz: run every libFuzzer target given as an argument for
# FUZZ_SECONDS seconds on a copy of its seed corpus
# (tests/fuzz/corpus/NAME for build/fuzz/fuzz_NAME), with the dictionary
# tests/fuzz/NAME.dict of its tokens and field names, so the committed
# seeds stay as they are. A crash, leak or timeout stops the target: the
# input is kept as crash-*/leak-*/timeout-* in the work directory, which is
# then left in place and named; add it to tests/fuzz/corpus/NAME as a
# regression case once fixed. Exits non-zero if any target found one.
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
WORK=$(mktemp -d /tmp/treefarm-fuzz.XXXXXX)
status=0
for bin in "$@"; do
    name=$(basename "$bin"); name=${name#fuzz_}
    mkdir -p "$WORK/$name/corpus"
    cp tests/fuzz/corpus/"$name"/* "$WORK/$name/corpus/" 2>/dev/null
    echo "fuzz $name: ${SECONDS_EACH} s from $(ls "$WORK/$name/corpus" | wc -l) seeds"
    dict=
    [ -f "tests/fuzz/$name.dict" ] && dict=-dict="$PWD/tests/fuzz/$name.dict"
    (cd "$WORK/$name" && "$OLDPWD/$bin" -max_total_time="$SECONDS_EACH" -timeout=10 \
        -rss_limit_mb=1024 -print_final_stats=1 $dict corpus >log 2>&1)
    rc=$?
    grep -E "^stat::number_of_executed_units|^#[0-9]+.*DONE" "$WORK/$name/log" | tail -2 | sed 's/^/  /'
    if [ "$rc" != 0 ]; then
        status=1
        echo "  FOUND a failing input (exit $rc):"
        grep -E "ERROR|SUMMARY|Test unit written" "$WORK/$name/log" | head -5 | sed 's/^/    /'
    fi
done
if [ "$status" = 0 ]; then rm -rf "$WORK"; else echo "fuzz: inputs and logs kept in $WORK"; fi
exit "$status"
