#!/usr/bin/env python3
"""The tables of docs/results/indexy.md from scripts/indexy-figures.sh's JSON files.

  scripts/indexy-tables.py [OUT_DIR]        (default build/indexy-figures)

Prints markdown: per run throughput (and the paper's system name), for timelines the in-memory
phase (intervals before X first reached its high mark) and the phase after the limit, and
IndeXY's memory: peak X bytes against the high watermark, releases, stalls."""
import json
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "build/indexy-figures"


def system(design):
    if design.startswith("indexy:x=art:y=rocksdb"):
        name = "ART-LSM"
    elif design.startswith("indexy:x=art:y=btree"):
        name = "ART-B+"
    elif design.startswith("indexy:x=btree:y=rocksdb"):
        name = "B+-LSM"
    elif design.startswith("btree-disk"):
        name = "B+-B+"
    elif design.startswith("rocksdb"):
        name = "RocksDB"
    elif design.startswith("lmdb"):
        name = "LMDB"
    else:
        name = design
    for tag in ("release=clock", "release=density", "page_kb=", "y_page_kb="):
        if tag in design:
            name += " " + design[design.index(tag):].split(":")[0]
    return name


def load(name):
    path = os.path.join(OUT, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def kops(x):
    return f"{x / 1e3:.1f}"


def phases(r):
    """Mean throughput before X (or the store's memory) first reached 95% of the limit, and after."""
    limit = r["properties"].get("dmindex.indexy.limit-bytes")
    tl = r["timeline"]
    if not tl:
        return None, None
    reached = None
    if limit:
        for i, t in enumerate(tl):
            if t["memory_bytes"] >= 0.95 * limit:
                reached = i
                break
    if reached is None:
        reached = 1  # no memory signal: the first interval stands for the in-memory phase
    def mean(part):
        ops = sum(t["ops"] for t in part)
        secs = sum(t["end_s"] - t["start_s"] for t in part)
        return ops / secs if secs > 0 else 0
    return mean(tl[:max(reached, 1)]), mean(tl[reached + 1:]) if len(tl) > reached + 1 else None


def fig3(name):
    runs = load(name)
    if not runs:
        return
    print(f"\n{name}: {runs[0]['ops']} keys inserted into an empty index\n")
    print("| system | whole run kops/s | until the limit kops/s | after the limit kops/s | peak X MB (high mark) | released entries | written by release | stalls (timeouts) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in runs:
        before, after = phases(r)
        p = r["properties"]
        limit = p.get("dmindex.indexy.limit-bytes")
        peak = (f"{p['dmindex.indexy.x-peak-bytes'] / 2**20:.2f} ({0.95 * limit / 2**20:.2f})" if limit else "-")
        rel = p.get("dmindex.indexy.released-entries", "-")
        wr = p.get("dmindex.indexy.release-written", "-")
        st = f"{p['dmindex.indexy.stalls']} ({p['dmindex.indexy.stall-timeouts']})" if limit else "-"
        print(f"| {system(r['design'])} | {kops(r['throughput_ops'])} | {kops(before) if before else '-'} | "
              f"{kops(after) if after else '-'} | {peak} | {rel} | {wr} | {st} |")


def page_kb(r):
    d = r["design"]
    tag = "page_kb=" if "btree-disk" in d else "y_page_kb="
    return d[d.index(tag) + len(tag):].split(":")[0] + " KiB pages"


def simple(names, title, key=lambda r: r["workload"], col=None):
    rows = {}
    cols = []
    for n in names:
        runs = load(n)
        if not runs:
            continue
        for r in runs:
            c = col(r) if col else system(r["design"])
            if c not in cols:
                cols.append(c)
            rows.setdefault(key(r) if callable(key) else n, {})[c] = r
    if not rows:
        return
    print(f"\n{title}\n")
    print("| | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for row, by in rows.items():
        print(f"| {row} | " + " | ".join(kops(by[c]["throughput_ops"]) if c in by else "-" for c in cols) + " |")


def main():
    fig3("fig3-random")
    fig3("fig3-sequential")
    simple([f"table2-{kb}" for kb in (4, 8, 16)], "Table II analogue: random inserts over the whole run, kops/s",
           key=page_kb, col=lambda r: system(r["design"]).split(" ")[0])
    simple([f"fig5-{p}" for p in (1, 5, 25, 50)], "Fig. 5: uniform reads over a working set, kops/s",
           key=None)
    simple(["fig8"], "Fig. 8: YCSB at zipfian 0.7 after the limit, kops/s")
    simple([f"fig7-unit{u}" for u in (1, 5, 10)], "Fig. 7: shifting working set, lookups per second (kops/s)",
           key=None)
    simple(["policy-5", "policy-25", "policy-ycsb-a"], "Release policies, kops/s", key=None)
    # X bytes and hit rates of the read runs (how much of the working set stayed in X).
    for n in [f"fig5-{p}" for p in (1, 5, 25, 50)] + ["policy-5", "policy-25"]:
        runs = load(n)
        if not runs:
            continue
        for r in runs:
            p = r["properties"]
            if "dmindex.indexy.y-reads" in p:
                reads = p["dmindex.indexy.y-reads"]
                print(f"- {n} {system(r['design'])}: X answered {r['cache_hit_ratio'] and 100 * r['cache_hit_ratio']:.1f}% "
                      f"of the lookups in the measured phase, {reads} Y reads in all, "
                      f"admissions {p['dmindex.indexy.admissions']}")


main()
