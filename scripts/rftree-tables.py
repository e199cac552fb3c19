#!/usr/bin/env python3
"""The tables of docs/results/rftree.md from scripts/rftree-figures.sh's JSON.

    python3 scripts/rftree-tables.py OUT          # markdown on stdout
"""
import glob
import json
import os
import sys

WORKLOADS = ["load-a", "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e"]
SHORT = {"rftree:lock=table:combine=on:hocl=on": "rftree+sherman-opts"}


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)


def name(design):
    return SHORT.get(design, design)


def ratios(out, fig):
    """Throughput relative to Sherman measured in the same run, per thread count."""
    runs = {}
    for path in glob.glob(os.path.join(out, fig + "-*.json")):
        runs[int(path.rsplit("-", 1)[1][:-5])] = {(r["design"], r["workload"]): r for r in load(path)}
    if not runs:
        return
    threads = sorted(runs)
    designs = [r["design"] for r in load(os.path.join(out, "%s-%d.json" % (fig, threads[0]))) if r["workload"] == "load-a"]
    print("| workload | design | " + " | ".join("T=%d" % t for t in threads) + " |")
    print("|---|---|" + "---|" * len(threads))
    for w in WORKLOADS:
        for d in designs:
            cells = []
            for t in threads:
                r, s = runs[t].get((d, w)), runs[t].get(("sherman", w))
                if r is None or s is None:
                    cells.append("-")
                elif d == "sherman":
                    cells.append("%.3f Mops/s" % (s["throughput_ops"] / 1e6))
                else:
                    cells.append("%.2f" % (r["throughput_ops"] / s["throughput_ops"]))
            print("| %s | %s | %s |" % (w, name(d), " | ".join(cells)))
    print()


def verbs(path, with_tails=False):
    rows = load(path)
    if not rows:
        return
    head = "| workload | design | READ | WRITE | atomic | RPC | RTT | bytes | refreshes |"
    if with_tails:
        head = "| workload | design | p50 us | p99 us | p99.9 us | p99.99 us | RTT | bytes |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        if with_tails:
            print("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.0f |" % (
                r["workload"], name(r["design"]), r["p50_us"], r["p99_us"], r["p999_us"], r["p9999_us"],
                r["round_trips_per_op"], r["bytes_per_op"]))
        else:
            print("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %d |" % (
                r["workload"], name(r["design"]), r["reads_per_op"], r["writes_per_op"], r["atomics_per_op"],
                r["rpcs_per_op"], r["round_trips_per_op"], r["bytes_per_op"], r["slc_refreshes"]))
    print()


def threshold(path):
    rows = load(path)
    if not rows:
        return
    sherman = next((r for r in rows if r["design"] == "sherman"), None)
    print("| design | RTT/op | bytes/op | refreshes | stale reads/op | cache bytes | x sherman | p99.99 us |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        x = r["throughput_ops"] / sherman["throughput_ops"] if sherman else float("nan")
        print("| %s | %.2f | %.0f | %d | %.3f | %d | %.2f | %.0f |" % (
            r["design"], r["round_trips_per_op"], r["bytes_per_op"], r["slc_refreshes"],
            r["stale_reads_per_op"], r["cache_bytes"], x, r["p9999_us"]))
    print()


def memory(out):
    # cache_bytes sums the compute nodes' caches; the target is per compute node.
    print("| keys | cache budget | design | cache bytes per compute node | pool bytes | per node / pool | hit % | READ/op | bytes/op |")
    print("|---|---|---|---|---|---|---|---|---|")
    for keys in (100000, 400000, 1600000):
        for suffix, budget in (("", "10% of records"), ("-64mb", "64 MB")):
            for r in load(os.path.join(out, "memory-%d%s.json" % (keys, suffix))):
                per_node = r["cache_bytes"] / r["compute_nodes"]
                print("| %d | %s | %s | %d | %d | %.2f%% | %.1f | %.2f | %.0f |" % (
                    keys, budget, r["design"], per_node, r["pool_bytes"],
                    100.0 * per_node / r["pool_bytes"], 100 * r["cache_hit_ratio"],
                    r["reads_per_op"], r["bytes_per_op"]))
    print()


def main():
    out = sys.argv[1]
    for fig in ("zipf", "uniform"):
        print("### %s: throughput relative to Sherman (same run)\n" % fig)
        ratios(out, fig)
    for fig in ("zipf-8", "uniform-8", "zipf-1"):
        print("### %s: verbs per operation\n" % fig)
        verbs(os.path.join(out, fig + ".json"))
    for fig in ("zipf-1", "zipf-8"):
        print("### %s: tails\n" % fig)
        verbs(os.path.join(out, fig + ".json"), with_tails=True)
    print("### threshold\n")
    threshold(os.path.join(out, "threshold.json"))
    print("### memory\n")
    memory(out)
    for v in (8, 1000):
        print("### bytes, %d-byte values\n" % v)
        verbs(os.path.join(out, "bytes-%d.json" % v))


if __name__ == "__main__":
    main()
