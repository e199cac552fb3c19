#!/usr/bin/env python3
"""Tables and the thread-scaling plot of docs/results/simulation.md from scripts/sim-figures.sh's JSON.

    python3 scripts/sim-tables.py OUT            # markdown on stdout, OUT/threads.png
"""
import json
import os
import sys

# The DEX paper's figures (VLDB'24, section 8.2, Table 2), 144 threads, skewed unless noted.
PAPER_RATIOS = {  # DEX over (Sherman, P-Sherman)
    "dex-ro": (3.6, 2.5),
    "dex-ri": (3.4, 2.5),
    "dex-wi": (9.6, 7.0),
    "dex-si": (2.8, 1.6),
}
PAPER_TABLE2 = {  # design, workload -> (reads, writes, atomics, two-sided, bytes)
    ("dex", "dex-ro"): (0.33, 0, 0, 0.0002, 333.9),
    ("sherman", "dex-ro"): (3.02, 0, 0, 0, 1064.69),
    ("p-sherman", "dex-ro"): (1, 0, 0, 0, 1025.04),
    ("dex", "dex-wi"): (0.33, 0.19, 0, 0.0001, 524.1),
    ("sherman", "dex-wi"): (2.71, 0.99, 0.59, 0, 1078.95),
    ("p-sherman", "dex-wi"): (1.02, 0.5, 0, 0, 1054.39),
}
NAMES = {"sherman": "sherman", "dex": "dex", "dex:offload=off": "dex (offload off)",
         "dex:admission=0:offload=off": "p-sherman"}


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)


def by(results):
    return {(r["design"], r["workload"]): r for r in results}


def table2(runs, title):
    print(f"### {title}\n")
    print("| workload | design | READ/op | WRITE/op | atomic/op | RPC/op | bytes/op | hit % | paper READ/WRITE/atomic/2-sided/bytes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (design, workload), r in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        name = NAMES.get(design, design)
        paper = PAPER_TABLE2.get((name, workload))
        paper_text = " / ".join(f"{v:g}" for v in paper) if paper else ""
        hit = r["cache_hit_ratio"]
        print(f"| {workload} | {name} | {r['reads_per_op']:.2f} | {r['writes_per_op']:.2f} | {r['atomics_per_op']:.2f} "
              f"| {r['rpcs_per_op']:.3f} | {r['bytes_per_op']:.0f} | {'-' if hit is None else f'{100 * hit:.1f}'} | {paper_text} |")
    print()


def ratios(runs, title, paper=True):
    print(f"### {title}\n")
    head = "| workload | Mops/s sherman | p-sherman | dex | dex (offload off) | DEX/Sherman | DEX/P-Sherman | DEX (offload off)/Sherman | DEX (offload off)/P-Sherman |"
    if paper:
        head += " paper DEX/Sherman | paper DEX/P-Sherman |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for workload in ["dex-ro", "dex-ri", "dex-wi", "dex-si"]:
        get = lambda d: runs.get((d, workload), {}).get("throughput_ops", 0) / 1e6
        s, p, d, n = get("sherman"), get("dex:admission=0:offload=off"), get("dex"), get("dex:offload=off")
        if not s:
            continue
        num = lambda v: f"{v:.2f}" if v else "-"
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
        row = (f"| {workload} | {num(s)} | {num(p)} | {num(d)} | {num(n)} | {ratio(d, s)} | {ratio(d, p)} "
               f"| {ratio(n, s)} | {ratio(n, p)} |")
        if paper:
            row += f" {PAPER_RATIOS[workload][0]} | {PAPER_RATIOS[workload][1]} |"
        print(row)
    print()


def threads(out):
    points = {}
    for t in (36, 72, 108, 144):
        rows = load(os.path.join(out, f"threads-{t}.json"))
        if not rows and t == 144:  # the skewed figure's dex-ri runs are the 144-thread points
            rows = [r for r in load(os.path.join(out, "skewed.json"))
                    if r["workload"] == "dex-ri" and r["design"] in points]
        for r in rows:
            points.setdefault(r["design"], []).append((t, r["throughput_ops"] / 1e6, r["p50_us"]))
    if not points:
        return
    print("### Thread scaling, read-intensive (dex-ri), skewed (cf. Fig. 11 / Fig. 6(b))\n")
    print("| design | " + " | ".join(f"{t} threads" for t, _, _ in sorted(next(iter(points.values())))) + " |")
    print("|---|" + "---|" * len(next(iter(points.values()))))
    for design, pts in points.items():
        print(f"| {NAMES.get(design, design)} | " + " | ".join(f"{m:.2f} Mops/s" for _, m, _ in sorted(pts)) + " |")
    print()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for design, pts in points.items():
        pts.sort()
        ax.plot([t for t, _, _ in pts], [m for _, m, _ in pts], marker="o", label=NAMES.get(design, design))
    ax.set_xlabel("client threads (spread evenly over the 4 compute servers)")
    ax.set_ylabel("Mops/s (simulated)")
    ax.set_title("dex-ri, zipf 0.99, cache 8%, simulated DEX testbed")
    ax.set_xticks([36, 72, 108, 144])
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "threads.png"), dpi=120)


def main():
    out = sys.argv[1]
    skewed = by(load(os.path.join(out, "skewed.json")))
    if skewed:
        table2({k: v for k, v in skewed.items() if k[1] in ("dex-ro", "dex-wi")},
               "Verbs per operation, skewed, 144 threads (cf. Table 2)")
        ratios(skewed, "Throughput, skewed, 144 threads (cf. Fig. 6)")
    uniform = by(load(os.path.join(out, "uniform.json")))
    if uniform:
        ratios(uniform, "Throughput, uniform, 144 threads (cf. Fig. 7; the paper gives no ratios)", paper=False)
    measured = by(load(os.path.join(out, "measured.json")))
    if measured:
        ratios(measured, "Throughput, skewed, 144 threads, measured compute", paper=True)
    threads(out)


if __name__ == "__main__":
    main()
