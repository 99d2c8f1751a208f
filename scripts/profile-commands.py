#!/usr/bin/env python3
"""Where a command task's time goes between commands, from a finished run.

    treefarm run CONFIG --tasks TASKS --out OUT --trace TRACE
    python3 scripts/profile-commands.py OUT TRACE [--work SECONDS]

For each node and slot (the trace's compute lanes): the commands it ran,
their mean wall time (OUT/journal.jsonl's "seconds": from the worker's
vfork to the reap), and the gap between one command's end and the next
one's start on the same slot: start(next) - start(this) - wall(this),
where a start is the trace's compute span's beginning (the command's
start). The gap is what the node adds between two commands: packing the
result, the worker's report to the event loop, the core's decision, the
next job's hand-over and staging. --work S (the CPU seconds each command
does) adds each command's own overhead, wall - S: process start, dynamic
loading, and time lost to other work on the CPUs. Then the run's
makespan against its wall time in results.json, and totals.

Reads only; exits 2 on a missing or malformed file, naming it.
"""
import argparse
import json
import os
import statistics
import sys


def load(path, lines=False):
    try:
        with open(path) as f:
            return [json.loads(x) for x in f if x.strip()] if lines else json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("profile-commands: %s: %s" % (path, e))


def lanes(trace):
    """{(pid, tid): [(start_s, task)]} of the compute spans, and pid names."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    out = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "compute" and "task" in e.get("args", {}):
            out.setdefault((e["pid"], e["tid"]), []).append((e["ts"] / 1e6, e["args"]["task"]))
    return out, names


def ms(xs):
    return "%.3f" % (1e3 * statistics.mean(xs)) if xs else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("trace")
    ap.add_argument("--work", type=float, default=None)
    a = ap.parse_args()
    wall = {r["task"]: r["seconds"] for r in load(os.path.join(a.out, "journal.jsonl"), True)
            if isinstance(r.get("seconds"), (int, float))}
    res = load(os.path.join(a.out, "results.json"))
    spans, names = lanes(load(a.trace))
    print("%-10s %5s %8s %10s %10s %10s" % ("node/slot", "tasks", "wall ms", "own ms",
                                            "gap ms", "gap med"))
    gaps_all, own_all = [], []
    for (pid, tid), xs in sorted(spans.items()):
        xs.sort()
        w = [wall[t] for _, t in xs if t in wall]
        gaps = [s2 - s1 - wall[t1] for (s1, t1), (s2, _) in zip(xs, xs[1:]) if t1 in wall]
        own = [x - a.work for x in w] if a.work is not None else []
        gaps_all += gaps
        own_all += own
        print("%-10s %5d %8s %10s %10s %10s" % (
            "%s/%d" % (names.get(pid, pid), tid - 1), len(xs), ms(w), ms(own), ms(gaps),
            "%.3f" % (1e3 * statistics.median(gaps)) if gaps else "-"))
    print("all: gap mean %s ms, median %s ms; command overhead mean %s ms" % (
        ms(gaps_all), "%.3f" % (1e3 * statistics.median(gaps_all)) if gaps_all else "-",
        ms(own_all)))
    print("makespan %.3f s (START to FINISHED)" % res["makespan_s"])


if __name__ == "__main__":
    main()
