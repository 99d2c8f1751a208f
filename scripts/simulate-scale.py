#!/usr/bin/env python3
"""simulate-scale — what `treefarm simulate` costs as trees grow.

    scripts/simulate-scale.py [--nodes 1000,2000,5000,10000] [--per-node 100]
                              [--repeat 3] [--treefarm build/bin/treefarm] [--out DIR]

For each size N: a random tree of N nodes and depth 6
(scripts/tree-config.py --random N --depth 6, seed 1: every node 5
units/s, every link 50 MB/s, 0.5 MB and 1 unit a task, IA:Multi), with
per-node x N tasks, simulated --repeat times under /usr/bin/time, one
size after another. Prints a Markdown table (docs/simulate.md, "Scale";
docs/performance.md) of each size's median run (by wall time): the wall
seconds (setup and in all) with the range over the runs, peak memory,
and per node and per task what they come to, with the events and
messages the run took; and
writes DIR/scale.json with the same figures. With --write, the table
also replaces the region between `<!-- simulate-scale: begin -->` and
`<!-- simulate-scale: end -->` in docs/simulate.md and
docs/performance.md. Exit 1 if a run fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- simulate-scale: begin -->", "<!-- simulate-scale: end -->"


def run_one(treefarm, n, per_node, out):
    cfg = os.path.join(out, "r%d.json" % n)
    with open(cfg, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/tree-config.py"),
                        "--random", str(n), "--depth", "6", "--count", str(n * per_node),
                        "--policy", "ia-multi"], stdout=f, check=True)
    res = os.path.join(out, "r%d" % n)
    timing = os.path.join(out, "time%d.txt" % n)
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", timing, treefarm, "simulate",
                        cfg, "--out", res, "--quiet"], stdout=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit("simulate-scale: %d nodes: treefarm simulate exited %d" % (n, p.returncode))
    wall, kib = open(timing).read().split()[-2:]
    r = json.load(open(os.path.join(res, "results.json")))
    sim = r["simulation"]
    tasks = n * per_node
    return {"nodes": n, "tasks": tasks, "status": r["status"],
            "makespan_s": r["makespan_s"], "efficiency": r["efficiency"],
            "wall_s": float(wall), "setup_s": sim["setup_s"], "run_s": sim["wall_s"] - sim["setup_s"],
            "peak_mib": int(kib) / 1024.0, "events": sim["events"], "messages": sim["messages"],
            "kib_per_node": int(kib) / n, "us_per_task": 1e6 * (sim["wall_s"] - sim["setup_s"]) / tasks}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", default="1000,2000,5000,10000")
    p.add_argument("--per-node", type=int, default=100, help="tasks per node (default 100)")
    p.add_argument("--repeat", type=int, default=3, help="runs per size (default 3)")
    p.add_argument("--treefarm", default=os.path.join(ROOT, "build/bin/treefarm"))
    p.add_argument("--out", help="directory for the configs and results (default: temporary)")
    p.add_argument("--write", action="store_true",
                   help="put the table into docs/simulate.md and docs/performance.md")
    a = p.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="treefarm-scale.")
    os.makedirs(out, exist_ok=True)
    rows = []
    for n in [int(x) for x in a.nodes.split(",")]:
        runs = []
        for _ in range(a.repeat):
            runs.append(run_one(a.treefarm, n, a.per_node, out))
            print("simulate-scale: %d nodes, %d tasks: %.1f s, %.0f MiB" % (
                n, runs[-1]["tasks"], runs[-1]["wall_s"], runs[-1]["peak_mib"]),
                file=sys.stderr)
        runs.sort(key=lambda r: r["wall_s"])
        r = dict(runs[len(runs) // 2])
        r["wall_min"], r["wall_max"] = runs[0]["wall_s"], runs[-1]["wall_s"]
        r["runs"] = len(runs)
        rows.append(r)
    json.dump(rows, open(os.path.join(out, "scale.json"), "w"), indent=1)
    lines = ["| nodes | tasks | wall s, median [range] | of which setup | peak MiB "
             "| KiB per node | us per task | events per task | messages per task "
             "| efficiency |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %d | %.1f [%.1f, %.1f] | %.1f | %.0f | %.0f | %.1f | %.1f | %.1f "
                     "| %.3f |" % (
            r["nodes"], r["tasks"], r["wall_s"], r["wall_min"], r["wall_max"], r["setup_s"],
            r["peak_mib"],
            r["kib_per_node"], r["us_per_task"], r["events"] / r["tasks"],
            r["messages"] / r["tasks"], r["efficiency"]))
    text = "\n".join(lines)
    print(text)
    for doc in ("docs/simulate.md", "docs/performance.md") if a.write else ():
        path = os.path.join(ROOT, doc)
        body = open(path).read()
        i, j = body.index(BEGIN) + len(BEGIN), body.index(END)
        open(path, "w").write(body[:i] + "\n" + text + "\n" + body[j:])
    print("\n(%s)" % out, file=sys.stderr)


if __name__ == "__main__":
    main()
