#!/usr/bin/env python3
"""study-figures — every figure docs/study/README.md's discussion quotes, from the data.

    scripts/study-figures.py [DIR]

DIR is a reference study's directory as `make study` leaves docs/study
(default docs/study): runs.csv (the main grid at time scale 40, every
policy, the IA policies ranking "alone"), study.json, wall.json,
order-both-runs.csv (the IA policies ranking "both"), no-endgame-runs.csv
(IA:Multi and IA:Split without the end-game), rerun-Z-W-runs.csv (a cell
again at time scale 10, every policy), rerun-both-Z-W-runs.csv (a cell
again at time scale 10, the IA policies ranking both), and split.md and
order.md (scripts/study-split.py and scripts/study-order.py).

It prints, under the headings of the README's discussion ("What a run
costs at s = 40" in "Time scale and fidelity", then "The reference
study" to the end), each figure the text quotes, labelled with the claim
it supports. As the README says, the discussion uses the reruns in place
of the main grid's cells: a rerun replaces every run of a cell the main
grid ran below fidelity 0.90, and a rerun ranking both replaces the
cell's runs of order-both-runs.csv, with the rules, tolerances and
verdicts of scripts/study-order.py and scripts/study-split.py, which it
imports. "What a run costs" and the study's size are the main grid's own.

Whether IA:Multi without the end-game sent a task over a link under
1 MB/s is in each run's results.json, which DIR does not keep: that column
is read from split.md. The last section checks that order.md's counts
and split.md's makespans agree with the data here.

Exit status: 0; 1 when a cell lacks a complete run (named); 2 when DIR
is not a directory or lacks a file it needs (named).
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ beside the scripts
from studyfig import (  # noqa: E402
    order, split, FIDELITY_MIN, TOL, NAMES, IA, SINGLE_PORT, BASELINE, NEEDED, load,
    md_table, cell, cells, pct, behind, span, num, out, head, excluded, bwc_order, mk,
    low_cells, Study)


def ratio_of(a, b):
    """a / b, or None when either is missing."""
    return None if a is None or not b else a / b


def section_title(st):
    """The report's title and which cells the reruns replace."""
    print("# Figures of docs/study/README.md, from %s" % st.dir)
    print()
    print("Main grid: runs.csv at time scale %g; with the reruns in place of %s "
          "(from rerun-Z-W-runs.csv) wherever the README's discussion uses them."
          % (st.scale, cells(st.replaced)))


def section_cost(st):
    """What a run costs at the main grid's time scale: its own runs, no reruns."""
    main_grid, root, scale = st.main_grid, st.root, st.scale
    head("## Time scale and fidelity: what a run costs at s = %g (runs.csv, no reruns)" % scale)
    r = main_grid.get((2.0, 5.0, "ia-multi"))
    if r:
        out("IA:Multi at 2 MB and 5 units: wall time / makespan / efficiency / reliable",
            "%.1f s / %.1f s / %.0f%% / %s" % (r["wall_s"], r["makespan_s"],
                                                100 * r["efficiency"],
                                                "reliable" if r["efficiency_reliable"]
                                                else "UNRELIABLE"))
    r = main_grid.get((10.0, 11.0, BASELINE))
    if r:
        out("RootComputes at 10 MB and 11 units: wall time / makespan",
            "%.1f s / %.1f s (count x w / C_root = %.1f s)" % (
                r["wall_s"], r["makespan_s"],
                st.study["tasks"] * 11 / root["compute"]))
    rc = [r for k, r in main_grid.items() if k[2] == BASELINE]
    out("RootComputes alone over the %d cells: platform time / wall time" % len(rc),
        "%.0f s / %.0f s = %.1f min (platform / %g = %.1f min)" % (
            sum(r["makespan_s"] for r in rc), sum(r["wall_s"] for r in rc),
            sum(r["wall_s"] for r in rc) / 60, scale,
            sum(r["makespan_s"] for r in rc) / scale / 60))


def section_size(st):
    """The study's size, wall time and platform time."""
    study, wall, main_grid = st.study, st.wall, st.main_grid
    both_main, plain = st.both_main, st.plain
    head("## The reference study: fork7, the published grid")
    n_s, n_w, n_p = len(study["send_mb"]), len(study["units"]), len(study["policies"])
    out("send sizes x compute sizes x policies x tasks, one run per cell",
        "%d x %d x %d x %d, repeat %d: %d runs expected, %d complete in runs.csv" % (
            n_s, n_w, n_p, study["tasks"], study["repeat"],
            n_s * n_w * n_p * study["repeat"], len(main_grid)))
    out("main grid's wall time (wall.json wall_s)",
        "%d s = %.1f min" % (wall["wall_s"], wall["wall_s"] / 60))
    plat = sum(r["makespan_s"] for r in main_grid.values())
    out("main grid's platform time (sum of makespans)", "%.0f s = %.1f h" % (plat, plat / 3600))
    out("the IA policies ranking both (order-both-runs.csv): runs, wall time (order_wall_s)",
        "%d runs, %s s" % (len(both_main), wall.get("order_wall_s", "-")))
    out("IA:Multi and IA:Split with --no-endgame (no-endgame-runs.csv): runs",
        "%d runs (policies %s)" % (len(plain), ", ".join(sorted({k[2] for k in plain}))))
    ratio = lambda runs: span((r["makespan_s"] / r["wall_s"] for r in runs.values()
                               if r["wall_s"]), "%.2f")
    out("platform time = wall x the time scale: makespan / wall_s, main grid; "
        "order-both; no-endgame", "%s; %s; %s" % (ratio(main_grid), ratio(both_main),
                                                   ratio(plain)))
    rr = {}
    for c, p in list(st.rerun_paths.items()) + list(st.both_paths.items()):
        rr.update({(p,) + k: v for k, v in load(p).items()})
    out("... every rerun (rerun-*-runs.csv; wall.json rerun_time_scale %s)"
        % wall.get("rerun_time_scale", "-"), ratio(rr))


def section_fidelity(st):
    """The cells run below fidelity 0.90, and their reruns."""
    main_grid, grid, both, plain = st.main_grid, st.grid, st.both, st.plain
    wall, replaced, both_paths, root, kids = st.wall, st.replaced, st.both_paths, st.root, st.kids
    head("### Fidelity of the runs")
    lows = low_cells(main_grid)
    out("cells of the main grid with a run below %.2f (%d)" % (FIDELITY_MIN, len(lows)),
        cells(lows))
    worst = min(main_grid.items(), key=lambda kv: kv[1]["fidelity"])
    out("the lowest", "%.2f (%.3f, %s %s)" % (worst[1]["fidelity"], worst[1]["fidelity"],
                                             cell(worst[0][:2]), NAMES[worst[0][2]]))
    out("all of them run again at time scale %s, every policy" % wall.get("rerun_time_scale"),
        "none to run again" if not lows and not replaced else
        "%s (rerun-Z-W-runs.csv for %s; cells replaced: %s)" % (
            "yes" if set(lows) <= replaced else "NO: not rerun " + cells(set(lows) - replaced),
            cells(st.rerun_paths), cells(replaced)))
    fr = [grid[k]["fidelity"] for k in grid if k[:2] in replaced]
    out("every run of the reruns at or above", "%.3f" % min(fr) if fr else "-")
    blows = low_cells(st.both_main)
    out("cells of the runs ranking both below %.2f (%d)" % (FIDELITY_MIN, len(blows)),
        cells(blows) + "; of them not among the main grid's: " + cells(set(blows) - set(lows)))
    union = set(blows) | set(lows)
    out("those and the main grid's (%d) run again ranking both" % len(union),
        "none to run again" if not union and not both_paths else
        "rerun-both-Z-W-runs.csv for %s (%d)%s" % (
            cells(both_paths), len(both_paths), "" if set(both_paths) >= union
            else "; NOT rerun: " + cells(union - set(both_paths))))
    fb = [r["fidelity"] for c in both_paths for r in load(both_paths[c]).values()]
    out("every run ranking both rerun at or above", "%.3f" % min(fb) if fb else "-")
    out("every figure rests on runs at %.2f or above: lowest fidelity of the main grid with "
        "the reruns; ranking both with its reruns" % FIDELITY_MIN,
        "%.3f; %.3f" % (min(r["fidelity"] for r in grid.values()),
                        min(r["fidelity"] for r in both.values())))
    pl = sorted((k, r["fidelity"]) for k, r in plain.items() if r["fidelity"] < FIDELITY_MIN)
    out("... but no-endgame-runs.csv (never rerun) has runs below %.2f" % FIDELITY_MIN,
        "; ".join("%s %s at %.4f" % (cell(k[:2]), NAMES[k[2]], f) for k, f in pl) or "none")
    t1 = 1 / root["compute"]
    out("a 1-unit task's compute on the root (1 / C_root); in wall time at s = %g" % st.scale,
        "%.3f s; %.2f ms (on the fastest child, %s: %.3f s)" % (
            t1, 1000 * t1 / st.scale, max(kids, key=lambda k: k["compute"])["name"],
            1 / max(k["compute"] for k in kids)))
    out("1-unit cells among the main grid's flagged ones",
        cells(c for c in lows if c[1] == min(st.study["units"])))


def section_multi_port(st):
    """Finding 1: how often IA:Multi and IA:Split are best or within 2%, and
    the IA order's part in it."""
    grid, policies, allcells, best = st.grid, st.policies, st.allcells, st.best
    head("### What the published study found, and what we find")
    print("(the main grid with the reruns; every policy; 'best' = shortest makespan)")
    head("#### 1. The multi-port policies are best, or within 2% of it, in every cell")
    wins = {}
    for c, p in best.items():
        wins.setdefault(p, []).append(c)
    out("cells with the shortest makespan, per policy",
        "; ".join("%s %d" % (NAMES[p], len(wins[p])) for p in policies if p in wins))
    for p in ("ia-multi", "ia-split"):
        rat = {c: mk(grid, c[0], c[1], p) / mk(grid, c[0], c[1], best[c]) for c in allcells}
        near = [c for c in allcells if rat[c] <= TOL]
        out("%s shortest in N cells, within 2%% of the best in M" % NAMES[p],
            "N = %d, M = %d of %d; at most %.1f%% behind the best (%s)" % (
                len(wins.get(p, [])), len(near), len(allcells),
                100 * (max(rat.values()) - 1), cell(max(rat, key=rat.get))))
    for c in sorted(allcells):
        if best[c] in ("ia-multi", "ia-split"):
            continue
        z, w = c
        second = min((p for p in policies if p != best[c]), key=lambda p: mk(grid, z, w, p))
        out("%s wins %s" % (NAMES[best[c]], cell(c)),
            "by %.2f%% over %s (%.1f against %.1f)" % (
                behind(mk(grid, z, w, second), mk(grid, z, w, best[c])), NAMES[second],
                mk(grid, z, w, best[c]), mk(grid, z, w, second)))
    for c in sorted(allcells):
        z, w = c
        m = mk(grid, z, w, "ia-multi")
        if m > TOL * mk(grid, z, w, best[c]):
            ahead = [p for p in policies if m > TOL * mk(grid, z, w, p)]
            out("IA:Multi's miss %s" % cell(c), ", ".join(
                "%.2f%% behind %s" % (behind(m, mk(grid, z, w, p)), NAMES[p]) for p in
                sorted(ahead, key=lambda p: mk(grid, z, w, p))))
    kids, kb, alone_o = st.kids, st.kb, st.alone_o
    fastest = max(kids, key=lambda k: k["compute"])["name"]
    out("the fastest computer; its place ranking alone",
        "%s (%.2f units/s); %d of %d (%s)" % (fastest, kb[fastest]["compute"],
                                              alone_o.index(fastest) + 1, len(kids),
                                              ", ".join(alone_o)))
    third = sorted(kids, key=lambda k: k["ir_send"])[2]["ir_send"]
    out("ranking both, the third-lowest IR_s (ir_send) belongs to",
        "%s (%.4f)" % (" and ".join(k["name"] for k in kids if k["ir_send"] == third), third))
    if (2.0, 5.0, "ia-multi") in st.both:
        out("at 2 MB and 5 units IA:Multi ranking both finished in X s against Y (alone)",
            "%.1f against %.1f" % (mk(st.both, 2.0, 5.0, "ia-multi"),
                                   mk(grid, 2.0, 5.0, "ia-multi")))
    out("differences under about 2% are noise (study-order.py TOL)",
        "%.0f%% (TOL %.2f)" % (100 * (TOL - 1), TOL))


def section_one_unit(st):
    """Finding 2: the 1-unit cells, where the root alone is hard to beat."""
    study, grid, root, kids = st.study, st.grid, st.root, st.kids
    head("#### 2. The 1-unit cells: agreement in substance")
    z, w = st.zmax, min(study["units"])
    rcm = mk(grid, z, w, BASELINE)
    norm = lambda p, z=z, w=w: mk(grid, z, w, p) / mk(grid, z, w, BASELINE)
    out("winner at %s" % cell((z, w)), NAMES[st.best[(z, w)]])
    iav = [norm(p) for p in IA]
    out("every IA policy within X%% of RootComputes at %s (normalized)" % cell((z, w)),
        "%.2f%% (%s: %s)" % (100 * max(abs(v - 1) for v in iav), span(iav, "%.3f"),
                             ", ".join("%s %.4f" % (NAMES[p], norm(p)) for p in IA)))
    ex = excluded(root, kids, z, w)
    cost = min(k["ir_send"] * z * root["compute"] / w for k in kids)
    out("children with IR_s Z C >= 1 at %s" % cell((z, w)),
        "%d of %d (lowest IR_s Z C %.3f)" % (len(ex), len(kids), cost))
    lose = [norm(p) for p in ("fcfs", "bwc", "comprate")]
    out("the policies that ignore interference lose X–Y% against the root alone",
        "%.1f–%.1f%%: FCFS %.3f, BWC %.3f, CompRate %.3f" % (
            100 * (min(lose) - 1), 100 * (max(lose) - 1), *lose))
    out("RootComputes' makespan there", "%.1f s" % rcm)
    z = sorted(study["send_mb"])[1]
    ex = excluded(root, kids, z, w)
    out("children excluded at %s; kept" % cell((z, w)),
        "%d of %d; %s" % (len(ex), len(kids), ", ".join(k["name"] for k in kids
                                                       if k["name"] not in ex)))
    tie = [norm(p, z, w) for p in ("ia-single", "ia-single-opt", "ia-multi")]
    out("IA:Single, IA:Single-opt, IA:Multi tie the root alone (normalized)",
        "%s (%s)" % (span(tie, "%.3f"), ", ".join("%.4f" % t for t in tie)))
    s = norm("ia-split", z, w)
    out("IA:Split beats it by X% (normalized)", "%.1f%% (%.3f)" % (100 * (1 - s), s))
    out("FCFS, BWC; CompRate (normalized)",
        "%.3f, %.3f; %.3f (lose %.1f%%, %.1f%%; %.1f%%)" % (
            norm("fcfs", z, w), norm("bwc", z, w), norm("comprate", z, w),
            100 * (norm("fcfs", z, w) - 1), 100 * (norm("bwc", z, w) - 1),
            100 * (norm("comprate", z, w) - 1)))


def section_single_port(st):
    """Finding 3: the published single-port ranking, and IA:Single against
    the best single-port policy."""
    grid, allcells = st.grid, st.allcells
    head("#### 3. The single-port policies: as published, but where CompRate is worst")
    out("ranking alone, the published ranking holds in N of the %d cells (study-order.py)"
        % len(allcells), "%d; not in %s" % (
            sum(not v for v in st.verdict.values()),
            "; ".join("%s (%s)" % (cell(c), v) for c, v in sorted(st.verdict.items()) if v)))
    bsp = {c: min(SINGLE_PORT, key=lambda p: mk(grid, c[0], c[1], p)) for c in allcells}
    r_sp = {c: mk(grid, c[0], c[1], "ia-single") / mk(grid, c[0], c[1], bsp[c])
            for c in allcells}
    bpub = {c: min(order.SINGLE, key=lambda p: mk(grid, c[0], c[1], p)) for c in allcells}
    r_pub = {c: mk(grid, c[0], c[1], "ia-single") / mk(grid, c[0], c[1], bpub[c])
             for c in allcells}
    out("IA:Single within 2%% of the best single-port policy (%s) in N cells"
        % ", ".join(NAMES[p] for p in SINGLE_PORT),
        "%d" % sum(v <= TOL for v in r_sp.values()))
    out("... within 2%% of the best published single-port one (%s) in N cells"
        % ", ".join(NAMES[p] for p in order.SINGLE),
        "%d (at most %.2f%% behind)" % (sum(v <= TOL for v in r_pub.values()),
                                        100 * (max(r_pub.values()) - 1)))
    cnt = {}
    for c, p in bsp.items():
        cnt.setdefault(p, []).append(c)
    out("best single-port policy, cells per policy",
        "; ".join("%s %d" % (NAMES[p], len(cnt[p])) for p in SINGLE_PORT if p in cnt))
    sp_rc = sum(mk(grid, c[0], c[1], BASELINE) < mk(grid, c[0], c[1], bsp[c])
                for c in allcells)
    out("... (RootComputes, single-port too, left out as the baseline: it would be the best "
        "in N cells)", "%d" % sp_rc)
    for c in sorted(allcells):
        if r_sp[c] > TOL:
            z, w = c
            out("IA:Single more than 2%% behind at %s" % cell(c),
                "%.2f%% behind %s; BWC %.2f%% behind %s" % (
                    behind(mk(grid, z, w, "ia-single"), mk(grid, z, w, bsp[c])), NAMES[bsp[c]],
                    behind(mk(grid, z, w, "bwc"), mk(grid, z, w, bsp[c])), NAMES[bsp[c]]))


def section_single_port_worst(st):
    """Finding 3, continued: BWC against IA:Single, the worst policy per cell,
    and the ranking with the IA policies ranking both."""
    grid, allcells, verdict, verdict_b = st.grid, st.allcells, st.verdict, st.verdict_b
    bw = {c: mk(grid, c[0], c[1], "bwc") / mk(grid, c[0], c[1], "ia-single") for c in allcells}
    worst_bw = max(bw, key=bw.get)
    rest = {c: v for c, v in bw.items() if c != worst_bw}
    out("BWC within 2% of IA:Single in N cells", "%d" % sum(v <= TOL for v in bw.values()))
    out("BWC at most X%% behind IA:Single in all but %s; there Y%%" % cell(worst_bw),
        "X = %.2f%% (%s); Y = %.1f%%" % (100 * (max(rest.values()) - 1),
                                        cell(max(rest, key=rest.get)),
                                        100 * (bw[worst_bw] - 1)))
    nonbase = [p for p in st.policies if p != BASELINE]
    worst = {c: max(nonbase, key=lambda p: mk(grid, c[0], c[1], p)) for c in allcells}
    wc = {}
    for c, p in worst.items():
        wc.setdefault(p, []).append(c)
    out("the worst non-baseline policy, cells per policy", "; ".join(
        "%s %d%s" % (NAMES[p], len(v), "" if p == "fcfs" else " " + cells(v))
        for p, v in sorted(wc.items(), key=lambda kv: -len(kv[1]))))
    out("cells where the published ranking does not hold; where BWC is not next",
        "%s; %s" % (cells(c for c, v in verdict.items() if v),
                    cells(c for c, v in verdict.items() if "BWC not next" in v)))
    out("ranking both, the ranking holds in N cells",
        "%d; IA:Single not best in %s" % (
            sum(not v for v in verdict_b.values()),
            cells(c for c, v in verdict_b.items() if "IA:Single not best" in v)))
    behind_b = st.behind_b
    for zz in sorted(st.study["send_mb"]):
        sel = {c: v for c, v in behind_b.items() if c[0] == zz}
        if sel:
            out("IA:Single ranking both / BWC at %g MB (w = %s)" % (
                zz, ", ".join("%g" % c[1] for c in sorted(sel))),
                "%s times (%s)" % (span(sel.values(), "%.3f"),
                                    ", ".join("%.3f" % sel[c] for c in sorted(sel))))
    lo = {c: v for c, v in behind_b.items() if c[0] < st.zmax}
    out("IA:Single ranking both / BWC, range below %g MB" % st.zmax,
        span(lo.values(), "%.2f") + " times")


def section_efficiency(st):
    """Each policy's efficiency against its own port model's bound."""
    grid, allcells = st.grid, st.allcells
    head("#### Efficiency against the bound")
    print("(each policy over the %d cells, against its own port model's bound, with the "
          "reruns)" % len(allcells))
    print()
    for p in st.policies:
        e = [grid[(c[0], c[1], p)]["efficiency"] for c in allcells]
        out(NAMES[p], "%s%% (lowest %s, highest %s)" % (
            span((100 * x for x in e)),
            cell(allcells[e.index(min(e))]), cell(allcells[e.index(max(e))])))
    r = st.main_grid.get((10.0, 11.0, BASELINE))
    if r:
        out("(Normalization, the main grid: RootComputes at (10 MB, 11 units))",
            pct(r["efficiency"]))


def section_ia_order(st):
    """The IA order ranking both and alone, and the cells where ranking both
    IA:Single is not best."""
    grid, both, kids, kb, tenn = st.grid, st.both, st.kids, st.kb, st.tenn
    both_o, alone_o, behind_b = st.both_o, st.alone_o, st.behind_b
    head("### The IA order")
    out("ranked both (ir_send): the order, with the tie-break (B_r (1 - IR_s Z C), slot)",
        ", ".join("%s (%.4f)" % (n, kb[n]["ir_send"]) for n in both_o))
    tied = [k["name"] for k in kids if k["ir_send"] == tenn["ir_send"] and k is not tenn]
    out("%s's place ranking both; tied with; Lab3's IR_s" % tenn["name"],
        "%d of %d in the service order (by IR_s alone joint %d with %s, %.4f); %.4f" % (
            both_o.index(tenn["name"]) + 1, len(kids),
            sorted(k["ir_send"] for k in kids).index(tenn["ir_send"]) + 1,
            ", ".join(tied) or "nobody", tenn["ir_send"], kb["Lab3"]["ir_send"]))
    out("%s's %.1f MB/s link holds the single port per task" % (tenn["name"], tenn["link_mbps"]),
        ", ".join("%g s per %g MB" % (zz / tenn["link_mbps"], zz)
                  for zz in sorted(st.study["send_mb"])))
    print()
    print("The table: the cells where ranking both, IA:Single is not best (study-order.py)")
    print()
    print("| Z | w | IA:Single, both | IA:Single, alone | BWC |")
    print("|---|---|---|---|---|")
    tab = sorted(behind_b)
    for c in tab:
        print("| %g | %g | %.1f | %.1f | %.1f |" % (c + (mk(both, c[0], c[1], "ia-single"),
                                                     mk(grid, c[0], c[1], "ia-single"),
                                                     mk(grid, c[0], c[1], "bwc"))))
    print()
    out("ranked alone (ir_send_alone), the IA order",
        ", ".join("%s (%.4f)" % (n, kb[n].get("ir_send_alone", kb[n]["ir_send"]))
                  for n in alone_o))
    bo = bwc_order(kids)
    drop = lambda o: [n for n in o if n != "Lab5"]
    out("BWC's order (link_idle_mbps); the same as the IA order but for Lab5",
        "%s; %s" % (", ".join(bo), "yes" if drop(bo) == drop(alone_o) else "NO"))
    out("%s last ranking alone" % tenn["name"], "yes" if alone_o[-1] == tenn["name"] else "NO")
    ab = {c: mk(grid, c[0], c[1], "ia-single") / mk(grid, c[0], c[1], "bwc") for c in tab}
    out("IA:Single (alone) / BWC in the table's cells",
        "%s (at most %.2f%% behind BWC; at most %.2f%% ahead, %s)" % (
            span(ab.values(), "%.4f"), 100 * (max(ab.values()) - 1),
            100 * (1 - min(ab.values())), cell(min(ab, key=ab.get))))
    out("the single-port ranking holds, ranking alone; ranking both",
        "%d; %d cells" % (sum(not v for v in st.verdict.values()),
                          sum(not v for v in st.verdict_b.values())))


def section_ia_order_effects(st):
    """The IA order, continued: what ranking both changes elsewhere."""
    grid, both, allcells, root, kids = st.grid, st.both, st.allcells, st.root, st.kids
    tenn, mv, mvb = st.tenn, st.mv, st.mvb
    others = [c for c in allcells if c not in st.behind_b]
    tex = [c for c in allcells if tenn["name"] in excluded(root, kids, *c)]
    tcost = lambda c: tenn["ir_send"] * c[0] * root["compute"] / c[1]
    out("the other %d cells; those where %s is excluded (IR_s Z C >= 1)" % (
        len(others), tenn["name"]), "%s; %s" % (cells(others), cells(tex)))
    out("... %s's IR_s Z C at %g MB for w <= 3 and at 5 MB for w = 1" % (tenn["name"], st.zmax),
        ", ".join("%s %.4f" % (cell(c), tcost(c)) for c in allcells
                  if (c[0] == st.zmax and c[1] <= 3) or c == (5.0, 1.0)))
    d = {c: max(mk(both, c[0], c[1], "ia-single") / mk(grid, c[0], c[1], "ia-single"),
                mk(grid, c[0], c[1], "ia-single") / mk(both, c[0], c[1], "ia-single")) - 1
         for c in others}
    out("... IA:Single's two orders finish within X% of each other there",
        "%.2f%% (%s)" % (100 * max(d.values()), cell(max(d, key=d.get))))
    out("IA:Multi best of the published policies or within 2% (RootComputes at (10 MB, 1)): "
        "ranking alone; both", "%d; %d cells (alone misses: %s)" % (
            sum(not v for v in mv.values()), sum(not v for v in mvb.values()),
            "; ".join("%s %s" % (cell(c), v) for c, v in sorted(mv.items()) if v) or "none"))
    gain = {c: mk(grid, c[0], c[1], "ia-multi") / mk(both, c[0], c[1], "ia-multi") - 1
            for c in allcells}
    big = {c: g for c, g in gain.items() if abs(g) > 0.01}
    out("IA:Multi ranking both is X% faster (alone / both - 1, cells beyond 1%)", "; ".join(
        "%s %.2f%%" % (cell(c), 100 * g) for c, g in sorted(big.items())))
    rest = {c: g for c, g in gain.items() if c not in big}
    out("... within X% elsewhere", "%.2f%% (%s)" % (
        100 * max(abs(g) for g in rest.values()), cell(max(rest, key=lambda c: abs(rest[c])))))
    out("Lab3's appetite, C_Lab3 / w (tasks/s) at w = 5, 7, 11",
        ", ".join("%.2f" % (st.kb["Lab3"]["compute"] / ww) for ww in (5, 7, 11)))
    sd = {c: max(mk(both, c[0], c[1], "ia-split") / mk(grid, c[0], c[1], "ia-split"),
                 mk(grid, c[0], c[1], "ia-split") / mk(both, c[0], c[1], "ia-split")) - 1
          for c in allcells}
    out("IA:Split ranking both and alone within X% of each other in every cell",
        "%.2f%% (%s)" % (100 * max(sd.values()), cell(max(sd, key=sd.get))))
    out("excluded children per cell (the same either order: the rule uses ir_send)", "; ".join(
        "%s %s" % (cell(c), ", ".join(excluded(root, kids, *c)))
        for c in allcells if excluded(root, kids, *c)))


def section_split(st):
    """IA:Split and the end-game: study-split.py's targets, met or missed."""
    allcells, tail_tasks = st.allcells, st.tail_tasks
    head("### IA:Split and the end-game")
    out("the tail: the last X% of the tasks", "%g%%, %d of %d" % (
        100 * split.TAIL_FRACTION, tail_tasks, st.study["tasks"]))
    rel = [c for c in allcells if split.cell_reliable(st.grid, *c)]
    out("all reliable once rerun", "%d of %d cells" % (len(rel), len(allcells)))
    f = st.split_figs
    miss = f.miss
    out("IA:Split <= IA:Multi x 1.01 in every cell; the ratio",
        "%s; %s" % ("met" if not miss["multi"] else "missed in " + cells(miss["multi"]),
                    span(f.rm.values(), "%.3f")))
    out("IA:Split <= the best other x 1.02 where a policy reaches 90%% of its bound (%d "
        "cells); the ratio" % len(f.applies),
        "%s; %s" % ("met" if not miss["best"] else "missed in " + cells(miss["best"]),
                    span((f.rb[c] for c in f.applies), "%.3f")))
    out("steady-state efficiency >= 97%; IA:Split steady; whole run",
        "%s; %s%%; %s%%" % ("met" if not miss["steady"] else "missed in " + cells(miss["steady"]),
                            span(100 * x for x in f.steady.values()),
                            span(100 * x for x in f.ef.values())))
    out("IA:Multi without the end-game sent a link under %g MB/s a task (split.md's column, "
        "from results.json)" % split.SLOW_LINK_MBPS,
        "%d cells: %s" % (len(f.slow_cells), cells(f.slow_cells)))
    met = [c for c in f.slow_cells if c not in miss["tail"]]
    out("tail with the end-game <= half IA:Multi's without it: met in N", "%d: %s" % (
        len(met), cells(met)))
    out("... not met in N", "%d: %s" % (len(miss["tail"]), cells(miss["tail"])))
    out("... of those, half IA:Multi's tail already shorter than the pace",
        "%d: %s" % (len(miss["faster"]), cells(miss["faster"])))
    for c in miss["tail"]:
        if c not in miss["faster"]:
            ts, _, tpm = f.info[c]
            out("... the other, %s: IA:Split's tail; the target (half IA:Multi's without the "
                "end-game); the pace" % cell(c),
                "%s s; %s s; %s s" % (num(ts), num(tpm and 0.5 * tpm, "%.2f"),
                                      num(f.pace[c])))
    out("the excess over the pace with the end-game <= half IA:Multi's without it (or none)",
        "every such cell" if not miss["excess"] else "missed in " + cells(miss["excess"]))


def section_split_largest(st):
    """IA:Split and the end-game, continued: the tails at the largest tasks."""
    zmax, tenn, f = st.zmax, st.tenn, st.split_figs
    info, pace = f.info, f.pace
    sel = [c for c in st.allcells if c[0] == zmax and c[1] >= 5]
    out("at %g MB for w >= 5 (%s): IA:Multi's tail without the end-game" % (
        zmax, ", ".join("%g" % c[1] for c in sel)),
        "%s s (%s)" % (span(info[c][2] for c in sel),
                       ", ".join(num(info[c][2]) for c in sel)))
    out("... times the pace", "%s (%s)" % (
        span((ratio_of(info[c][2], pace[c]) for c in sel), "%.2f"),
        ", ".join(num(ratio_of(info[c][2], pace[c]), "%.2f") for c in sel)))
    out("... a %g MB task on %s takes" % (zmax, tenn["name"]), "%g s" % (zmax / tenn["link_mbps"]))
    out("... with the end-game, IA:Multi's tail; at or under the pace", "%s s (%s); %s" % (
        span(info[c][1] for c in sel), ", ".join("%s/%s" % (num(info[c][1]), num(pace[c]))
                                                 for c in sel),
        "yes" if all(None not in (info[c][1], pace[c]) and info[c][1] <= pace[c]
                     for c in sel) else "NO"))
    out("... (IA:Split's tail there, for comparison)", "%s s" % span(info[c][0] for c in sel))
    out("the split's steady state, every cell", "%s%% of the bound" %
        span(100 * x for x in f.steady.values()))


def section_caveats(st):
    """The wall times the caveats quote."""
    wall = st.wall
    head("### Caveats")
    out("the main grid under 30 minutes", "%.1f min" % (wall["wall_s"] / 60))
    tot = sum(wall.get(k, 0) for k in ("wall_s", "order_wall_s", "split_wall_s"))
    out("the whole of make study with the reruns (wall.json: wall_s + order_wall_s + "
        "split_wall_s)", "%d s = %.0f min" % (tot, tot / 60))


def section_consistency(st):
    """Whether order.md's counts and split.md's makespans agree with these data."""
    grid, allcells, verdict, verdict_b = st.grid, st.allcells, st.verdict, st.verdict_b
    head("## Consistency with order.md and split.md")
    text = open(st.path("order.md")).read()
    want = ("the single-port ranking holds in %d of %d cells ranking alone, %d ranking both"
            % (sum(not v for v in verdict.values()), len(allcells),
               sum(not v for v in verdict_b.values())))
    want2 = ("the multi-port outcome holds in %d of %d cells ranking alone, %d ranking both"
             % (sum(not v for v in st.mv.values()), len(allcells),
                sum(not v for v in st.mvb.values())))
    out("order.md's counts", "agree" if want in text and want2 in text
        else "DIFFER (these data: %s; %s)" % (want, want2))
    bad = []
    for row in md_table(st.path("split.md")):
        try:
            c = (float(row["Z MB"]), float(row["w"]))
            got = (float(row["IA:Split s"]), float(row["IA:Multi s"]))
        except (KeyError, ValueError):
            continue
        if c not in allcells:
            bad.append(c)
            continue
        exp = [round(mk(grid, c[0], c[1], p), 1) for p in ("ia-split", "ia-multi")]
        if abs(got[0] - exp[0]) > 0.051 or abs(got[1] - exp[1]) > 0.051:
            bad.append(c)
    out("split.md's IA:Split and IA:Multi makespans", "agree in every cell" if not bad
        else "DIFFER in " + cells(bad))


SECTIONS = (section_title, section_cost, section_size, section_fidelity, section_multi_port,
            section_one_unit, section_single_port, section_single_port_worst,
            section_efficiency, section_ia_order, section_ia_order_effects, section_split,
            section_split_largest, section_caveats, section_consistency)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Reads DIR's " + ", ".join(NEEDED) + " and rerun-*-runs.csv.")
    ap.add_argument("dir", nargs="?", default="docs/study",
                    help="the study's directory (default docs/study)")
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        print("study-figures: %s: no such directory" % a.dir, file=sys.stderr)
        return 2
    for name in NEEDED:
        if not os.path.isfile(os.path.join(a.dir, name)):
            print("study-figures: %s: no such file (DIR must be a reference study's "
                  "directory, as docs/study)" % os.path.join(a.dir, name), file=sys.stderr)
            return 2
    st = Study(a.dir)
    gaps = st.gaps()
    if gaps:
        print("study-figures: " + "; ".join(gaps), file=sys.stderr)
        return 1
    for section in SECTIONS:
        section(st)
    return 0


if __name__ == "__main__":
    sys.exit(main())
