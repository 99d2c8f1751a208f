#!/usr/bin/env python3
"""simulate-validate — the simulator against the emulated reference study.

    scripts/simulate-validate.py [--out DIR] [--treefarm build/bin/treefarm]
                                 [--emulated docs/study/runs.csv] [--no-write]

Simulates the reference grid (configs/fork7.json: Z in {2, 5, 10} MB x w
in {1, 3, 5, 7, 9, 11} units x every registered policy, 1000 tasks, time
scale 40, as `make study` emulated it) with `treefarm bench --simulate`
into DIR (default results/simulate-validation; a finished study there is
reused), then compares every cell with the emulated study's runs.csv:

  - the makespan: |simulated - emulated| / emulated, in every cell whose
    emulated run kept up with its clock (fidelity >= 0.9);
  - the ranking: in each (Z, w), every pair of policies whose emulated
    makespans differ by more than 5% must come in the same order;
  - IA:Multi's steady state against its bound, in every (Z, w).

A cell the emulated study ran again at a lower time scale because a run
of it fell behind its clock (`rerun-Z-W-runs.csv` beside runs.csv, as
`make study` writes them) is compared with its rerun's runs, simulated at
the rerun's time scale too (`rerun_time_scale` in the study's wall.json),
into DIR/rerun-Z-W: the simulation models the real-time costs that make
an emulated run depend on its time scale, so like is compared with like.

It prints the verdicts and rewrites the region between
`<!-- simulate-validate: begin -->` and `<!-- simulate-validate: end -->`
in docs/simulate.md (unless --no-write). Exit 0 when every target holds,
1 when one does not, 2 when the study cannot be run.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- simulate-validate: begin -->", "<!-- simulate-validate: end -->"
MAKESPAN_TOL, RANK_GAP, STEADY_TOL, FIDELITY_MIN = 0.10, 0.05, 0.02, 0.9
GRID = ["--send", "2,5,10", "--compute", "1,3,5,7,9,11", "--tasks", "1000",
        "--time-scale", "40"]


def runs(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["status"] == "complete":
            out[(float(r["send_mb"]), float(r["units"]), r["policy"])] = r
    return out


def with_reruns(emu, path):
    """emu with each unreliable cell's rows replaced by its rerun's: the
    rerun-Z-W-runs.csv files beside the emulated runs.csv. Returns the
    cells replaced."""
    d = os.path.dirname(os.path.abspath(path))
    replaced = []
    for name in sorted(os.listdir(d)):
        if not (name.startswith("rerun-") and name.endswith("-runs.csv")) \
                or name.startswith("rerun-both-"):
            continue
        again = runs(os.path.join(d, name))
        for z, w in {(z, w) for z, w, _ in again}:
            if any(float(r["fidelity"]) < FIDELITY_MIN for k, r in emu.items()
                   if k[:2] == (z, w)):
                emu.update({k: r for k, r in again.items() if k[:2] == (z, w)})
                replaced.append((z, w))
    return sorted(replaced)


def rerun_scale(path):
    """The time scale of the emulated study's reruns (its wall.json)."""
    wall = os.path.join(os.path.dirname(os.path.abspath(path)), "wall.json")
    try:
        return float(json.load(open(wall))["rerun_time_scale"])
    except (OSError, ValueError, KeyError) as e:
        print("simulate-validate: %s: no rerun_time_scale (%s)" % (wall, e), file=sys.stderr)
        sys.exit(2)


def simulate(treefarm, out, args):
    """`treefarm bench fork7 ARGS --simulate --out OUT`; its runs."""
    cmd = [treefarm, "bench", os.path.join(ROOT, "configs/fork7.json")] + args + [
        "--simulate", "--out", out]
    rc = subprocess.run(cmd).returncode
    if rc not in (0, 1):
        print("simulate-validate: %s exited %d" % (" ".join(cmd), rc), file=sys.stderr)
        sys.exit(2)
    return runs(os.path.join(out, "runs.csv"))


def compare(sim, emu):
    """The per-cell rows, the ranking disagreements, the steady figures."""
    rows, wrong_order, steady = [], [], []
    cells = sorted({(z, w) for z, w, _ in emu})
    for z, w in cells:
        pols = sorted(p for zz, ww, p in emu if (zz, ww) == (z, w))
        for p in pols:
            e, s = emu[(z, w, p)], sim.get((z, w, p))
            if s is None:
                rows.append((z, w, p, float(e["makespan_s"]), None, None, float(e["fidelity"])))
                continue
            me, ms = float(e["makespan_s"]), float(s["makespan_s"])
            rows.append((z, w, p, me, ms, (ms - me) / me, float(e["fidelity"])))
        for i, a in enumerate(pols):
            for b in pols[i + 1:]:
                ea, eb = float(emu[(z, w, a)]["makespan_s"]), float(emu[(z, w, b)]["makespan_s"])
                if abs(ea - eb) / min(ea, eb) <= RANK_GAP:
                    continue
                if (z, w, a) not in sim or (z, w, b) not in sim:
                    continue
                sa, sb = float(sim[(z, w, a)]["makespan_s"]), float(sim[(z, w, b)]["makespan_s"])
                if (ea < eb) != (sa < sb):
                    wrong_order.append((z, w, a, b, ea, eb, sa, sb))
        if (z, w, "ia-multi") in sim:
            steady.append((z, w, float(sim[(z, w, "ia-multi")]["steady_efficiency"])))
    return rows, wrong_order, steady


def report(rows, wrong_order, steady, nsim, replaced):
    judged = [r for r in rows if r[4] is not None and r[6] >= FIDELITY_MIN]
    worst = max(judged, key=lambda r: abs(r[5]))
    over = [r for r in judged if abs(r[5]) > MAKESPAN_TOL]
    missing = [r for r in rows if r[4] is None]
    f7 = [x for x in steady if (x[0], x[1]) == (2.0, 5.0)]
    ok_f7 = bool(f7) and abs(f7[0][2] - 1) <= STEADY_TOL
    lines = []
    lines.append("Simulated %d runs against the %d emulated runs of docs/study/runs.csv "
                 "(%d of them with fidelity >= %.1f, the cells judged)." % (
                     nsim, len(rows), len(judged), FIDELITY_MIN))
    if replaced:
        lines[-1] += (" The emulated study ran %d cells again at a lower time scale "
                      "because a run of them fell behind its clock (%s): their reruns' "
                      "runs are the ones compared, with runs simulated at the rerun's "
                      "time scale." % (
                          len(replaced), ", ".join("%g MB / %g units" % c for c in replaced)))
    lines.append("")
    lines.append("- **Makespan** within %d%% of the emulated in %d of %d judged cells; "
                 "the worst, %g MB / %g units / %s: simulated %.1f s, emulated %.1f s "
                 "(%+.1f%%); mean |difference| %.1f%%." % (
                     100 * MAKESPAN_TOL, len(judged) - len(over), len(judged),
                     worst[0], worst[1], worst[2], worst[4], worst[3], 100 * worst[5],
                     100 * sum(abs(r[5]) for r in judged) / len(judged)))
    lines.append("- **Ranking**: of the pairs of policies whose emulated makespans differ "
                 "by more than %d%% in a cell, %d come in the other order simulated%s." % (
                     100 * RANK_GAP, len(wrong_order),
                     "" if not wrong_order else ": " + "; ".join(
                         "%g MB / %g units: %s %.1f s vs %s %.1f s emulated, %.1f vs %.1f "
                         "simulated" % (z, w, a, ea, b, eb, sa, sb)
                         for z, w, a, b, ea, eb, sa, sb in wrong_order)))
    lines.append("- **IA:Multi's steady state** against its bound: %s on fork7 itself "
                 "(2 MB / 5 units); over the grid %.3f to %.3f." % (
                     "%.3f" % f7[0][2] if f7 else "missing",
                     min(x[2] for x in steady), max(x[2] for x in steady)))
    if missing:
        lines.append("- %d cells have no simulated run." % len(missing))
    lines.append("")
    pols = sorted({r[2] for r in rows})
    lines.append("Simulated makespan against emulated, per cell: (simulated - emulated) / "
                 "emulated; a cell in brackets was not judged (emulated fidelity < %.1f)."
                 % FIDELITY_MIN)
    lines.append("")
    lines.append("| Z MB | w | " + " | ".join(pols) + " |")
    lines.append("|---|---|" + "---|" * len(pols))
    by = {(r[0], r[1], r[2]): r for r in rows}
    for z, w in sorted({(r[0], r[1]) for r in rows}):
        cells = []
        for p in pols:
            r = by.get((z, w, p))
            if r is None or r[4] is None:
                cells.append("-")
            else:
                t = "%+.1f%%" % (100 * r[5])
                cells.append(t if r[6] >= FIDELITY_MIN else "(%s)" % t)
        lines.append("| %g | %g | %s |" % (z, w, " | ".join(cells)))
    good = not over and not wrong_order and ok_f7 and not missing
    return "\n".join(lines), good


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.path.join(ROOT, "results/simulate-validation"))
    p.add_argument("--treefarm", default=os.path.join(ROOT, "build/bin/treefarm"))
    p.add_argument("--emulated", default=os.path.join(ROOT, "docs/study/runs.csv"))
    p.add_argument("--no-write", action="store_true", help="leave docs/simulate.md alone")
    a = p.parse_args()
    sim = simulate(a.treefarm, a.out, GRID)
    emu = runs(a.emulated)
    replaced = with_reruns(emu, a.emulated)
    if replaced:
        scale = rerun_scale(a.emulated)
        for z, w in replaced:
            again = simulate(a.treefarm, os.path.join(a.out, "rerun-%g-%g" % (z, w)), [
                "--send", "%g" % z, "--compute", "%g" % w, "--tasks", "1000",
                "--time-scale", "%g" % scale])
            sim.update({k: r for k, r in again.items() if k[:2] == (z, w)})
    rows, wrong_order, steady = compare(sim, emu)
    text, good = report(rows, wrong_order, steady, len(sim), replaced)
    print(text)
    if not a.no_write:
        path = os.path.join(ROOT, "docs/simulate.md")
        doc = open(path).read()
        i, j = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        open(path, "w").write(doc[:i] + "\n" + text + "\n" + doc[j:])
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
