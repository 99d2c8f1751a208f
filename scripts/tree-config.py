#!/usr/bin/env python3
"""Write an experiment config for a complete k-ary tree, or a random one.

Used by the scale tests (tests/it_scale.sh, tests/it_simulate.sh) and
benchmarks (make bench, docs/simulate.md) to build trees of hundreds to
tens of thousands of nodes; users may use it as a starting point. Every
node computes at --compute units/s; every link runs at --link MB/s with
no interference unless --ir-send / --ir-recv are given; --vary F draws
each node's compute and link rates log-uniformly within a factor F of
those (seeded: the same arguments give the same tree).

  scripts/tree-config.py --depth 5 --count 3000 > tree63.json
  scripts/tree-config.py --random 10000 --depth 6 --count 1000000 > r10k.json

A random tree of N nodes has exactly --depth levels below the root: a
chain from the root down to that depth, then every other node under a
parent drawn uniformly among the nodes above the last level.
"""
import argparse
import json
import math
import random
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--name", help="experiment name (default: treeN)")
    p.add_argument("--depth", type=int, required=True,
                   help="levels below the root (depth 5: 63 nodes in a binary tree)")
    p.add_argument("--arity", type=int, default=2, help="children per inner node")
    p.add_argument("--count", type=int, required=True, help="tasks in the bag")
    p.add_argument("--input-mb", type=float, default=0.5, help="task input, MB")
    p.add_argument("--units", type=float, default=1, help="compute units per task")
    p.add_argument("--compute", type=float, default=5, help="units/s of every node")
    p.add_argument("--link", type=float, default=50, help="MB/s of every link")
    p.add_argument("--ir-send", type=float, default=0.0)
    p.add_argument("--ir-recv", type=float, default=0.0)
    p.add_argument("--policy", default="fcfs")
    p.add_argument("--time-scale", type=float, default=20)
    p.add_argument("--payload-scale", type=float, default=0.01)
    p.add_argument("--buffer", type=int, default=3)
    p.add_argument("--random", type=int, metavar="N",
                   help="a random tree of N nodes and exactly --depth levels")
    p.add_argument("--vary", type=float, default=1.0,
                   help="rates drawn within this factor of --compute and --link")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    a = p.parse_args()
    if a.depth < 0 or a.arity < 1:
        p.error("--depth must be >= 0 and --arity >= 1")
    if a.random is not None and not a.depth + 1 <= a.random <= 65536:
        p.error("--random N needs --depth + 1 <= N <= 65536")
    if a.vary < 1:
        p.error("--vary must be >= 1")
    rng = random.Random(a.seed)

    def rate(x):
        return round(x * math.exp(rng.uniform(-1, 1) * math.log(a.vary)), 4)

    def node(name, parent):
        n = {"name": name, "compute": rate(a.compute)}
        if parent is not None:
            n.update({"parent": parent, "link_mbps": rate(a.link),
                      "ir_send": a.ir_send, "ir_recv": a.ir_recv})
        return n

    tree = [node("n0", None)]
    if a.random is not None:
        depth = [0]
        for d in range(1, a.depth + 1):   # the chain that makes the depth
            tree.append(node("n%d" % len(tree), "n%d" % (len(tree) - 1)))
            depth.append(d)
        inner = [i for i, d in enumerate(depth) if d < a.depth]
        while len(tree) < a.random:
            parent = rng.choice(inner)
            tree.append(node("n%d" % len(tree), "n%d" % parent))
            depth.append(depth[parent] + 1)
            if depth[-1] < a.depth:
                inner.append(len(tree) - 1)
    level = ["n0"] if a.random is None else []
    for _ in range(a.depth if a.random is None else 0):
        nxt = []
        for parent in level:
            for _ in range(a.arity):
                name = "n%d" % len(tree)
                tree.append(node(name, parent))
                nxt.append(name)
        level = nxt
    cfg = {
        "name": a.name or "tree%d" % len(tree),
        "tasks": {"count": a.count, "input_mb": a.input_mb, "units": a.units},
        "policy": a.policy,
        "platform": {"mode": "emulated", "time_scale": a.time_scale,
                     "payload_scale": a.payload_scale, "buffer": a.buffer},
        "tree": tree,
    }
    json.dump(cfg, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
