"""studyfig — what scripts/study-figures.py's sections stand on: the study's
files loaded (Study), the reruns put in place of the main grid's cells, the
IA:Split targets, and the small formatting helpers. See study-figures.py.
"""
import functools
import glob
import importlib.util
import json
import math
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def _module(name, filename):
    """Import scripts/FILENAME (its name has a hyphen), leaving no __pycache__."""
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, filename))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


order = _module("study_order", "study-order.py")
split = _module("study_split", "study-split.py")

FIDELITY_MIN = order.FIDELITY_MIN          # the same 0.90 in both scripts
assert split.FIDELITY_MIN == FIDELITY_MIN
TOL = order.TOL                            # 2%: one run per cell
NAMES = {"fcfs": "FCFS", "comprate": "CompRate", "bwc": "BWC", "ia-single": "IA:Single",
         "ia-single-opt": "IA:Single-opt", "ia-multi": "IA:Multi", "ia-split": "IA:Split",
         "root-computes": "RootComputes"}
IA = ("ia-single", "ia-single-opt", "ia-multi", "ia-split")
SINGLE_PORT = ("fcfs", "comprate", "bwc", "ia-single", "ia-single-opt")  # but the baseline
BASELINE = "root-computes"
NEEDED = ("runs.csv", "study.json", "wall.json", "order-both-runs.csv",
          "no-endgame-runs.csv", "split.md", "order.md")
FLOATS = ("throughput", "bound", "efficiency", "wall_s", "steady_efficiency", "tail_s")


def load(path):
    """study-order.py's load (complete runs by (z, w, policy)), with the other
    figures as numbers (None when empty), as study-split.py's load has them."""
    runs = order.load(path)
    for row in runs.values():
        for k in FLOATS:
            row[k] = float(row[k]) if row.get(k) not in (None, "") else None
        row["efficiency_reliable"] = row.get("efficiency_reliable") == "true"
    return runs


def reruns(study, both):
    """{(z, w): path} of DIR's rerun-Z-W-runs.csv, or of rerun-both-Z-W-runs.csv."""
    pat = re.compile(r"^rerun-%s([0-9.]+)-([0-9.]+)-runs\.csv$" % ("both-" if both else ""))
    found = {}
    for path in sorted(glob.glob(os.path.join(study, "rerun-*-runs.csv"))):
        m = pat.match(os.path.basename(path))
        if m:
            found[(float(m.group(1)), float(m.group(2)))] = path
    return found


def substitute(main, paths):
    """study-split.py's (and study-order.py's) rule: a rerun replaces every run
    of a cell the main grid ran below fidelity 0.90. Returns the grid and the
    cells replaced."""
    grid, done = dict(main), set()
    for path in paths:
        again = load(path)
        for z, w in sorted({k[:2] for k in again}):
            if not split.cell_reliable(grid, z, w):
                for key in [k for k in grid if k[:2] == (z, w)]:
                    del grid[key]
                grid.update({k: v for k, v in again.items() if k[:2] == (z, w)})
                done.add((z, w))
    return grid, done


def md_table(path):
    """The first markdown table of a file, as a list of {header: cell}."""
    rows, head = [], None
    for line in open(path):
        line = line.strip()
        if not line.startswith("|"):
            if head:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if head is None:
            head = cells
        elif not set("".join(cells)) <= set("-: "):
            rows.append(dict(zip(head, cells)))
    return rows


# --- formatting -----------------------------------------------------------

def cell(zw):
    return "(%g MB, %g)" % zw


def cells(zws):
    return ", ".join(cell(c) for c in sorted(zws)) or "none"


def pct(x):
    return "%.1f%%" % (100 * x)


def behind(a, b):
    """How much longer a is than b, in percent."""
    return 100 * (a / b - 1)


def span(values, fmt="%.1f"):
    """min–max of the values given (None left out), or "-"."""
    values = [v for v in values if v is not None]
    return (fmt + "–" + fmt) % (min(values), max(values)) if values else "-"


def num(x, fmt="%.1f"):
    """x formatted, or "-" when it is None (a figure the run did not give)."""
    return "-" if x is None else fmt % x


def out(label, value):
    print("- %s: %s" % (label, value))


def head(title):
    print()
    print(title)
    print()


# --- the platform ---------------------------------------------------------

def children(config):
    root = [n for n in config["tree"] if "parent" not in n][0]
    kids = [n for n in config["tree"] if n.get("parent") == root["name"]]
    return root, kids


def excluded(root, kids, z, w):
    """The never-use rule (docs/policies.md): IR_s Z C^n >= 1, with ir_send."""
    c = root["compute"] / w
    return [k["name"] for k in kids if k["ir_send"] * z * c >= 1]


def ia_order(root, kids, key, z=2.0, w=5.0):
    """The IA order: lowest IR_s (key), ties the larger B_r (1 - IR_s Z C^n)
    (ir_send), then the slot (docs/policies.md, "Ties")."""
    c = root["compute"] / w
    slot = {k["name"]: i for i, k in enumerate(kids)}
    prio = lambda k: k["link_mbps"] / z * (1 - k["ir_send"] * z * c)
    return [k["name"] for k in sorted(kids, key=lambda k: (key(k), -prio(k), slot[k["name"]]))]


def bwc_order(kids):
    slot = {k["name"]: i for i, k in enumerate(kids)}
    return [k["name"] for k in sorted(kids, key=lambda k: (-k["link_idle_mbps"],
                                                           -k["link_mbps"], slot[k["name"]]))]


# --- the loaded study -----------------------------------------------------

def mk(runs, z, w, p):
    """The makespan of the run of policy p in cell (z, w) of runs."""
    return runs[(z, w, p)]["makespan_s"]


def low_cells(runs):
    """The cells of runs with a run below fidelity 0.90."""
    return sorted({k[:2] for k, r in runs.items() if r["fidelity"] < FIDELITY_MIN})


class Study:
    """What main loads from DIR, and the figures more than one section uses.

    study and wall are study.json and wall.json; root and kids the
    platform's root and its children; scale the time scale. main_grid is
    runs.csv as it is, grid the same with the reruns (rerun_paths) in place
    of the cells replaced; both_main is order-both-runs.csv as it is, both
    the same with its reruns (both_paths); plain is no-endgame-runs.csv.
    allcells is every (z, w) of the study, policies runs.csv's policies in
    NAMES' order. The properties below are computed when a section first
    asks for them."""

    def __init__(self, directory):
        self.dir = directory
        self.study = json.load(open(self.path("study.json")))
        self.wall = json.load(open(self.path("wall.json")))
        self.root, self.kids = children(self.study["config"])
        self.scale = self.study["time_scale"]
        self.main_grid = load(self.path("runs.csv"))
        self.rerun_paths = reruns(directory, both=False)
        self.both_paths = reruns(directory, both=True)
        self.grid, self.replaced = substitute(
            self.main_grid, [self.rerun_paths[c] for c in sorted(self.rerun_paths)])
        self.both_main = load(self.path("order-both-runs.csv"))
        self.both = dict(self.both_main)
        for c in sorted(self.both_paths):   # study-order.py: a rerun ranking both replaces
            self.both.update(load(self.both_paths[c]))
        self.plain = load(self.path("no-endgame-runs.csv"))
        self.allcells = sorted((float(z), float(w)) for z in self.study["send_mb"]
                               for w in self.study["units"])
        self.policies = sorted({k[2] for k in self.grid}, key=lambda p: list(NAMES).index(p)
                               if p in NAMES else 99)

    def path(self, name):
        return os.path.join(self.dir, name)

    def gaps(self):
        """A message for each of grid, both and plain that lacks a complete
        run of a cell and policy it should have, naming them."""
        gaps = []
        for name, runs, pols in (("runs.csv with the reruns", self.grid,
                                  self.study["policies"]),
                                 ("order-both-runs.csv with the reruns", self.both,
                                  ("ia-single", "ia-multi", "ia-split")),
                                 ("no-endgame-runs.csv", self.plain, ("ia-multi", "ia-split"))):
            lack = ["%s %s" % (cell(c), p) for c in self.allcells for p in pols
                    if (c[0], c[1], p) not in runs]
            if lack:
                gaps.append("%s lacks a complete run of %s" % (name, ", ".join(lack)))
        return gaps

    def mb(self, c, p):
        """The makespan of policy p in cell c: an IA policy's ranking both
        (both), any other's from grid."""
        return mk(self.both, c[0], c[1], p) if p in IA else mk(self.grid, c[0], c[1], p)

    @property
    def zmax(self):
        return max(self.study["send_mb"])

    @functools.cached_property
    def best(self):
        """{cell: the policy with the shortest makespan} (grid)."""
        return {c: min(self.policies, key=lambda p: mk(self.grid, c[0], c[1], p))
                for c in self.allcells}

    @functools.cached_property
    def kb(self):
        return {k["name"]: k for k in self.kids}

    @functools.cached_property
    def alone_o(self):
        """The IA order ranking alone (ir_send_alone)."""
        return ia_order(self.root, self.kids, lambda k: k.get("ir_send_alone", k["ir_send"]))

    @functools.cached_property
    def both_o(self):
        """The IA order ranking both (ir_send)."""
        return ia_order(self.root, self.kids, lambda k: k["ir_send"])

    @functools.cached_property
    def tenn(self):
        """The child with the slowest link."""
        return min(self.kids, key=lambda k: k["link_mbps"])

    @functools.cached_property
    def verdict(self):
        """study-order.py's single-port verdict per cell, ranking alone."""
        return {c: order.single_verdict({p: mk(self.grid, c[0], c[1], p) for p in order.SINGLE})
                for c in self.allcells}

    @functools.cached_property
    def verdict_b(self):
        """study-order.py's single-port verdict per cell, ranking both."""
        return {c: order.single_verdict({p: self.mb(c, p) for p in order.SINGLE})
                for c in self.allcells}

    @functools.cached_property
    def behind_b(self):
        """{cell: IA:Single ranking both / BWC} where IA:Single ranking both is not best."""
        return {c: mk(self.both, c[0], c[1], "ia-single") / mk(self.grid, c[0], c[1], "bwc")
                for c, v in self.verdict_b.items() if "IA:Single not best" in v}

    @functools.cached_property
    def mv(self):
        """study-order.py's multi-port verdict per cell, ranking alone."""
        return {c: order.multi_verdict({p: mk(self.grid, c[0], c[1], p)
                                        for p in order.PUBLISHED}, *c)
                for c in self.allcells}

    @functools.cached_property
    def mvb(self):
        """study-order.py's multi-port verdict per cell, ranking both."""
        return {c: order.multi_verdict({p: self.mb(c, p) for p in order.PUBLISHED}, *c)
                for c in self.allcells}

    @functools.cached_property
    def tail_tasks(self):
        """The number of tasks in the tail (study-split.py's TAIL_FRACTION)."""
        return math.ceil(self.study["tasks"] * split.TAIL_FRACTION)

    @functools.cached_property
    def split_figs(self):
        """split_targets' figures."""
        return split_targets(self)


def slow_links(path):
    """{cell: split.md's "slow link in use", True, False or None}."""
    slow_md = {}
    for row in md_table(path):
        try:
            slow_md[(float(row["Z MB"]), float(row["w"]))] = {
                "yes": True, "no": False}.get(row.get("slow link in use"))
        except (KeyError, ValueError):
            pass
    return slow_md


def split_targets(st):
    """study-split.py's per-cell figures and targets, on the same data (grid,
    plain, split.md's column): IA:Split / IA:Multi (rm) and / the best other
    policy (rb), IA:Split's steady-state and whole-run efficiency, the cells
    where a policy reaches 90% of its bound (applies) and where IA:Multi
    without the end-game used a slow link (slow_cells), the tail's pace,
    the tails (IA:Split, IA:Multi, IA:Multi without the end-game) and the
    cells each target misses."""
    grid, plain, tail_tasks = st.grid, st.plain, st.tail_tasks
    slow_md = slow_links(st.path("split.md"))
    rm, rb, steady, ef, miss = {}, {}, {}, {}, {k: [] for k in
                                                ("multi", "best", "steady", "tail", "faster",
                                                 "excess")}
    applies, slow_cells, pace, info = [], [], {}, {}
    for c in st.allcells:
        z, w = c
        s, m = grid.get((z, w, "ia-split")), grid.get((z, w, "ia-multi"))
        pm = plain.get((z, w, "ia-multi"))
        if not s or not m:
            continue
        othr = [r for (a_, b_, p), r in grid.items() if (a_, b_) == c and p != "ia-split"]
        bo_ = min(othr, key=lambda r: r["makespan_s"])
        if any(r["efficiency"] >= 0.90 for (a_, b_, _), r in grid.items() if (a_, b_) == c):
            applies.append(c)
        rm[c] = s["makespan_s"] / m["makespan_s"]
        rb[c] = s["makespan_s"] / bo_["makespan_s"]
        steady[c], ef[c] = s["steady_efficiency"], s["efficiency"]
        if rm[c] > 1.01:
            miss["multi"].append(c)
        if c in applies and rb[c] > 1.02:
            miss["best"].append(c)
        if split.cell_reliable(grid, z, w) and (steady[c] or 0) < 0.97:
            miss["steady"].append(c)
        pace[c] = tail_tasks / s["bound"] if s["bound"] else None
        info[c] = (s["tail_s"], m["tail_s"], pm["tail_s"] if pm else None)
        if slow_md.get(c) and pm:
            slow_cells.append(c)
            if s["tail_s"] is None or pm["tail_s"] is None:
                miss["tail"].append(c)    # a tail not measured is no tail met
                miss["excess"].append(c)
                continue
            if s["tail_s"] > 0.5 * pm["tail_s"]:
                miss["tail"].append(c)
                if pace[c] and 0.5 * pm["tail_s"] < pace[c]:
                    miss["faster"].append(c)
            if pace[c] and s["tail_s"] - pace[c] > max(0.0, 0.5 * (pm["tail_s"] - pace[c])):
                miss["excess"].append(c)
    return types.SimpleNamespace(rm=rm, rb=rb, steady=steady, ef=ef, miss=miss,
                                 applies=applies, slow_cells=slow_cells, pace=pace, info=info)


# --- the report: one function per section, in the README's order -----------
