#!/usr/bin/env python3
"""Any launcher's commands, timed by the kernel: start, life, gaps, stop.

    perf record -a -e sched:sched_process_exec,sched:sched_process_exit \\
        -o PERF.data -- LAUNCHER ...
    perf script -i PERF.data -F comm,pid,time,event,trace > EVENTS.txt
    python3 scripts/exec-timeline.py EVENTS.txt --command spin [--work S]

The events are the kernel's own (a process exec'd, a process exited), so
treefarm, `xargs -P2` and GNU parallel are timed the same way, with no
cooperation from the launcher and next to no cost to it. Of the
processes that exec'd a file named COMMAND (its basename), it prints:

  wall      from the first event (the launcher's exec) to the last
  start     from the first event to the first command's exec
  stop      from the last command's exit to the last event
  life      each command's exec to its exit, mean and median (--work S:
            and the mean over S, the CPU seconds each command does: its
            dynamic loading and the CPU it lost to everything else)
  gap       a command's exit to the next command's exec, pairing exits
            and execs in time order (with k commands side by side, the
            next command is the one that took the freed place): the
            launcher's own latency between two commands
  sums      of lives and of gaps, in CPU-slot seconds

Reads only; exits 2 on a missing or unreadable file or one without a
command of that name.
"""
import argparse
import os
import statistics
import sys


def die(text):
    print("exec-timeline: " + text, file=sys.stderr)
    sys.exit(2)


def parse(path, command):
    """(first, last, {pid: exec_s}, {pid: exit_s}) of the file's events."""
    execs, exits, first, last = {}, {}, None, None
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                p = line.split()
                if len(p) < 5 or not p[3].startswith("sched:sched_process_"):
                    continue
                try:
                    pid, t = int(p[1]), float(p[2].rstrip(":"))
                except ValueError:
                    die("%s:%d: not `perf script -F comm,pid,time,"
                             "event,trace` output" % (path, n))
                first = t if first is None else min(first, t)
                last = t if last is None else max(last, t)
                trace = " ".join(p[4:])
                if p[3].startswith("sched:sched_process_exec") and \
                        os.path.basename(trace.split("filename=", 1)[-1].split()[0]) == command:
                    execs[pid] = t
                elif p[3].startswith("sched:sched_process_exit") and pid in execs:
                    exits[pid] = t
    except OSError as e:
        die("%s: %s" % (path, e.strerror))
    if not execs:
        die("%s: no process exec'd a file named %s" % (path, command))
    return first, last, execs, exits


def gaps(execs, exits):
    """Each exit to the exec that next took a place, in time order."""
    events = sorted([(t, 1) for t in exits.values()] + [(t, 0) for t in execs.values()])
    freed, out = [], []
    for t, is_exit in events:
        if is_exit:
            freed.append(t)
        elif freed:
            out.append(t - freed.pop(0))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog=__doc__[__doc__.index("The events"):],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("events", help="`perf script -F comm,pid,time,event,trace` output")
    ap.add_argument("--command", required=True, help="the commands' file name, e.g. spin")
    ap.add_argument("--work", type=float, help="CPU seconds each command does")
    a = ap.parse_args()
    first, last, execs, exits = parse(a.events, a.command)
    life = [exits[p] - execs[p] for p in execs if p in exits]
    if not life:
        die("%s: no %s exited" % (a.events, a.command))
    g = gaps(execs, exits)
    ms = lambda x: "%.3f ms" % (x * 1e3)
    print("commands  %d exec'd, %d exited" % (len(execs), len(exits)))
    print("wall      %.4f s" % (last - first))
    print("start     %s" % ms(min(execs.values()) - first))
    print("stop      %s" % ms(last - max(exits.values())))
    extra = "" if a.work is None else ", %s over %g s" % (ms(statistics.mean(life) - a.work),
                                                           a.work)
    print("life      mean %s, median %s%s" % (ms(statistics.mean(life)),
                                              ms(statistics.median(life)), extra))
    if g:
        print("gap       mean %s, median %s" % (ms(statistics.mean(g)), ms(statistics.median(g))))
    print("sums      lives %.3f s, gaps %.3f s" % (sum(life), sum(g)))


if __name__ == "__main__":
    main()
