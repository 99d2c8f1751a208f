#!/usr/bin/env python3
"""study-split — IA:Split and the end-game on the reference grid, as a table.

    scripts/study-split.py STUDY NO_ENDGAME [RERUN ...] [--out FILE]

STUDY is the reference study's directory (`treefarm bench` over every
policy, the end-game on), NO_ENDGAME a study of ia-multi and ia-split with
--no-endgame over the same grid, each RERUN a study of one or more cells
again at a lower time scale (every policy, the end-game on), whose runs
replace the cell's where the first was unreliable (fidelity < 0.90).

Per cell (Z MB, w units) it prints: IA:Split's makespan, IA:Multi's and
their ratio; the best other policy and the ratio to it, and whether that
target applies (some policy reaches 90% of its bound there); IA:Split's
efficiency, whole run and steady state, against the multi-port bound; the
tail (time to finish the last 5% of the tasks) of IA:Split and IA:Multi
with and without the end-game, and whether a link under 1 MB/s was in use
(IA:Multi without the end-game sent it a task); the cell's lowest
fidelity and the time scale it ran at; and the pace: the tail's tasks
(50 of 1000) at the cell's bound T, the time the whole tree needs for
them in steady state (50 / T). Then the targets, each with the cells that miss
it. Markdown, to stdout or --out.
"""
import argparse
import csv
import json
import math
import os
import sys

FIDELITY_MIN = 0.90
TAIL_FRACTION = 0.05     # the tail: the last 5% of a run's tasks (results.json)
SLOW_LINK_MBPS = 1.0


def load(study):
    """{(z, w, policy): row} of a study's complete runs, with its time scale
    and, per run, whether a slow link got a task."""
    scale = json.load(open(os.path.join(study, "study.json"))).get("time_scale")
    runs = {}
    for row in csv.DictReader(open(os.path.join(study, "runs.csv"))):
        if row["status"] != "complete":
            continue
        z, w = float(row["send_mb"]), float(row["units"])
        name = "%g-%g-%s-%s" % (z, w, row["policy"], row["repeat"])
        res = os.path.join(study, "runs", name, "results.json")
        slow = None
        if os.path.exists(res):
            r = json.load(open(res))
            slow = any(c.get("tasks", 0) > 0 and c.get("link_mbps", 99) < SLOW_LINK_MBPS
                       for n in r["nodes"] for c in n.get("children", []))
        row = dict(row, scale=scale, slow=slow)
        for k in ("makespan_s", "efficiency", "steady_efficiency", "fidelity", "tail_s",
                  "bound"):
            row[k] = float(row[k]) if row.get(k) not in (None, "") else None
        runs[(z, w, row["policy"])] = row
    return runs


def cell_reliable(runs, z, w):
    fids = [r["fidelity"] for (a, b, _), r in runs.items() if (a, b) == (z, w)]
    return bool(fids) and all(f is not None and f >= FIDELITY_MIN for f in fids)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("study")
    ap.add_argument("no_endgame")
    ap.add_argument("rerun", nargs="*")
    ap.add_argument("--out")
    a = ap.parse_args()
    base, plain = load(a.study), load(a.no_endgame)
    tasks = json.load(open(os.path.join(a.study, "study.json")))["tasks"]
    tail_tasks = math.ceil(tasks * TAIL_FRACTION)
    cells = sorted({(z, w) for z, w, _ in base})
    for d in a.rerun:   # a rerun replaces a cell the first study ran unreliably
        again = load(d)
        for z, w in {(z, w) for z, w, _ in again}:
            if not cell_reliable(base, z, w):
                for key in [k for k in base if k[:2] == (z, w)]:
                    del base[key]
                base.update({k: v for k, v in again.items() if k[:2] == (z, w)})
    out = open(a.out, "w") if a.out else sys.stdout
    pct = lambda x: "%.1f%%" % (100 * x) if x is not None else "-"
    sec = lambda x: "%.1f" % x if x is not None else "-"
    print("| Z MB | w | IA:Split s | IA:Multi s | split/multi | best other | split/best "
          "| target applies | efficiency | steady | tail split | tail split, no end-game "
          "| tail multi | tail multi, no end-game | pace | slow link in use | fidelity "
          "| scale |", file=out)
    print("|" + "---|" * 18, file=out)
    miss = {"multi": [], "best": [], "steady": [], "tail": [], "faster": [], "excess": []}
    slow_cells = 0
    for z, w in cells:
        s, m = base.get((z, w, "ia-split")), base.get((z, w, "ia-multi"))
        ps, pm = plain.get((z, w, "ia-split")), plain.get((z, w, "ia-multi"))
        if not s or not m:
            continue
        others = [r for (a, b, p), r in base.items() if (a, b) == (z, w) and p != "ia-split"]
        best = min(others, key=lambda r: r["makespan_s"])
        applies = any(r["efficiency"] >= 0.90 for (a, b, _), r in base.items()
                      if (a, b) == (z, w))
        reliable = cell_reliable(base, z, w)
        fid = min(r["fidelity"] for (a, b, _), r in base.items() if (a, b) == (z, w))
        r_multi = s["makespan_s"] / m["makespan_s"]
        r_best = s["makespan_s"] / best["makespan_s"]
        slow = pm["slow"] if pm else None
        label = "%g/%g" % (z, w)
        if r_multi > 1.01:
            miss["multi"].append(label)
        if applies and r_best > 1.02:
            miss["best"].append(label)
        if reliable and (s["steady_efficiency"] or 0) < 0.97:
            miss["steady"].append(label)
        # The pace: the tail's tasks at the bound's rate, the time the whole
        # tree needs for them in steady state.
        pace = tail_tasks / s["bound"] if s["bound"] else None
        if slow and pm:
            slow_cells += 1
            if s["tail_s"] is None or s["tail_s"] > 0.5 * pm["tail_s"]:
                miss["tail"].append(label)
                if pace and 0.5 * pm["tail_s"] < pace:
                    miss["faster"].append(label)
            if pace and s["tail_s"] - pace > max(0.0, 0.5 * (pm["tail_s"] - pace)):
                miss["excess"].append(label)
        print("| %g | %g | %.1f | %.1f | %.3f | %s %.1f | %.3f | %s | %s | %s | %s | %s | %s "
              "| %s | %s | %s | %.2f%s | %g |" % (
                  z, w, s["makespan_s"], m["makespan_s"], r_multi, best["policy"],
                  best["makespan_s"], r_best, "yes" if applies else "no",
                  pct(s["efficiency"]), pct(s["steady_efficiency"]), sec(s["tail_s"]),
                  sec(ps["tail_s"] if ps else None), sec(m["tail_s"]),
                  sec(pm["tail_s"] if pm else None), sec(pace),
                  "-" if slow is None else ("yes" if slow else "no"), fid,
                  "" if reliable else " !", s["scale"]), file=out)
    n = len(cells)
    print("", file=out)
    print("Targets, over the %d cells (`!`: fidelity < %.2f, unreliable):" % (n, FIDELITY_MIN),
          file=out)
    print("- IA:Split <= IA:Multi x 1.01: %s" % (
        "every cell" if not miss["multi"] else "missed in " + ", ".join(miss["multi"])),
          file=out)
    print("- IA:Split <= the best other x 1.02 where a policy reaches 90%% of its bound: %s" % (
        "every such cell" if not miss["best"] else "missed in " + ", ".join(miss["best"])),
          file=out)
    print("- steady-state efficiency >= 97%% in every reliable cell: %s" % (
        "every one" if not miss["steady"] else "missed in " + ", ".join(miss["steady"])),
          file=out)
    print("- tail with the end-game <= half IA:Multi's without it, where a link under "
          "1 MB/s is in use (%d cells): %s" % (
              slow_cells, "every such cell" if not miss["tail"]
              else "missed in " + ", ".join(miss["tail"])), file=out)
    if miss["faster"]:
        print("  - of those, half IA:Multi's tail is shorter than the pace (the tail's "
              "tasks at the bound's rate) in %s" % ", ".join(miss["faster"]), file=out)
    print("- the tail's excess over the pace with the end-game <= half IA:Multi's without "
          "it (or none): %s" % (
              "every such cell" if not miss["excess"]
              else "missed in " + ", ".join(miss["excess"])), file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
