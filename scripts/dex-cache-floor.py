#!/usr/bin/env python3
"""The fewest round trips per lookup a cache of F frames allows on DEX's skewed workloads.

dex-ro draws zipfian ranks and hashes each to a record (FnvHash64(rank) % keys, as
src/bench/op_stream.cc does: ZipfianRanks::kRecords); the records' keys are hashed too
(key_space.cc, InsertOrder::kHashed), so the leaves of a bulk-loaded tree hold records in
random order. A lookup whose leaf is not cached costs at least one round trip (a READ of the
leaf, or one offload), so with F frames the round trips per lookup are at least

  bound:    1 - (request share of the F most requested leaves)   (a cache of leaves only)
  estimate: 1 - (share of the leaves a greedy fill takes, each with its level-1 parent, the
            levels above cached)                                 (DEX's path-aware cache)

Usage: scripts/dex-cache-floor.py --keys 1000000 --cache-pct 8 [--compute-nodes 2] [--node-bytes 1024]
Each compute node's cache is --cache-pct of keys x 16 bytes, as `dmindex bench --cache-pct`
sizes it; the compute nodes' partitions split the keys evenly, so their caches add up.
"""
import argparse
import math
import random

MASK = (1 << 64) - 1


def fnv_hash64(value):
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= value & 0xFF
        h = (h * 1099511628211) & MASK
        value >>= 8
    return (~h + 1) & MASK if h >> 63 else h  # Java's Math.abs of the signed value


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, required=True)
    ap.add_argument("--cache-pct", type=float, required=True)
    ap.add_argument("--compute-nodes", type=int, default=1)
    ap.add_argument("--theta", type=float, default=0.99)
    ap.add_argument("--node-bytes", type=int, default=1024)
    ap.add_argument("--fill", type=float, default=0.8, help="bulk load fill (TreeOptions::bulk_fill)")
    ap.add_argument("--seed", type=int, default=1, help="the leaves' random order")
    a = ap.parse_args()
    n = a.keys
    frames = a.compute_nodes * (int(a.cache_pct / 100 * n * 16) // a.node_bytes)
    header = 64  # the u64 layout's node header (tree/node_layout.h)
    per_leaf = max(1, int((a.node_bytes - header) // 24 * a.fill))
    fanout = max(2, int((a.node_bytes - header) // 16 * a.fill))

    mass = [0.0] * n
    for r in range(n):
        mass[fnv_hash64(r) % n] += (r + 1) ** -a.theta
    total = sum(mass)
    order = list(range(n))
    random.Random(a.seed).shuffle(order)
    leaves = [sum(mass[i] for i in order[j:j + per_leaf]) / total for j in range(0, n, per_leaf)]
    parents = math.ceil(len(leaves) / fanout)
    upper, level = 0, parents
    while level > 1:
        level = math.ceil(level / fanout)
        upper += level

    ranked = sorted(range(len(leaves)), key=lambda i: -leaves[i])
    bound = 1 - sum(leaves[i] for i in ranked[:frames])
    budget, taken, have = frames - upper, 0.0, set()
    for i in ranked:
        cost = 1 + (i // fanout not in have)
        if cost > budget:
            continue
        budget -= cost
        have.add(i // fanout)
        taken += leaves[i]
    print(f"keys {n}, theta {a.theta}, cache {frames} frames of {a.node_bytes} B; tree: {len(leaves)} leaves "
          f"({per_leaf} keys each), {parents} level-1 nodes, {upper} above")
    print(f"round trips per lookup >= {bound:.3f} (leaves only); path-aware estimate {1 - taken:.3f} "
          f"({len(have)} level-1 nodes cached)")


if __name__ == "__main__":
    main()
