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
# The unit binaries, then the integration scripts, run TF_JOBS at a time
# (default 2, at most 8): most of their time is waiting (timers, the
# disk, emulated nodes on their clocks), so two side by side take about
# half the wall time. A script whose header has a line
# "# Runs alone (tests/run.sh): REASON" (it measures rates, is CPU-bound
# under valgrind, or changes the host's network) runs with no other
# beside it, before the rest; one whose line is
# "# Runs alone (tests/run.sh, group NAME): REASON" runs beside the other
# scripts of its group only (TF_JOBS at a time), apart from the rest.
# Each script's output is printed whole when it ends, then its wall and
# CPU seconds (its own and those of the processes it waited for).
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
JOBS=${TF_JOBS:-2}
case "$JOBS" in ''|*[!0-9]*|0) echo "run.sh: TF_JOBS must be a whole number from 1 (got \"$JOBS\")" >&2; exit 2 ;; esac
[ "$JOBS" -le 8 ] || { echo "run.sh: TF_JOBS is at most 8 (got $JOBS)" >&2; exit 2; }

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

# cpu_ticks PID: the CPU of shell PID and of the children it waited for.
cpu_ticks () { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }

# run_script SCRIPT: run one integration script (or, ending in no .sh,
# one unit test binary; in a subshell of its own when run beside others),
# its output to $NOTES/NAME.log, its exit status to NAME.rc and its
# timing to NAME.time.
run_script () {
    local s=$1 me=$BASHPID name start c0 rc
    name=$(basename "$s" .sh)
    start=$SECONDS c0=$(cpu_ticks "$me")
    case "$s" in
    *.sh) TF_NOTES=$NOTES/$name bash "$s" >"$NOTES/$name.log" 2>&1 ;;
    *) "$s" >"$NOTES/$name.log" 2>&1 ;;
    esac
    rc=$?
    echo "  ($name: $((SECONDS - start)) s, CPU $((($(cpu_ticks "$me") - c0) / $(getconf CLK_TCK))) s)" \
        >"$NOTES/$name.time"
    echo "$rc" >"$NOTES/$name.rc"
}

# report NAME: print a finished script's output and file its outcome.
report () {
    echo "=== $1"
    cat "$NOTES/$1.log" "$NOTES/$1.time"
    count "$1" "$(cat "$NOTES/$1.rc")" "$NOTES/$1"
}

# reap_one: wait until a script of running[] ends; report every one
# that has, and keep the others in running[].
reap_one () {
    local r still=()
    wait -n
    for r in "${running[@]}"; do
        if [ -f "$NOTES/$r.rc" ]; then report "$r"; else still+=("$r"); fi
    done
    running=("${still[@]}")
}

# run_together FILE...: run the unit binaries or scripts JOBS at a time,
# each reported as it ends.
run_together () {
    local f
    running=()
    for f in "$@"; do
        while [ "${#running[@]}" -ge "$JOBS" ]; do reap_one; done
        run_script "$f" &
        running+=("$(basename "$f" .sh)")
    done
    while [ "${#running[@]}" -gt 0 ]; do reap_one; done
}

# The unit binaries (most of their time is waiting too: timers, a 1 GiB
# stream through the disk).
run_together "$@"
if [ "$unit_only" = 0 ]; then
    if [ -n "${TF_IT:-}" ]; then
        scripts=()
        for s in $TF_IT; do scripts+=("tests/${s%.sh}.sh"); done
    else
        scripts=(tests/it_*.sh)
    fi
    alone=() together=()
    declare -A group=()
    for s in "${scripts[@]}"; do
        g=""
        [ -f "$s" ] && g=$(sed -n 's/^# Runs alone (tests\/run\.sh, group \([a-z0-9_]*\)): .*/\1/p' "$s" | head -1)
        if [ -n "$g" ]; then
            group[$g]+=" $s"
        elif [ -f "$s" ] && grep -q "^# Runs alone (tests/run.sh): " "$s"; then
            alone+=("$s")
        else
            together+=("$s")
        fi
    done
    for s in "${alone[@]}"; do
        run_script "$s"
        report "$(basename "$s" .sh)"
    done
    for g in "${!group[@]}"; do
        # shellcheck disable=SC2086  # the group's paths have no spaces
        run_together ${group[$g]}
    done
    run_together "${together[@]}"
fi
for f in "${failures[@]}"; do echo "failed: $f"; done
for s in "${skips[@]}"; do echo "skipped: $s"; done
for p in "${parts[@]}"; do echo "passed, a part skipped: $p"; done
echo "elapsed: $SECONDS s"
echo "check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
