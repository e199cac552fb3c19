#!/usr/bin/env python3
"""Merges calibration tables (bench --calibrate-out) into the median of each design's cycles
per kind, and says on stderr how far the runs were apart (scripts/calibrate-compute.sh).

    python3 scripts/calibration-median.py RUN.txt [RUN.txt ...] > MERGED.txt
"""
import statistics
import sys


def read(path):
    """(comment lines, {head: {kind: cycles}}) of one table; head is 'default' or 'design NAME'."""
    comments, tables = [], {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#") or not line:
                comments.append(line)
                continue
            words = line.split(" ")
            head = words[0] if words[0] == "default" else " ".join(words[:2])
            items = words[1:] if words[0] == "default" else words[2:]
            tables[head] = {k: float(v) for k, v in (item.split("=", 1) for item in items if item)}
    return comments, tables


def main():
    paths = sys.argv[1:]
    if not paths:
        sys.exit(__doc__)
    runs = [read(p) for p in paths]
    comments = runs[0][0]
    heads = list(runs[0][1])
    for _, tables in runs[1:]:
        if list(tables) != heads:
            sys.exit("calibration-median: the runs' tables name different designs")
    print("\n".join(comments))
    print(f"# median of {len(runs)} runs, kind by kind (scripts/calibrate-compute.sh)")
    for head in heads:
        kinds = runs[0][1][head]
        merged = {}
        for kind in kinds:
            values = [tables[head][kind] for _, tables in runs]
            merged[kind] = statistics.median(values)
            low, high = min(values), max(values)
            if head != "default" and high > 1.25 * max(low, 1.0) and high - low > 200:
                print(f"calibration-median: {head} {kind}: runs {', '.join(f'{v:.0f}' for v in values)}",
                      file=sys.stderr)
        print(head + " " + " ".join(f"{k}={round(v)}" for k, v in merged.items()))


if __name__ == "__main__":
    main()
