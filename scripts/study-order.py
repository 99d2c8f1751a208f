#!/usr/bin/env python3
"""study-order — the IA order both ways on the reference grid, as a table.

    scripts/study-order.py RUNS_CSV BOTH_RUNS_CSV [--rerun DIR ...]
                           [--rerun-both DIR ...] [--out FILE]

RUNS_CSV is the reference study's runs.csv (every policy; the IA
policies rank by the IR_s measured while the root computes alone, the
default "ia_order": "alone"), BOTH_RUNS_CSV a study of the IA policies
over the same grid with --ia-order both (ranking by the both-compute
IR_s). Each --rerun is a directory of a study of some cells again at a
lower time scale, every policy (its runs.csv replaces the cell's rows
where the first study ran one below fidelity 0.90); each --rerun-both
the same of the IA policies ranking both (it replaces the cell's rows of
BOTH_RUNS_CSV wherever it was run).

Per cell (Z MB, w units) it prints the makespans of IA:Single under both
orders, BWC, CompRate and FCFS, and whether the published single-port
ranking holds under each order: among the published single-port policies
(FCFS, CompRate, BWC, IA:Single), IA:Single best (within TOL), BWC the
best of the others (within TOL) and FCFS the worst (within TOL). Then
IA:Multi under both orders and whether it is best among the published
policies (FCFS, CompRate, BWC, IA:Single, IA:Multi, RootComputes) within
TOL, the published outcome but at (10 MB, 1 unit), where RootComputes
was best. Then the counts. Markdown, to stdout or --out.
"""
import argparse
import csv
import os
import sys

FIDELITY_MIN = 0.90
TOL = 1.02            # one run per cell: differences under 2% are noise
SINGLE = ("fcfs", "comprate", "bwc", "ia-single")
PUBLISHED = SINGLE + ("ia-multi", "root-computes")


def load(path):
    """{(z, w, policy): row} of the complete runs of a runs.csv."""
    runs = {}
    for row in csv.DictReader(open(path)):
        if row["status"] != "complete":
            continue
        row["makespan_s"] = float(row["makespan_s"])
        row["fidelity"] = float(row["fidelity"] or 0)
        row["_from"] = path
        runs[(float(row["send_mb"]), float(row["units"]), row["policy"])] = row
    return runs


def reliable(runs, z, w):
    return all(r["fidelity"] >= FIDELITY_MIN for k, r in runs.items() if k[:2] == (z, w))


def single_verdict(m):
    """The published single-port ranking on makespans m (policy -> s):
    '' when it holds, else what breaks it."""
    why = []
    others = [p for p in SINGLE if p != "ia-single"]
    if m["ia-single"] > TOL * min(m[p] for p in others):
        why.append("IA:Single not best")
    rest = [p for p in others if p != "bwc"]
    if m["bwc"] > TOL * min(m[p] for p in rest):
        why.append("BWC not next")
    if m["fcfs"] * TOL < max(m[p] for p in SINGLE if p != "fcfs"):
        why.append("FCFS not worst")
    return "; ".join(why)


def multi_verdict(m, z, w):
    """IA:Multi best of the published policies within TOL ('' when so);
    at (10 MB, 1 unit) the published best is RootComputes."""
    best = min(m[p] for p in PUBLISHED)
    who = "root-computes" if (z, w) == (10, 1) else "ia-multi"
    return "" if m[who] <= TOL * best else "%s %.1f%% behind" % (
        "RootComputes" if who == "root-computes" else "IA:Multi", 100 * (m[who] / best - 1))


def mark(text):
    return "yes" if not text else "no: " + text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs")
    ap.add_argument("both")
    ap.add_argument("--rerun", nargs="*", default=[])
    ap.add_argument("--rerun-both", nargs="*", default=[])
    ap.add_argument("--out")
    a = ap.parse_args()
    alone, both = load(a.runs), load(a.both)
    rerun = set()
    for d in a.rerun:
        again = load(os.path.join(d, "runs.csv"))
        for z, w in {k[:2] for k in again}:
            if not reliable(alone, z, w):
                alone.update({k: r for k, r in again.items() if k[:2] == (z, w)})
                rerun.add((z, w))
    for d in a.rerun_both:
        both.update(load(os.path.join(d, "runs.csv")))
    cells = sorted({k[:2] for k in alone})
    out = open(a.out, "w") if a.out else sys.stdout
    p = lambda *s: print(*s, file=out)
    p("# The IA order both ways on the reference grid")
    p()
    p("Made by `scripts/study-order.py` from runs.csv (the IA policies ranking by")
    p("the IR_s measured while the root computes alone, the default) and")
    p("order-both-runs.csv (the IA policies with `--ia-order both`); makespans in")
    p("platform seconds, one run per cell. A cell some run of which fell")
    p("behind its clock (fidelity below %.2f) was run again at a lower time" % FIDELITY_MIN)
    p("scale, both orders: `*` marks it; `!` a cell still below. A ranking")
    p("holds within %d%%: one run per cell does not resolve less." % round(100 * (TOL - 1)))
    p()
    p("## The single-port ranking: IA:Single best, BWC next, FCFS worst")
    p()
    p("| Z | w | IA:Single alone | IA:Single both | BWC | CompRate | FCFS "
      "| holds, alone | holds, both |")
    p("|---|---|---|---|---|---|---|---|---|")
    counts = {"single_alone": 0, "single_both": 0, "multi_alone": 0, "multi_both": 0}
    multi_rows = []
    for z, w in cells:
        try:
            m = {pol: alone[(z, w, pol)]["makespan_s"] for pol in PUBLISHED + ("ia-split",)}
            mb = dict(m)
            for pol in ("ia-single", "ia-multi", "ia-split"):
                mb[pol] = both[(z, w, pol)]["makespan_s"]
        except KeyError as e:
            p("| %g | %g | missing run %s |" % (z, w, e))
            continue
        flag = (" *" if (z, w) in rerun or any(
                     "rerun" in r.get("_from", "") for k, r in both.items() if k[:2] == (z, w))
                 else "")
        if not (reliable(alone, z, w) and reliable(both, z, w)):
            flag += " !"
        va, vb = single_verdict(m), single_verdict(mb)
        counts["single_alone"] += not va
        counts["single_both"] += not vb
        p("| %g | %g%s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s |" % (
            z, w, flag, m["ia-single"], mb["ia-single"], m["bwc"], m["comprate"], m["fcfs"],
            mark(va), mark(vb)))
        ma, mbv = multi_verdict(m, z, w), multi_verdict(mb, z, w)
        counts["multi_alone"] += not ma
        counts["multi_both"] += not mbv
        best = min((m[pol], pol) for pol in PUBLISHED)[1]
        multi_rows.append("| %g | %g%s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |" % (
            z, w, flag, m["ia-multi"], mb["ia-multi"], m["ia-split"], mb["ia-split"], best,
            mark(ma), mark(mbv)))
    p()
    p("## The multi-port outcome: IA:Multi best but at (10 MB, 1 unit)")
    p()
    p("| Z | w | IA:Multi alone | IA:Multi both | IA:Split alone | IA:Split both "
      "| best published, alone | holds, alone | holds, both |")
    p("|---|---|---|---|---|---|---|---|---|")
    for row in multi_rows:
        p(row)
    p()
    n = len(cells)
    p("## Counts")
    p()
    p("- the single-port ranking holds in %d of %d cells ranking alone, %d ranking both;" %
      (counts["single_alone"], n, counts["single_both"]))
    p("- the multi-port outcome holds in %d of %d cells ranking alone, %d ranking both." %
      (counts["multi_alone"], n, counts["multi_both"]))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
