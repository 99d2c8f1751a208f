#!/usr/bin/env python3
"""simulate-cell — one cell of the reference grid, simulated and perturbed,
and optionally emulated: what docs/simulate.md, "Where it misses", quotes.

    scripts/simulate-cell.py [--send MB] [--compute UNITS] [--policy P]
                             [--time-scale S] [--emulate] [--treefarm PATH]

Defaults: CompRate at 2 MB / 9 units, time scale 10 (configs/fork7.json,
1000 tasks). Prints:
  - the simulated run: makespan, tasks per node, each node's mean time
    per task (its compute spans in the --trace timeline);
  - the same cell simulated with one input changed at a time (a child's
    compute rate, the children's ir_recv, the root's send limit, x0.98 to
    x1.02) and at time scales 5 to 40;
  - with --emulate, one emulated run of the cell: makespan, mean time
    per task, and per node the receive rate the emulation slowed it by,
    integrated over the run (samples/NODE.csv, recv_mbps over time),
    against the MB it received (results.json mb_in); and the cell
    simulated again with Lab3's and SB0's compute rates lowered to the
    emulated run's time per task.
Its runs go to a temporary directory, removed at the end unless --keep.
"""
import argparse
import copy
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def node(cfg, name):
    return next(n for n in cfg["tree"] if n["name"] == name)


def task_times(trace):
    """Mean seconds per task span of each node's engine, from a timeline."""
    ev = json.load(open(trace))["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "process_name"}
    spans = {}
    for e in ev:
        if e["ph"] == "X" and e["tid"] == 1 and e["name"].startswith("task"):
            spans.setdefault(names[e["pid"]], []).append(e["dur"] / 1e6)
    return {n: statistics.mean(d) for n, d in spans.items()}


def run(tf, mode, cfg, work, trace=False):
    path = os.path.join(work, "cell.json")
    out = os.path.join(work, "out-" + mode)
    json.dump(cfg, open(path, "w"))
    cmd = [tf, mode, path, "--out", out, "--quiet"]
    if trace:
        cmd += ["--trace", os.path.join(out, "trace.json")]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
    return out, json.load(open(os.path.join(out, "results.json")))


def describe(out, r):
    times = task_times(os.path.join(out, "trace.json"))
    print("  makespan %.1f s" % r["makespan_s"])
    for n in r["nodes"]:
        if n["computed"]:
            print("  %-5s %4d tasks, %.4f s a task" % (n["name"], n["computed"],
                                                     times.get(n["name"], float("nan"))))
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--send", type=float, default=2)
    p.add_argument("--compute", type=float, default=9)
    p.add_argument("--policy", default="comprate")
    p.add_argument("--time-scale", type=float, default=10)
    p.add_argument("--emulate", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep the runs' directory")
    p.add_argument("--treefarm", default=os.path.join(ROOT, "build/bin/treefarm"))
    a = p.parse_args()
    base = json.load(open(os.path.join(ROOT, "configs/fork7.json")))
    base["tasks"].update(input_mb=a.send, units=a.compute, count=1000)
    base["policy"] = a.policy
    base["platform"]["time_scale"] = a.time_scale
    work = tempfile.mkdtemp(prefix="treefarm-cell-")
    try:
        cell(a, base, work)
    finally:
        if a.keep:
            print("(runs in %s)" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def cell(a, base, work):
    print("simulated (%g MB, %g units, %s, time scale %g):" % (
        a.send, a.compute, a.policy, a.time_scale))
    sim_times = describe(*run(a.treefarm, "simulate", base, work, trace=True))
    print("simulated, one input changed:")
    for f in (0.98, 0.99, 1.01, 1.02):
        for label, change in (
                ("Lab3 compute", lambda c: node(c, "Lab3").update(
                    compute=node(c, "Lab3")["compute"] * f)),
                ("SB0 compute", lambda c: node(c, "SB0").update(
                    compute=node(c, "SB0")["compute"] * f)),
                ("ir_recv of Lab3 and SB0", lambda c: [node(c, k).update(
                    ir_recv=node(c, k)["ir_recv"] * f) for k in ("Lab3", "SB0")]),
                ("root's send limit", lambda c: node(c, "Lab0").update(
                    send_limit_mbps=node(c, "Lab0")["send_limit_mbps"] * f))):
            c = copy.deepcopy(base)
            change(c)
            print("  %-24s x%.2f: %.1f s" % (label, f, run(a.treefarm, "simulate", c,
                                                             work)[1]["makespan_s"]))
    for ts in (5, 10, 20, 40):
        c = copy.deepcopy(base)
        c["platform"]["time_scale"] = ts
        print("  time scale %-13g: %.1f s" % (ts, run(a.treefarm, "simulate", c,
                                                     work)[1]["makespan_s"]))
    if a.emulate:
        print("emulated:")
        out, r = run(a.treefarm, "run", base, work, trace=True)
        emu_times = describe(out, r)
        for n in r["nodes"]:
            if n["mb_in"] <= 0:
                continue
            rows = csv.DictReader(open(os.path.join(out, "samples", n["name"] + ".csv")))
            held = sum(float(x["recv_mbps"]) * (float(x["t1"]) - float(x["t0"]))
                       for x in rows)
            print("  %-5s received %.1f MB; the receive rate it was slowed by integrates "
                  "to %.1f MB: %.3f" % (n["name"], n["mb_in"], held, held / n["mb_in"]))
        c = copy.deepcopy(base)
        for k in ("Lab3", "SB0"):
            node(c, k)["compute"] *= sim_times[k] / emu_times[k]
        print("simulated with Lab3's and SB0's compute rates at the emulated time per "
              "task: %.1f s" % run(a.treefarm, "simulate", c, work)[1]["makespan_s"])


if __name__ == "__main__":
    sys.exit(main())
