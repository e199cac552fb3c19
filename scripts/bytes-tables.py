#!/usr/bin/env python3
"""Tables of docs/results/byte-keys.md from scripts/bytes-figures.sh's JSON.

    python3 scripts/bytes-tables.py OUT      # markdown on stdout

One table per workload: a row per record shape and design with the exact verbs, round trips
and bytes per operation and the throughput relative to `local` measured in the same run.
"""
import json
import os
import re
import sys

SHAPE = re.compile(r"bytes-(?P<style>\w+)-k(?P<k>\d+)-v(?P<v>\d+)\.json$")


def shapes(out):
    found = []
    if os.path.exists(os.path.join(out, "u64.json")):
        found.append(((0, "", 0, 0), "u64 (8-byte integers)", "u64.json"))
    for name in os.listdir(out):
        m = SHAPE.match(name)
        if m:
            k, v = int(m["k"]), int(m["v"])
            order = (1, m["style"], k, v)
            found.append((order, f'{m["style"]} {k} B keys, {v} B values', name))
    return sorted(found)


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def main(out):
    runs = []
    for _, label, name in shapes(out):
        with open(os.path.join(out, name)) as f:
            for r in json.load(f):
                runs.append((label, r))
    workloads = sorted({r["workload"] for _, r in runs})
    for w in workloads:
        print(f"\n#### {w}\n")
        print("| records | design | READ/op | WRITE/op | atomic/op | RPC/op | RTT/op | bytes/op | x local | check |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        base = {}
        for label, r in runs:
            if r["workload"] == w and r["design"] == "local":
                base[label] = r["throughput_ops"]
        last = None
        for label, r in runs:
            if r["workload"] != w or r["design"] == "local":
                continue
            b = base.get(label)
            ratio = r["throughput_ops"] / b if b else None
            ok = "ok" if r["verified"] and not r["error"] else (r["error"] or r["verify_error"] or "FAILED")
            print(f'| {label if label != last else ""} | {r["design"]} | {fmt(r["reads_per_op"])} | '
                  f'{fmt(r["writes_per_op"])} | {fmt(r["atomics_per_op"])} | {fmt(r["rpcs_per_op"])} | '
                  f'{fmt(r["round_trips_per_op"])} | {r["bytes_per_op"]:.0f} | {fmt(ratio, 3)} | {ok} |')
            last = label


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bytes-figures")
