#!/usr/bin/env python3
"""adapt-fanout — the ratio rule's experiment, run and tabulated.

    python3 scripts/adapt-fanout.py [--quick] [--out DIR] [--no-write]
                                    [--build DIR]

A star of 8 identical children behind a hub whose send port is one
shared 1.1 MB/s (8.8 Mb/s) segment (send_limit_mbps 1.1, each link
1.1 MB/s, delay_ms 0.3), IA:Multi, emulated through `treefarm run`, at
three task sizes. Every node computes C = 10 units/s; a task's units w
are chosen per size so that the ratio-1 point differs:

  Z = 0.1 MB, w = 7:   1.43 tasks/s a child, 0.143 MB/s: the port feeds 8
  Z = 1 MB,   w = 25:  0.4 tasks/s, 0.4 MB/s: it feeds 3 (0.8, then 1.2)
  Z = 10 MB,  w = 80:  0.125 tasks/s, 1.25 MB/s: it feeds 1

Per size it runs (a) the 8-child star with --adapt, where the ratio rule
chooses how many children to keep busy (docs/adapt.md, "Fan-out: the
ratio rule"), and (b) trial and error: for every fixed fan-out f = 1..8,
a star of only f children, without --adapt. It records per size:

  k planned      the rule's k from the configured rates (node/fanout.h)
  kept busy      children of the --adapt run that computed at least
                 BUSY_FRACTION (10%) of the tasks an equal share of the
                 children's work would give each of the 8
  best f         the fixed fan-out of the smallest makespan, and that
                 makespan; also the smallest f within 5% of it (the
                 fewest children that do as well)
  rule           the --adapt run's makespan and its ratio to the best

The targets (Tangmunarunkit and Steenkiste's result): kept busy within
2 of the best f, the rule's makespan within 5% of the best fixed one.
Each run is kept short (a time scale that makes it a few seconds of
wall time; a few hundred tasks, 100 of 10 MB). Results vary by a few
percent from run to run on a busy machine (the runtime's own latencies
are multiplied by the time scale); the script asserts nothing.

It rewrites the region between `<!-- adapt-fanout: begin -->` and
`<!-- adapt-fanout: end -->` in docs/adapt.md and the raw figures, with
each run's command, in docs/adapt/fanout.json.

Options:
  --quick      one size (1 MB) and f in {1, 3, 8}; prints the table,
               writes nothing under docs/
  --out DIR    keep the raw runs in DIR (default: a temporary directory,
               removed at the end)
  --no-write   print the table but leave docs/ alone
  --build DIR  the build directory (default: build, or $BUILD)

Progress goes to stderr, the table to stdout. Exit 0 when every run ran
(a target not met is a figure, not an error), 1 when a run failed, 2 on
bad usage.
"""
import csv
import json
import os
import sys

from doclib import ROOT, study_main, treefarm, write_json
DOC = os.path.join(ROOT, "docs", "adapt.md")
RAW = os.path.join(ROOT, "docs", "adapt", "fanout.json")
BEGIN, END = "<!-- adapt-fanout: begin -->", "<!-- adapt-fanout: end -->"
COMMAND = "python3 scripts/adapt-fanout.py"
POLICY = "ia-multi"
CHILDREN = 8
SEND_LIMIT_MBPS, DELAY_MS, COMPUTE = 1.1, 0.3, 10.0
# Per size: Z (MB), w (units), tasks, time scale (a run of a few seconds).
SIZES = ((0.1, 7, 400, 10), (1.0, 25, 300, 40), (10.0, 80, 100, 80))
BUSY_FRACTION = 0.10
# The targets.
WITHIN_CHILDREN, WITHIN_TIME = 2, 0.05


def log(msg):
    print("adapt-fanout: " + msg, file=sys.stderr, flush=True)


def star(f, z, w, tasks, scale):
    """A star of f children behind the shared segment."""
    tree = [{"name": "hub", "compute": COMPUTE, "send_limit_mbps": SEND_LIMIT_MBPS}]
    for i in range(f):
        tree.append({"name": "c%d" % i, "parent": "hub", "compute": COMPUTE,
                     "link_mbps": SEND_LIMIT_MBPS, "delay_ms": DELAY_MS})
    return {"name": "star%d" % f, "tasks": {"count": tasks, "input_mb": z, "units": w},
            "policy": POLICY,
            "platform": {"mode": "emulated", "time_scale": scale, "payload_scale": 0.01,
                         "buffer": 3},
            "tree": tree}


def planned_k(z, w):
    """node/fanout.h on the configured rates: the smallest k whose
    cumulative demand reaches the send limit, else every child."""
    demand, total = COMPUTE / w * z, 0.0
    for k in range(1, CHILDREN + 1):
        total += demand
        if total >= SEND_LIMIT_MBPS * (1 - 1e-9):
            return k
    return CHILDREN


def run(a, work, label, config, extra):
    """Run config; returns its figures, or None when the run failed."""
    path = os.path.join(work, label + ".json")
    write_json(path, config)
    out = os.path.join(work, label)
    rc, _ = treefarm(a.build, ["run", path, "--policy", POLICY, "--out", out, "--quiet"]
                     + extra, "adapt-fanout")
    if rc != 0:
        return None
    r = json.load(open(os.path.join(out, "results.json")))
    with open(os.path.join(out, "nodes.csv")) as fh:
        computed = {row["name"]: int(row["computed"]) for row in csv.DictReader(fh)}
    return {"command": ["treefarm", "run", label + ".json", "--policy", POLICY] + extra,
            "status": r["status"], "makespan_s": r["makespan_s"],
            "efficiency": r["efficiency"], "computed": computed}


def kept_busy(fig):
    """Children that computed at least BUSY_FRACTION of an equal share of
    the children's work."""
    kids = [v for k, v in fig["computed"].items() if k != "hub"]
    share = sum(kids) / float(CHILDREN)
    return sum(1 for v in kids if share > 0 and v >= BUSY_FRACTION * share)


def size_runs(a, work, z, w, tasks, scale, fans):
    log("Z = %g MB: the rule (--adapt)" % z)
    rule = run(a, work, "rule-%g" % z, star(CHILDREN, z, w, tasks, scale), ["--adapt"])
    if rule is None:
        return None
    fixed = {}
    for f in fans:
        log("Z = %g MB: fixed fan-out %d" % (z, f))
        fig = run(a, work, "fixed-%g-%d" % (z, f), star(f, z, w, tasks, scale), [])
        if fig is None:
            return None
        fixed[f] = fig
    best = min(fixed, key=lambda f: fixed[f]["makespan_s"])
    span = fixed[best]["makespan_s"]
    fewest = min(f for f in fixed if fixed[f]["makespan_s"] <= (1 + WITHIN_TIME) * span)
    return {"input_mb": z, "units": w, "tasks": tasks, "time_scale": scale,
            "k_planned": planned_k(z, w), "kept_busy": kept_busy(rule), "rule": rule,
            "fixed": {str(f): fig for f, fig in fixed.items()}, "best_f": best,
            "best_s": span, "fewest_within": fewest,
            "ratio": rule["makespan_s"] / span}


def table(res):
    lines = ["", "| Z, MB | w | tasks | k planned | kept busy (rule) | best fixed f "
             "| its makespan, s | fewest f within 5% | rule's makespan, s "
             "| rule / best | targets met |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in res["sizes"]:
        near = abs(s["kept_busy"] - s["best_f"]) <= WITHIN_CHILDREN
        fast = s["ratio"] <= 1 + WITHIN_TIME
        met = "yes" if near and fast else "**no** (%s)" % ", ".join(
            x for x, ok in (("children", near), ("time", fast)) if not ok)
        lines.append("| %g | %g | %d | %d | %d | %d | %.1f | %d | %.1f | %.3f | %s |" % (
            s["input_mb"], s["units"], s["tasks"], s["k_planned"], s["kept_busy"],
            s["best_f"], s["best_s"], s["fewest_within"], s["rule"]["makespan_s"],
            s["ratio"], met))
    lines += ["", "Every fixed fan-out's makespan, s:", "",
              "| Z, MB | " + " | ".join("f=%s" % f for f in res["fans"]) + " |",
              "|---|" + "---|" * len(res["fans"])]
    for s in res["sizes"]:
        lines.append("| %g | " % s["input_mb"] + " | ".join(
            "%.1f" % s["fixed"][str(f)]["makespan_s"] for f in res["fans"]) + " |")
    lines += ["", "Command: `%s` (emulated; star of %d behind send_limit_mbps %g, links "
              "%g MB/s, delay_ms %g, C = %g units/s everywhere, buffer 3, %s)." % (
                  COMMAND, CHILDREN, SEND_LIMIT_MBPS, SEND_LIMIT_MBPS, DELAY_MS, COMPUTE,
                  POLICY)]
    return "\n".join(lines) + "\n"


def study(a, work):
    sizes = [s for s in SIZES if s[0] == 1.0] if a.quick else list(SIZES)
    fans = [1, 3, CHILDREN] if a.quick else list(range(1, CHILDREN + 1))
    res = {"policy": POLICY, "children": CHILDREN, "send_limit_mbps": SEND_LIMIT_MBPS,
           "delay_ms": DELAY_MS, "compute": COMPUTE, "fans": fans, "sizes": []}
    for z, w, tasks, scale in sizes:
        s = size_runs(a, work, z, w, tasks, scale, fans)
        if s is None:
            return None
        res["sizes"].append(s)
    return res


def main():
    return study_main("adapt-fanout", __doc__, "A star", "treefarm-fanout.", study, table,
                      DOC, RAW, BEGIN, END, COMMAND)


if __name__ == "__main__":
    sys.exit(main())
