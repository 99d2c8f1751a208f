#!/usr/bin/env python3
"""Write an experiment config for a complete k-ary tree of identical nodes.

Used by the scale tests (tests/it_scale.sh) and benchmarks (make bench) to
build trees of hundreds of nodes; users may use it as a starting point.
Every node computes at --compute units/s; every link runs at --link MB/s
with no interference unless --ir-send / --ir-recv are given.

  scripts/tree-config.py --depth 5 --count 3000 > tree63.json
"""
import argparse
import json
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
    a = p.parse_args()
    if a.depth < 0 or a.arity < 1:
        p.error("--depth must be >= 0 and --arity >= 1")

    tree = [{"name": "n0", "compute": a.compute}]
    level = ["n0"]
    for _ in range(a.depth):
        nxt = []
        for parent in level:
            for _ in range(a.arity):
                name = "n%d" % len(tree)
                tree.append({"name": name, "parent": parent, "compute": a.compute,
                             "link_mbps": a.link, "ir_send": a.ir_send,
                             "ir_recv": a.ir_recv})
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
