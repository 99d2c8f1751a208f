#!/usr/bin/env python3
"""check-layout — the size and layering limits of the tree, checked.

    scripts/check-layout.py [--root DIR] [--list]

Checks, in the product's C files (overlay/ policies/ node/ controller/
sim/):
  - node/node.c is at most NODE_C_MAX lines (the loop, the wait, teardown);
  - every .c and .h file is at most FILE_MAX lines (one job per file);
  - every function is at most FUNC_MAX lines, counted from its opening
    brace to its closing brace (both in column 0, the house format);
  - dependencies point one way: overlay/ includes only overlay/,
    policies/ only policies/ and overlay/, node/ nothing from controller/,
    controller/ nothing from node/; sim/ (the simulator, which drives
    node cores and files controller results) anything;
and in README.md and docs/ (which describe the system as it is today):
  - no dates, clock times, commit hashes, issue numbers or words that
    date a sentence ("this morning", "the night before", "this session").

Prints one line per violation, "path:line: what", and exits 1 if there
is any; --list prints the longest files and functions as well. tests/
it_layout.sh runs it on the tree and on broken copies.
"""
import argparse
import os
import re
import sys

NODE_C_MAX = 400
FILE_MAX = 900
FUNC_MAX = 50
LAYERS = ("overlay", "policies", "node", "controller", "sim")
# What each layer may include from the project (besides itself).
ALLOWED = {
    "overlay": set(),
    "policies": {"overlay"},
    "node": {"overlay", "policies"},
    "controller": {"overlay", "policies"},
    "sim": {"overlay", "policies", "node", "controller"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"(?:\.\./)*([a-z_]+)/[^"]+"')
DOC_PATTERNS = [
    (re.compile(r"\b(19|20)\d\d-[01]\d-[0-3]\d\b"), "a date"),
    (re.compile(r"\b(January|February|March|April|May|June|July|August|September|"
                r"October|November|December) (\d{1,2}, )?(19|20)\d\d\b"), "a date"),
    (re.compile(r"(?<![\d:])[0-2]?\d:[0-5]\d( ?UTC| ?GMT|:[0-5]\d(?![\d:]))"), "a clock time"),
    (re.compile(r"\b(commit|commits|hash)\s+[0-9a-f]{7,40}\b", re.I), "a commit hash"),
    (re.compile(r"(?<![\w/.-])[0-9a-f]{7,40}(?![\w/-]|\.\w)"), "a commit hash"),
    (re.compile(r"\b(issue|issues)\s+#?\d+\b", re.I), "an issue number"),
    (re.compile(r"(?<![\w&])#\d{1,4}\b(?!;)"), "an issue number"),
    (re.compile(r"\b(this|yesterday|that) (morning|afternoon|evening|night)\b", re.I),
     "a time of day"),
    (re.compile(r"\b(the night before|last night|tonight|yesterday|earlier today|"
                r"this session|last session|previous session|the last session)\b", re.I),
     "a word that dates the text"),
]


def product_files(root):
    for layer in LAYERS:
        top = os.path.join(root, layer)
        if not os.path.isdir(top):
            continue
        for name in sorted(os.listdir(top)):
            if name.endswith((".c", ".h")):
                yield layer, os.path.join(layer, name)


def functions(lines):
    """(first line, length, name) of every function: '{' to '}' in column 0."""
    start = None
    for i, line in enumerate(lines, 1):
        if line.startswith("{"):
            start = i
        elif line.startswith("}") and start is not None:
            # The name opens the signature: the nearest line above the
            # brace that starts in column 0 (the arguments may wrap).
            k = start - 2
            while k > 0 and lines[k][:1] in (" ", "\t"):
                k -= 1
            head = lines[k].split("(")[0].split() if k >= 0 else []
            name = head[-1].lstrip("*") if head else "?"
            yield start, i - start + 1, name
            start = None


def check_code(root, problems, sizes, funcs):
    for layer, rel in product_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        n = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
        sizes.append((n, rel))
        limit = NODE_C_MAX if rel == "node/node.c" else FILE_MAX
        if n > limit:
            problems.append(f"{rel}:{n}: file of {n} lines, over {limit}")
        for i, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if m and m.group(1) != layer and m.group(1) in LAYERS \
                    and m.group(1) not in ALLOWED[layer]:
                problems.append(f"{rel}:{i}: {layer}/ includes {m.group(1)}/")
        if rel.endswith(".c"):
            for start, length, name in functions(lines):
                funcs.append((length, f"{rel}:{start}", name))
                if length > FUNC_MAX:
                    problems.append(f"{rel}:{start}: function {name} of {length} lines,"
                                    f" over {FUNC_MAX}")


def doc_files(root):
    if os.path.exists(os.path.join(root, "README.md")):
        yield "README.md"
    for dirpath, _, names in os.walk(os.path.join(root, "docs")):
        for name in sorted(names):
            if name.endswith(".md"):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def looks_hashed(word):
    """A hex word is a hash when it mixes digits and letters (2147483648
    and 'deadbeef'-free prose are not)."""
    word = word.split()[-1]
    return bool(re.search(r"\d", word)) and bool(re.search(r"[a-f]", word))


def check_docs(root, problems):
    for rel in doc_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                found = None
                for pattern, what in DOC_PATTERNS:
                    # Every match, not the first: a decimal number before a
                    # hash on the same line must not hide the hash.
                    for m in pattern.finditer(line):
                        if what != "a commit hash" or looks_hashed(m.group(0)):
                            found = f"{rel}:{i}: {what}: '{m.group(0)}'"
                            break
                    if found:
                        problems.append(found)
                        break


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1].strip(),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                    help="the tree to check (default: this checkout)")
    ap.add_argument("--list", action="store_true",
                    help="also print the ten longest files and functions")
    args = ap.parse_args()
    problems, sizes, funcs = [], [], []
    check_code(args.root, problems, sizes, funcs)
    check_docs(args.root, problems)
    if args.list:
        for n, rel in sorted(sizes, reverse=True)[:10]:
            print(f"file {n:5d} {rel}")
        for n, where, name in sorted(funcs, reverse=True)[:10]:
            print(f"func {n:5d} {where} {name}")
    for p in problems:
        print(p)
    print(f"check-layout: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
