#!/usr/bin/env python3
"""Markdown tables of a `dmindex bench --json` run (scripts/bench-figures.sh), one per workload.

    python3 scripts/bench-tables.py RUN.json [--csv EXACT.csv] [--vs OLD.csv]

The exact columns (verbs, round trips and bytes per operation, client and pool memory) go to
EXACT.csv; with --vs, every exact figure that differs from OLD.csv by more than 1% (or that
one of the two runs lacks) is listed with its old and new value.
"""
import argparse
import csv
import json

EXACT = [  # (CSV column, JSON field, table heading, format)
    ("rtt", "round_trips_per_op", "RTT/op", "{:.2f}"),
    ("reads", "reads_per_op", "READ/op", "{:.2f}"),
    ("writes", "writes_per_op", "WRITE/op", "{:.2f}"),
    ("atomics", "atomics_per_op", "atomic/op", "{:.2f}"),
    ("rpcs", "rpcs_per_op", "RPC/op", "{:.2f}"),
    ("bytes", "bytes_per_op", "bytes/op", "{:.0f}"),
    ("client_mb", "cache_bytes", "client MB", "{:.2f}"),
    ("pool_mb", "pool_bytes", "pool MB", "{:.1f}"),
]
MB = {"cache_bytes", "pool_bytes"}


def exact_rows(runs):
    rows = {}
    for r in runs:
        row = {}
        for column, field, _, _ in EXACT:
            value = r.get(field) or 0.0
            row[column] = value / 1e6 if field in MB else value
        rows[(r["workload"], r["design"])] = row
    return rows


def print_tables(runs, rows):
    workloads = list(dict.fromkeys(r["workload"] for r in runs))
    for w in workloads:
        mine = [r for r in runs if r["workload"] == w]
        first = mine[0]["throughput_ops"] or 1.0
        print(f"\n### {w}\n")
        print("| design | " + " | ".join(h for _, _, h, _ in EXACT) + " | x" + mine[0]["design"] + " | check |")
        print("|---" * (len(EXACT) + 3) + "|")
        for r in mine:
            row = rows[(w, r["design"])]
            cells = [fmt.format(row[c]) for c, _, _, fmt in EXACT]
            check = "ok" if r.get("verified") and not r.get("error") else (r.get("error") or "not verified")
            print(f"| {r['design']} | " + " | ".join(cells) + f" | {r['throughput_ops'] / first:.2f} | {check} |")


def compare(rows, old_path):
    with open(old_path) as f:
        old = {(r["workload"], r["design"]): r for r in csv.DictReader(f)}
    print(f"\n### Exact figures that moved against {old_path}\n")
    moved = 0
    for key in sorted(set(old) | set(rows)):
        if key not in old or key not in rows:
            print(f"* {key[0]} {key[1]}: {'new' if key not in old else 'gone'}")
            moved += 1
            continue
        for column, _, heading, fmt in EXACT:
            a, b = float(old[key][column]), rows[key][column]
            if abs(a - b) > 0.01 * max(abs(a), abs(b)) and abs(a - b) > 0.005:
                print(f"* {key[0]} {key[1]} {heading}: {fmt.format(a)} -> {fmt.format(b)}")
                moved += 1
    if moved == 0:
        print("none")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--csv")
    ap.add_argument("--vs")
    args = ap.parse_args()
    with open(args.run) as f:
        runs = json.load(f)
    rows = exact_rows(runs)
    print_tables(runs, rows)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["workload", "design"] + [c for c, _, _, _ in EXACT])
            for (w, d), row in rows.items():
                out.writerow([w, d] + [f"{row[c]:.4f}" for c, _, _, _ in EXACT])
    if args.vs:
        compare(rows, args.vs)


if __name__ == "__main__":
    main()
