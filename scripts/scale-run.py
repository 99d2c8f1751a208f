#!/usr/bin/env python3
"""Run one `treefarm run` and watch its processes' private memory.

make bench's scale part (scripts/bench-scale.sh) runs each of its trees
through this: it starts the controller, samples every --every seconds the
RssAnon (/proc/PID/status: private, anonymous resident memory; shared
libraries are RssFile) of the controller and of every node process (the
controller's children), and the run's progress (rows of tasks.csv, which
the controller flushes every second). The kernel keeps no high-water mark
of RssAnon (VmHWM counts file pages too), so a peak is the largest
sample: a spike shorter than the interval can be missed.

When the run is over it checks tasks.csv (every task 0..count-1 exactly
once) and prints one JSON object:

  status, completed, count, once (1 when tasks.csv holds every task
  exactly once), wall_s, efficiency, fidelity (results.json);
  elapsed_s (the command, start to exit), samples;
  peak_node_kib {name: KiB}, peak_controller_kib;
  growth {name: fraction}: each process's RssAnon at its last sample
  before the run's end (before 99% of the tasks are in tasks.csv: the
  last percent is the end, when the controller gathers the REPORTs) over
  its first sample at or after 10% of the tasks, minus 1; "controller"
  for the controller.

  scale-run.py --treefarm build/bin/treefarm --config tree.json --out DIR
               [--every 0.2] [--series FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import time


def rss_anon_kib(pid):
    """RssAnon of pid in KiB, or None when it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def node_name(pid, names):
    """The --name of a node process (cached), or None."""
    if pid not in names:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            names[pid] = argv[argv.index("--name") + 1] if "--name" in argv else None
        except (OSError, IndexError):
            return None
    return names[pid]


class Rows:
    """tasks.csv's data rows so far, read incrementally."""

    def __init__(self, path):
        self.path, self.pos, self.newlines = path, 0, 0

    def count(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except OSError:
            return 0
        self.pos += len(data)
        self.newlines += data.count(b"\n")
        return max(0, self.newlines - 1)   # the header


def sample_run(a):
    t0 = time.monotonic()
    ctl = subprocess.Popen([a.treefarm, "run", a.config, "--out", a.out, "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rows, names = Rows(os.path.join(a.out, "tasks.csv")), {}
    series = {}   # name -> [(rows, kib)]
    samples = 0
    while ctl.poll() is None:
        done = rows.count()
        procs = [("controller", ctl.pid)]
        procs += [(node_name(p, names), p) for p in children(ctl.pid)]
        for name, pid in procs:
            kib = rss_anon_kib(pid) if name else None
            if kib is not None:
                series.setdefault(name, []).append((done, kib))
        samples += 1
        time.sleep(a.every)
    err = ctl.stderr.read().decode(errors="replace")
    return ctl.returncode, time.monotonic() - t0, series, samples, err


def growth(points, count):
    """Last sample before the end (before 99% of the tasks: the last
    percent is the run's end, when the controller gathers every node's
    REPORT and samples, and tasks.csv's last flush lags by up to a
    second) over the first at >= 10% of the tasks."""
    first = next((k for r, k in points if r >= 0.1 * count), None)
    last = [k for r, k in points if r < 0.99 * count]
    if first is None or not last:
        return None
    return last[-1] / first - 1


def check_tasks(path, count):
    """1 when tasks.csv holds each task 0..count-1 exactly once."""
    seen = bytearray(count)
    with open(path) as f:
        next(f)
        for line in f:
            t = int(line.split(",", 1)[0])
            if not 0 <= t < count or seen[t]:
                return 0
            seen[t] = 1
    return int(all(seen))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--treefarm", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--every", type=float, default=0.2, help="seconds between samples")
    p.add_argument("--series", help="also write every sample here (JSON: name -> "
                   "[[rows, KiB], ...])")
    a = p.parse_args()
    if os.path.exists(os.path.join(a.out, "tasks.csv")):
        # The progress is read from tasks.csv as it grows: an old one
        # would be counted until the run replaced it.
        sys.exit("scale-run: %s holds a run already; give a new --out" % a.out)
    with open(a.config) as f:
        count = json.load(f)["tasks"]["count"]
    code, elapsed, series, samples, err = sample_run(a)
    with open(os.path.join(a.out, "results.json")) as f:
        r = json.load(f)
    if a.series:
        with open(a.series, "w") as f:
            json.dump(series, f)
    peaks = {n: max(k for _, k in pts) for n, pts in series.items()}
    out = {
        "exit": code, "status": r["status"], "error": r.get("error"),
        "completed": r["completed"], "count": count,
        "once": check_tasks(os.path.join(a.out, "tasks.csv"), count),
        "wall_s": r["wall_s"], "efficiency": r["efficiency"],
        "fidelity": r["fidelity"]["min"], "elapsed_s": elapsed, "samples": samples,
        "peak_controller_kib": peaks.pop("controller", None),
        "peak_node_kib": peaks,
        "growth": {n: growth(pts, count) for n, pts in series.items()},
    }
    if code != 0:
        sys.stderr.write(err)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
