#!/usr/bin/env python3
"""make bench's bookkeeping: one figure at a time, one results file.

Every benchmark part records each of its figures with `figure`: the runs
of what it measures, optionally paired run by run with a reference timed
in the same invocation, and the target it is held to. `collect` gathers
the parts' figures into bench/results.json and prints one table.

  benchlib.py figure --out PART.json --id ID --what TEXT --unit UNIT
                     --values V1 V2 ... [--ref-what TEXT --ref-values R1 ...]
                     [--target KIND:BOUND] [--note TEXT]
  benchlib.py collect DIR... --json bench/results.json

Targets (KIND:BOUND):
  ratio-min:X   the median of the per-run ratios value_i / ref_i is >= X
                (a ratio measured in one run, so drift hits both sides)
  min:X         the median value is >= X
  max:X         the median value is <= X
  max-all:X     every run's value is <= X (a limit, not a typical figure)
A figure without a target is printed and recorded, never judged.

A part's file holds {"figures": [...]}; `figure` appends to it (or
replaces the figure of the same id), so a part may record as it goes.
"""
import argparse
import json
import os
import statistics
import sys
import time


def summary(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs),
            "runs": xs}


def judge(fig, target):
    kind, _, bound = target.partition(":")
    bound = float(bound)
    if kind == "ratio-min":
        if "ratio" not in fig:
            sys.exit("benchlib: target ratio-min needs --ref-values")
        got = fig["ratio"]["median"]
        ok = got >= bound
    elif kind == "min":
        got = fig["median"]
        ok = got >= bound
    elif kind == "max":
        got = fig["median"]
        ok = got <= bound
    elif kind == "max-all":
        got = fig["max"]
        ok = got <= bound
    else:
        sys.exit("benchlib: unknown target kind %r (ratio-min, min, max, max-all)" % kind)
    return {"kind": kind, "bound": bound, "got": got, "met": ok}


def cmd_figure(a):
    vals = [float(v) for v in a.values]
    if not vals:
        sys.exit("benchlib: figure %s has no values" % a.id)
    fig = {"id": a.id, "what": a.what, "unit": a.unit}
    fig.update(summary(vals))
    if a.ref_values:
        refs = [float(v) for v in a.ref_values]
        if len(refs) != len(vals):
            sys.exit("benchlib: figure %s: %d values but %d reference values"
                     % (a.id, len(vals), len(refs)))
        fig["ref"] = {"what": a.ref_what or "reference"}
        fig["ref"].update(summary(refs))
        fig["ratio"] = summary([v / r if r else float("inf")
                                for v, r in zip(vals, refs)])
    if a.target:
        fig["target"] = judge(fig, a.target)
    if a.note:
        fig["note"] = a.note
    part = {"figures": []}
    if os.path.exists(a.out):
        with open(a.out) as f:
            part = json.load(f)
    part["figures"] = [g for g in part["figures"] if g["id"] != a.id] + [fig]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(part, f, indent=1)
    os.replace(tmp, a.out)
    print(line(fig))


def num(x):
    if x == float("inf"):
        return "inf"
    if abs(x) >= 100:
        return "%.0f" % x
    if abs(x) >= 1:
        return "%.2f" % x
    return "%.3f" % x


def line(fig):
    s = "  %-28s %10s [%s, %s] %s" % (fig["id"], num(fig["median"]),
                                      num(fig["min"]), num(fig["max"]), fig["unit"])
    if "ratio" in fig:
        s += "  vs %s %s: ratio %s" % (fig["ref"]["what"], num(fig["ref"]["median"]),
                                       num(fig["ratio"]["median"]))
    if "target" in fig:
        t = fig["target"]
        s += "  target %s %s: %s" % (t["kind"], num(t["bound"]),
                                     "met" if t["met"] else "NOT MET")
    if "note" in fig:
        s += "\n      " + fig["note"]
    return s


def cmd_collect(a):
    figures = []
    for d in a.dirs:
        for name in sorted(os.listdir(d)):
            if name.endswith(".json"):
                with open(os.path.join(d, name)) as f:
                    figures += json.load(f)["figures"]
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "host": {"cpus": os.cpu_count(), "uname": " ".join(os.uname())},
           "figures": figures}
    tmp = a.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, a.json)
    judged = [g for g in figures if "target" in g]
    missed = [g["id"] for g in judged if not g["target"]["met"]]
    print("make bench: %d figures, %d with a target, %d not met%s"
          % (len(figures), len(judged), len(missed),
             (": " + ", ".join(missed)) if missed else ""))
    for g in figures:
        print(line(g))
    print("  (written to %s)" % a.json)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("figure")
    f.add_argument("--out", required=True)
    f.add_argument("--id", required=True)
    f.add_argument("--what", required=True)
    f.add_argument("--unit", required=True)
    f.add_argument("--values", nargs="+", required=True)
    f.add_argument("--ref-what")
    f.add_argument("--ref-values", nargs="+")
    f.add_argument("--target")
    f.add_argument("--note")
    c = sub.add_parser("collect")
    c.add_argument("dirs", nargs="+")
    c.add_argument("--json", required=True)
    a = p.parse_args()
    cmd_figure(a) if a.cmd == "figure" else cmd_collect(a)


if __name__ == "__main__":
    main()
