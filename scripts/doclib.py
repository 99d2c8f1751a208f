"""doclib — what the scripts that regenerate a doc's tables share.

Each such script runs experiments through `treefarm`, prints its tables,
and (unless --quick or --no-write) writes them into a region of a doc
between two markers and every raw figure, with the command behind it,
into a JSON file beside the doc. `study_main` is that whole shape; the
script gives it what to run and how to tabulate it.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def rewrite_region(doc, begin, end, text, who):
    """Replace what stands between the markers begin and end in doc with
    text (the markers stay), atomically; exit naming doc when either
    marker is missing."""
    old = open(doc).read()
    b, e = old.find(begin), old.find(end)
    if b < 0 or e < b:
        sys.exit("%s: %s has no %s ... %s region" % (who, doc, begin, end))
    tmp = doc + ".tmp"
    with open(tmp, "w") as f:
        f.write(old[:b + len(begin)] + "\n" + text + old[e:])
    os.replace(tmp, doc)


def treefarm(build, args, who):
    """Run build's treefarm with args from ROOT. Returns (exit status,
    stdout text); stderr is shown, named by who, when it fails."""
    argv = [os.path.join(build, "bin", "treefarm")] + args
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        print("%s: %s exited %d:\n%s" % (who, " ".join(argv), p.returncode,
                                         p.stderr[-2000:]), file=sys.stderr, flush=True)
    return p.returncode, p.stdout


def machine():
    return {"nproc": os.cpu_count(), "loadavg": open("/proc/loadavg").read().split()[:3]}


def study_main(who, docstring, epilog_from, work_prefix, body, render, doc, raw, begin,
               end, command):
    """A study script's main: --quick, --out DIR, --no-write, --build DIR;
    body(args, work) runs everything into the work directory and returns
    the results (None: a run failed), render(results) their tables.
    Returns the exit status: 0, 1 when a run failed, 2 on a missing
    build."""
    ap = argparse.ArgumentParser(
        description=docstring.split("\n")[0].split(" — ")[1],
        epilog=docstring[docstring.index(epilog_from):],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a short smoke version")
    ap.add_argument("--out", metavar="DIR", help="keep the raw runs in DIR")
    ap.add_argument("--no-write", action="store_true", help="leave docs/ alone")
    ap.add_argument("--build", metavar="DIR", default=os.environ.get("BUILD", "build"),
                    help="the build directory (default: build, or $BUILD)")
    a = ap.parse_args()
    a.build = os.path.abspath(os.path.join(ROOT, a.build))
    if not os.access(os.path.join(a.build, "bin", "treefarm"), os.X_OK):
        print("%s: %s/bin/treefarm missing: run make" % (who, a.build), file=sys.stderr)
        return 2
    work = os.path.abspath(a.out) if a.out else tempfile.mkdtemp(prefix=work_prefix)
    os.makedirs(work, exist_ok=True)
    try:
        res = body(a, work)
    finally:
        if not a.out:
            shutil.rmtree(work, ignore_errors=True)
    if res is None:
        return 1
    text = render(res)
    print(text)
    if not (a.quick or a.no_write):
        rewrite_region(doc, begin, end, text, who)
        os.makedirs(os.path.dirname(raw), exist_ok=True)
        write_json(raw, dict(res, command=command, machine=machine()))
        print("%s: wrote %s and the region of %s" % (
            who, os.path.relpath(raw, ROOT), os.path.relpath(doc, ROOT)),
            file=sys.stderr, flush=True)
    return 0
