#!/usr/bin/env python3
"""load-validate — the background load's validation, run and tabulated.

    python3 scripts/load-validate.py [--quick] [--out DIR] [--real FILE]
                                     [--no-write] [--build DIR]

Runs the three checks of docs/load.md ("Validation") and regenerates
their tables: the region between `<!-- load-validate: begin -->` and
`<!-- load-validate: end -->` in docs/load.md, and every raw figure with
the command behind it in docs/load/validation.json.

  jobs        emulated job stream on a one-node config (solo, C = 5,
              tasks of 20 units), U in {0.25, 0.5, 0.75} x demand {exp
              mean 0.2 s, h2 cv 3 mean 0.2 s}, each run about 1,100
              platform seconds at time scale 50; the h2 cells again over
              5,500 platform seconds at time scale 100 (same seed: the
              same stream, five times longer), since a cv of 3 converges
              slowly. Per run: the realized utilization against U (within
              0.03) and C_eff / C against 1 - U (within 5%), C_eff both
              the node's windowed estimate (compute_measured) and the
              whole run's (units computed / platform seconds computing).
              A run whose fidelity falls below 0.95 is run again at half
              its time scale.
  real        scripts/load-real.sh (real mode, CPU 0): 3 CPU burners make
              a synthetic task 4x as long (within 15%); two contenders
              communicating 25% and 76% of the time slow a burst of 1,000
              800-byte messages as predicted (within 15%).
  fork        configs/fork7.json, its policy (ia-multi), Lab3 under a job
              stream of U = 0.5 (exp, 0.2 s, seed 7), 3 runs: efficiency
              against `treefarm bound --loaded` at least 0.90.

Options:
  --quick      a smoke version (short runs, one fork run, RUNS=1 real
               probes); prints the tables, writes nothing under docs/
  --out DIR    keep the raw runs in DIR (default: a temporary directory,
               removed at the end)
  --real FILE  read load-real.sh's JSON lines from FILE instead of running
               it
  --no-write   print the tables but leave docs/ alone
  --build DIR  the build directory (default: build, or $BUILD)

Progress goes to stderr, the tables to stdout. Exit 0 when every step ran
(a target not met is a figure, not an error), 1 when a run failed, 2 on
bad usage.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

from doclib import rewrite_region, write_json

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DOC = os.path.join(ROOT, "docs", "load.md")
RAW = os.path.join(ROOT, "docs", "load", "validation.json")
BEGIN, END = "<!-- load-validate: begin -->", "<!-- load-validate: end -->"
COMMAND = "python3 scripts/load-validate.py"

# The job stream's cells: solo at C units/s, tasks of UNITS units.
C, UNITS = 5.0, 20.0
UTILS = (0.25, 0.5, 0.75)
DEMANDS = (("exp", {"dist": "exp", "mean_s": 0.2}),
           ("h2 cv 3", {"dist": "h2", "mean_s": 0.2, "cv": 3}))
# Every cell's first run: platform seconds, time scale; a second, longer
# run (long_seconds) at LONG_SCALE where the first is too short.
SHORT_S, SHORT_SCALE, LONG_SCALE = 1100, 50, 200
FIDELITY_MIN = 0.95
# The measured rate's window in wall seconds: NODE_RATE_WINDOW intervals
# of the default sample_ms (docs/measure.md, "Effective compute rate").
WINDOW_WALL_S = 25.6
U_TOL, RATE_TOL = 0.03, 0.05
FORK_U, FORK_TARGET = 0.5, 0.90
REAL_TOL = 0.15


def log(msg):
    print("load-validate: " + msg, file=sys.stderr, flush=True)


def tf(build):
    return os.path.join(build, "bin", "treefarm")


def run_cmd(argv, out_path=None):
    """Run argv from ROOT; its stdout to out_path or returned; its stderr
    shown when it fails. Returns (exit status, stdout text)."""
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if out_path:
        with open(out_path, "w") as f:
            f.write(p.stdout)
    if p.returncode != 0:
        log("%s exited %d:\n%s" % (" ".join(argv), p.returncode, p.stderr[-2000:]))
    return p.returncode, p.stdout


def rel(path, base):
    return os.path.relpath(path, base)


# ---------------------------------------------------------------- jobs

def solo_config(count, scale):
    return {"name": "solo",
            "tasks": {"count": count, "input_mb": 0, "units": UNITS},
            "policy": "fcfs",
            "platform": {"mode": "emulated", "time_scale": scale},
            "tree": [{"name": "solo", "compute": C}]}


def job_run(a, work, u, label, demand, seed, seconds, scale):
    """One cell: solo under a stream of utilization u for about `seconds`
    platform seconds. Returns the cell's figures, or None on failure."""
    count = max(1, round(seconds * C * (1 - u) / UNITS))
    tag = "jobs-u%s-%s-%ds" % (u, demand["dist"], seconds)
    load = {"solo": {"jobs": {"utilization": u, "demand": demand}, "seed": seed}}
    while True:
        cfg = os.path.join(work, tag + "-x%g.json" % scale)
        lf = os.path.join(work, tag + "-load.json")
        out = os.path.join(work, tag + "-x%g" % scale)
        write_json(cfg, solo_config(count, scale))
        write_json(lf, load)
        argv = [tf(a.build), "run", cfg, "--load", lf, "--out", out, "--quiet"]
        log("jobs: U %s, %s, %d tasks (%d platform s) at time scale %g"
            % (u, label, count, seconds, scale))
        rc, _ = run_cmd(argv)
        if rc != 0:
            return None
        r = json.load(open(os.path.join(out, "results.json")))
        fid = r["fidelity"]["min"]
        if fid >= FIDELITY_MIN or scale <= 5:
            break
        log("jobs: fidelity %.3f below %.2f: again at time scale %g"
            % (fid, FIDELITY_MIN, scale / 2))
        scale /= 2
    n = r["nodes"][0]
    whole = n["computed"] * UNITS / (n["compute_seconds"] * scale)
    util = n["load"]["utilization"]
    win = n["compute_measured"] / n["compute_configured"]
    cell = {"utilization": u, "demand": label, "demand_json": demand, "seed": seed,
            "planned_s": seconds, "tasks": count, "units": UNITS, "compute": C, "time_scale": scale,
            "makespan_s": r["makespan_s"], "wall_s": r["wall_s"], "fidelity": fid,
            "status": r["status"], "realized_utilization": util,
            "compute_measured": n["compute_measured"],
            "compute_stderr": n["compute_stderr"],
            "compute_predicted": n["compute_predicted"],
            "computed": n["computed"], "compute_seconds_wall": n["compute_seconds"],
            "ceff_window": win, "ceff_window_se": n["compute_stderr"] / C,
            "u_spread": spread(u, demand, r["makespan_s"]),
            "window_platform_s": min(r["makespan_s"], WINDOW_WALL_S * scale),
            "ceff_whole": whole / C, "expected": 1 - u,
            "command": ["treefarm", "run", rel(cfg, work), "--load", rel(lf, work),
                        "--out", rel(out, work), "--quiet"],
            "config": solo_config(count, scale), "load": load}
    cell["u_error"] = abs(util - u)
    cell["window_error"] = abs(win - (1 - u)) / (1 - u)
    cell["whole_error"] = abs(cell["ceff_whole"] - (1 - u)) / (1 - u)
    cell["exactness"] = abs(cell["ceff_whole"] - (1 - util)) / (1 - util)
    cell["met"] = (cell["u_error"] <= U_TOL and cell["whole_error"] <= RATE_TOL
                   and fid >= FIDELITY_MIN)
    return cell


def spread(u, demand, seconds):
    """Standard deviation of a stream's realized utilization over `seconds`:
    the work arriving in them is a compound Poisson sum, variance
    lambda T E[D^2], lambda = U / mean, E[D^2] = mean^2 (1 + cv^2)."""
    m, cv = demand["mean_s"], demand.get("cv", 1.0)
    return math.sqrt(u * m * (1 + cv * cv) / seconds)


def tolerance(u):
    """How far the realized U may be from U for both targets to hold: the
    utilization's own, and the rate's 5% of 1 - U (C_eff / C is 1 minus
    the realized U: the CPU is never idle)."""
    return min(U_TOL, RATE_TOL * (1 - u))


def long_seconds(u, demand):
    """A run long enough that the targets are two standard deviations of
    the realized U wide, in whole hundreds of platform seconds."""
    m, cv = demand["mean_s"], demand.get("cv", 1.0)
    t = 4 * u * m * (1 + cv * cv) / tolerance(u) ** 2
    return int(math.ceil(t / 100) * 100)


def jobs_part(a, work):
    """Every cell at SHORT_S; then, again on the same stream (same seed),
    the cells for which SHORT_S is under two standard deviations."""
    short = 150 if a.quick else SHORT_S
    cells, seed, again = [], 0, []
    for label, demand in DEMANDS:
        for u in UTILS:
            seed += 1
            cells.append(job_run(a, work, u, label, demand, seed, short, SHORT_SCALE))
            if long_seconds(u, demand) > short:
                again.append((u, label, demand, seed))
    if not a.quick:
        for u, label, demand, seed in again:
            t = max(long_seconds(u, demand), 2 * short)
            cells.append(job_run(a, work, u, label, demand, seed, t, LONG_SCALE))
    return cells


# ---------------------------------------------------------------- real

def real_part(a, work):
    if a.real:
        log("real: reading %s" % a.real)
        text = open(a.real).read()
        cmd = "bash scripts/load-real.sh"
    else:
        env = {} if not a.quick else {"RUNS": "1", "UNITS": "20", "BURSTS": "20"}
        cmd = " ".join(["%s=%s" % kv for kv in env.items()] + ["bash scripts/load-real.sh"])
        log("real: %s (about half a minute)" % cmd)
        p = subprocess.run(["bash", "scripts/load-real.sh"], cwd=ROOT, text=True,
                           capture_output=True, env=dict(os.environ, BUILD=a.build, **env))
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            log("real: load-real.sh exited %d" % p.returncode)
            return None
        text = p.stdout
        with open(os.path.join(work, "load-real.jsonl"), "w") as f:
            f.write(text)
    figs = {}
    for line in text.splitlines():
        if line.strip():
            d = json.loads(line)
            figs[d["figure"]] = d
    missing = {"cpu_burners", "delay_comm", "contenders"} - set(figs)
    if missing:
        log("real: no figure %s in load-real.sh's output" % ", ".join(sorted(missing)))
        return None
    figs["command"] = cmd
    return figs


# ---------------------------------------------------------------- fork

def bound_of(a, work, loaded):
    lf = os.path.join(work, "fork-load.json")
    argv = [tf(a.build), "bound", "configs/fork7.json", "--json"]
    if loaded:
        argv += ["--load", lf, "--loaded"]
    rc, out = run_cmd(argv)
    if rc != 0:
        return None
    b = json.loads(out)
    lab3 = [n for n in b["nodes"] if n["name"] == "Lab3"][0]
    shown = ["treefarm", "bound", "configs/fork7.json", "--json"]
    if loaded:
        shown += ["--load", "fork-load.json", "--loaded"]
    return {"bound": b["bound"], "model": b["model"], "lab3_compute_tasks_per_s":
            lab3["compute"], "root_limit": b["nodes"][0]["limit"],
            "through": {n["name"]: n["t"] for n in b["nodes"]},
            "roles": {n["name"]: n["role"] for n in b["nodes"]}, "command": shown}


def fork_part(a, work):
    load = {"Lab3": {"jobs": {"utilization": FORK_U,
                              "demand": {"dist": "exp", "mean_s": 0.2}}, "seed": 7}}
    lf = os.path.join(work, "fork-load.json")
    write_json(lf, load)
    config = "configs/fork7.json"
    if a.quick:
        c = json.load(open(os.path.join(ROOT, config)))
        c["tasks"]["count"] = 200
        config = os.path.join(work, "fork7-quick.json")
        write_json(config, c)
    res = {"load": load, "loaded": bound_of(a, work, True),
           "dedicated": bound_of(a, work, False), "runs": []}
    if not res["loaded"] or not res["dedicated"]:
        return None
    for i in range(1 if a.quick else 3):
        out = os.path.join(work, "fork-%d" % (i + 1))
        log("fork: run %d of %d" % (i + 1, 1 if a.quick else 3))
        rc, _ = run_cmd([tf(a.build), "run", config, "--load", lf, "--out", out,
                         "--quiet"])
        if rc != 0:
            return None
        r = json.load(open(os.path.join(out, "results.json")))
        n = [n for n in r["nodes"] if n["name"] == "Lab3"][0]
        res["runs"].append({
            "command": ["treefarm", "run", "configs/fork7.json" if not a.quick
                        else "fork7-quick.json", "--load", "fork-load.json",
                        "--out", rel(out, work), "--quiet"],
            "status": r["status"], "tasks": r["tasks"], "policy": r["policy"],
            "makespan_s": r["makespan_s"], "throughput": r["throughput"],
            "bound": r["bound"]["tasks_per_s"], "bound_model": r["bound"]["model"],
            "efficiency": r["efficiency"],
            "steady_efficiency": (r["steady"] or {}).get("efficiency"),
            "fidelity": r["fidelity"]["min"],
            "lab3": {k: n[k] for k in ("computed", "compute_configured",
                                       "compute_predicted", "compute_measured",
                                       "compute_stderr", "speed_mean", "load")},
            "met": r["efficiency"] >= FORK_TARGET})
    return res


# ---------------------------------------------------------------- tables

def yes(ok):
    return "yes" if ok else "**no**"


def facts_line(facts):
    return ("Regenerated by `%s`; machine: %d CPUs, load average %s at the start."
            % (COMMAND, facts["nproc"], " ".join(facts["loadavg"])))


def jobs_table(cells, facts):
    out = [facts_line(facts), "",
           "| U | demand | platform s | time scale | fidelity | realized U (sd) | "
           "C_eff/C window (± se) | C_eff/C whole run | 1 − U | error window | "
           "error whole | whole vs 1 − realized U | met |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        if c is None:
            out.append("| (a run failed: see the script's output) |" + " |" * 12)
            continue
        out.append("| %.2f | %s | %.0f | %g | %.3f | %.3f (%.3f) | %.3f ± %.3f | %.3f "
                   "| %.2f | %.1f%% | %.1f%% | %.2f%% | %s |" % (
                       c["utilization"], c["demand"], c["makespan_s"], c["time_scale"],
                       c["fidelity"], c["realized_utilization"], c["u_spread"],
                       c["ceff_window"], c["ceff_window_se"], c["ceff_whole"],
                       c["expected"], 100 * c["window_error"], 100 * c["whole_error"],
                       100 * c["exactness"], yes(c["met"])))
    out += ["", "Targets: realized U within %.2f of U, and C_eff/C over the whole run "
            "(units computed over platform seconds computing) within %d%% of 1 − U; "
            "fidelity at least %.2f. The node's windowed estimate is shown beside it: "
            "its window is the last %.1f s of wall time, the whole of a run at time "
            "scale %d but only the last %d platform seconds at %d. sd is the standard "
            "deviation of a stream's realized U over the run's length, "
            "sqrt(U × mean × (1 + cv²) / T)."
            % (U_TOL, round(100 * RATE_TOL), FIDELITY_MIN, WINDOW_WALL_S, SHORT_SCALE,
               round(WINDOW_WALL_S * LONG_SCALE), LONG_SCALE), "", jobs_verdict(cells)]
    return out


def jobs_verdict(cells):
    ok = [c for c in cells if c]
    if not ok:
        return "No run completed."
    final = {}
    for c in ok:
        final[(c["utilization"], c["demand"])] = c
    worst = max(c["exactness"] for c in ok)
    s = ("Every row's C_eff/C over the whole run is 1 minus its realized U within "
         "%.2f%%: the CPU is never idle, so the foreground keeps exactly what the "
         "background leaves. What misses a target is the stream's own variation over "
         "a finite run (sd), which 5%% of 1 − U makes tight at U = 0.75 (U must be "
         "within 0.0125) and a cv of 3 makes five times as large as exp's in "
         "variance. " % (100 * worst))
    longer = [c for c in ok if c["planned_s"] > min(x["planned_s"] for x in ok)]
    if longer:
        s += ("A cell whose first run is too short for its tolerance to be two sd "
              "wide is run again on the same stream (same seed), for 4 × U × mean × "
              "(1 + cv²) / tolerance² platform seconds (at least twice the first); "
              "its last row is its verdict: ")
    else:
        s += "Every cell has one run: "
    met = [c for c in final.values() if c["met"]]
    s += "%d of %d cells meet both targets." % (len(met), len(final))
    return s


def real_table(figs, facts):
    if figs is None:
        return ["(load-real.sh failed: see the script's output)"]
    b, d, m = figs["cpu_burners"], figs["delay_comm"], figs["contenders"]
    return [facts_line(facts) + " Real processes on CPU 0: `%s`, medians of %d runs."
            % (figs["command"], b["runs"]), "",
            "| figure | alone s | loaded s | measured | expected | error | target | met |",
            "|---|---|---|---|---|---|---|---|",
            "| 3 CPU burners: synthetic task's time ratio | %.4f | %.4f | %.3f | %g | "
            "%.1f%% | 15%% | %s |" % (b["alone_s"], b["loaded_s"], b["ratio"],
                                      b["expected"], 100 * b["error"], yes(b["met"])),
            "| contenders communicating 25%% and 76%%, 800 B: burst slowdown | %.6f | "
            "%.6f | %.3f | %.3f (predicted) | %.1f%% | 15%% | %s |" % (
                d["burst_s"], m["burst_s"], m["measured"], m["predicted"],
                100 * m["error"], yes(m["met"])),
            "",
            "delay_comm calibrated in the same runs (a burst of 1,000 800-byte messages "
            "with 1 and 2 contenders always sending): d1 = %.3f, d2 = %.3f. "
            "Figueira & Berman report errors of 11%% to 14%% on average; ours is %.1f%%."
            % (d["d1"], d["d2"], 100 * m["error"])]


def bound_shift(lb, db):
    """Why the two bounds are close or far: the root's limit and the
    children whose throughput in the bound moves."""
    moved = ["%s %.3f (%s) instead of %.3f (%s)" % (
        name, lb["through"][name], lb["roles"][name], t, db["roles"][name])
        for name, t in db["through"].items()
        if name in lb["through"] and db["roles"][name] != "root"
        and abs(lb["through"][name] - t) > 1e-3]
    s = ("They differ by %.2f%%; the root's limit is %s."
         % (100 * abs(db["bound"] - lb["bound"]) / db["bound"], lb["root_limit"] or "none"))
    if moved:
        s += " Tasks/s through the children that move, loaded: " + "; ".join(moved) + "."
    return s


def fork_table(res, facts):
    if res is None:
        return ["(a fork7 run failed: see the script's output)"]
    lb, db = res["loaded"], res["dedicated"]
    out = [facts_line(facts) + " `treefarm run configs/fork7.json --load LOAD` "
           "(policy ia-multi, 1000 tasks), LOAD putting a job stream of U = 0.5 "
           "(exp, 0.2 s, seed 7) on Lab3; bounds by `treefarm bound configs/fork7.json "
           "--json`, with `--load LOAD --loaded` for the loaded one.", "",
           "Bound (%s-port model): %.4f tasks/s loaded, %.4f dedicated; Lab3's rate in "
           "it %.3f tasks/s loaded, %.3f dedicated." % (
               lb["model"], lb["bound"], db["bound"], lb["lab3_compute_tasks_per_s"],
               db["lab3_compute_tasks_per_s"]) + " " + bound_shift(lb, db), "",
           "| run | fidelity | throughput | bound (run's) | efficiency | steady | "
           "Lab3 C configured | predicted | measured (± se) | interference factor | "
           "Lab3 realized U | met (≥ %.2f) |" % FORK_TARGET,
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(res["runs"], 1):
        l3 = r["lab3"]
        out.append("| %d | %.3f | %.3f | %.4f | %.3f | %s | %.2f | %.2f | %.2f ± %.2f "
                   "| %.3f | %.3f | %s |" % (
                       i, r["fidelity"], r["throughput"], r["bound"], r["efficiency"],
                       "-" if r["steady_efficiency"] is None
                       else "%.3f" % r["steady_efficiency"],
                       l3["compute_configured"], l3["compute_predicted"],
                       l3["compute_measured"], l3["compute_stderr"], l3["speed_mean"],
                       l3["load"]["utilization"], yes(r["met"])))
    out += ["", "Efficiency is the run's throughput over the loaded bound (results.json "
            "\"efficiency\"); the interference factor is Lab3's mean speed from "
            "receiving while computing (results.json \"speed_mean\"), which its "
            "measured rate includes and its predicted one does not."]
    return out


def region(facts, cells, figs, fork):
    lines = ["", "### Job stream (emulated)", ""] + jobs_table(cells, facts)
    lines += ["", "### CPU burners and contenders (real)", ""] + real_table(figs, facts)
    lines += ["", "### fork7 with Lab3 loaded (emulated)", ""] + fork_table(fork, facts)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0].split(" — ")[1],
        epilog=__doc__[__doc__.index("Runs the"):], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a short smoke version")
    ap.add_argument("--out", metavar="DIR", help="keep the raw runs in DIR")
    ap.add_argument("--real", metavar="FILE", help="load-real.sh's JSON lines, read instead of run")
    ap.add_argument("--no-write", action="store_true", help="leave docs/ alone")
    ap.add_argument("--build", metavar="DIR", default=os.environ.get("BUILD", "build"),
                    help="the build directory (default: build, or $BUILD)")
    a = ap.parse_args()
    a.build = os.path.abspath(os.path.join(ROOT, a.build))
    for b in ("treefarm", "load-probe"):
        if not os.access(os.path.join(a.build, "bin", b), os.X_OK) and not (
                b == "load-probe" and a.real):
            sys.exit("load-validate: %s/bin/%s missing: run make (and make %s/bin/"
                     "load-probe)" % (a.build, b, os.path.relpath(a.build, ROOT)))
    if a.real and not os.path.isfile(a.real):
        print("load-validate: --real %s: no such file" % a.real, file=sys.stderr)
        return 2
    work = os.path.abspath(a.out) if a.out else tempfile.mkdtemp(prefix="treefarm-load-val.")
    os.makedirs(work, exist_ok=True)
    facts = {"nproc": os.cpu_count(),
             "loadavg": open("/proc/loadavg").read().split()[:3]}
    log("%d CPUs, load %s; raw runs in %s" % (facts["nproc"], " ".join(facts["loadavg"]),
                                             work))
    try:
        cells = jobs_part(a, work)
        figs = real_part(a, work)
        fork = fork_part(a, work)
    finally:
        if not a.out:
            shutil.rmtree(work, ignore_errors=True)
    text = region(facts, cells, figs, fork)
    print(text)
    if not (a.quick or a.no_write):
        rewrite_region(DOC, BEGIN, END, text, "load-validate")
        os.makedirs(os.path.dirname(RAW), exist_ok=True)
        write_json(RAW, {"command": COMMAND, "machine": facts,
                         "jobs": cells, "real": figs, "fork": fork})
        log("wrote %s and the region of %s" % (rel(RAW, ROOT), rel(DOC, ROOT)))
    failed = any(c is None for c in cells) or figs is None or fork is None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
