#!/usr/bin/env bash
# The fuzz targets (tests/fuzz, built by make check): each runs for a few
# seconds (FUZZ_CHECK_SECONDS, default 5) from its seed corpus, and must
# find no crash, leak or timeout; every seed, old crashes included, is
# replayed first. `make fuzz` runs them for minutes.
source "$(dirname "$0")/lib.sh"

bins=${FUZZ_BINS:-}
[ -n "$bins" ] || bins=$(ls build/fuzz/fuzz_* 2>/dev/null | grep -v '\.d$')
expect "fuzz targets built" test -n "$bins"
for bin in $bins; do
    name=$(basename "$bin"); name=${name#fuzz_}
    expect "fuzz $name: $(ls tests/fuzz/corpus/$name | wc -l) seeds and ${FUZZ_CHECK_SECONDS:-5} s, no failure" \
        env FUZZ_SECONDS="${FUZZ_CHECK_SECONDS:-5}" bash scripts/fuzz.sh "$bin"
done
finish
