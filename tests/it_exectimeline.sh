#!/usr/bin/env bash
# Integration: scripts/exec-timeline.py, the kernel-timed profile of any
# launcher's commands (docs/commands.md, "Where a 50 ms command's time
# goes"), on a made-up `perf script` output whose figures are known: a
# launcher at 0 s, two slots of two commands each, one command of another
# name. start 10 ms, stop 5 ms, life mean 51 ms over --work 0.05, gaps
# 2 ms and 4 ms. A missing file, a malformed line and a command that never
# ran exit 2 naming the file.
source "$(dirname "$0")/lib.sh"

X=${TF_SRCDIR:-$PWD}/scripts/exec-timeline.py
ev () { printf '%16s %6d %.6f: sched:sched_process_%s: %s\n' "$@"; }
{
    ev xargs 100 100.000000 exec "filename=/usr/bin/xargs pid=100 old_pid=100"
    ev spin 101 100.010000 exec "filename=/opt/bin/spin pid=101 old_pid=101"
    ev spin 102 100.011000 exec "filename=/opt/bin/spin pid=102 old_pid=102"
    ev true 103 100.012000 exec "filename=/usr/bin/true pid=103 old_pid=103"
    ev true 103 100.013000 exit "comm=true pid=103 prio=120 group_dead=true"
    ev spin 101 100.060000 exit "comm=spin pid=101 prio=120 group_dead=true"
    ev spin 104 100.062000 exec "filename=/opt/bin/spin pid=104 old_pid=104"
    ev spin 102 100.063000 exit "comm=spin pid=102 prio=120 group_dead=true"
    ev spin 105 100.067000 exec "filename=/opt/bin/spin pid=105 old_pid=105"
    ev spin 104 100.114000 exit "comm=spin pid=104 prio=120 group_dead=true"
    ev spin 105 100.118000 exit "comm=spin pid=105 prio=120 group_dead=true"
    ev xargs 100 100.123000 exit "comm=xargs pid=100 prio=120 group_dead=true"
} >"$WORK/ev.txt"
# Lives: 50, 52, 52, 51 ms (mean 51.25). Gaps: 101's exit to 104's exec
# 2 ms, 102's to 105's 4 ms.
python3 "$X" "$WORK/ev.txt" --command spin --work 0.05 >"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/out"
expect "exit 0 on a good file (got $rc)" test "$rc" = 0
expect "4 commands, the other name left out" grep -q "^commands  4 exec'd, 4 exited" "$WORK/out"
expect "wall 0.123 s" grep -q "^wall      0.1230 s" "$WORK/out"
expect "start 10 ms" grep -q "^start     10.000 ms" "$WORK/out"
expect "stop 5 ms" grep -q "^stop      5.000 ms" "$WORK/out"
expect "life mean 51.25 ms, 1.25 ms over the work" \
    grep -q "^life      mean 51.250 ms, median 51.500 ms, 1.250 ms over 0.05 s" "$WORK/out"
expect "gaps 2 and 4 ms" grep -q "^gap       mean 3.000 ms, median 3.000 ms" "$WORK/out"

python3 "$X" "$WORK/none.txt" --command spin 2>"$WORK/err"
rc=$?
expect "a missing file: exit 2 naming it (got $rc)" \
    bash -c "[ $rc = 2 ] && grep -q 'none.txt: No such file' '$WORK/err'"
{ cat "$WORK/ev.txt"; echo "spin notapid 1.0: sched:sched_process_exit: comm=spin"; } >"$WORK/bad.txt"
python3 "$X" "$WORK/bad.txt" --command spin 2>"$WORK/err"
rc=$?
expect "a malformed line: exit 2 naming the file and line (got $rc)" \
    bash -c "[ $rc = 2 ] && grep -q 'bad.txt:13: not' '$WORK/err'"
python3 "$X" "$WORK/ev.txt" --command md5sum 2>"$WORK/err"
rc=$?
expect "no such command: exit 2 (got $rc)" \
    bash -c "[ $rc = 2 ] && grep -q 'no process exec.d a file named md5sum' '$WORK/err'"
finish
