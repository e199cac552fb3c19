#!/usr/bin/env python3
"""Plots `dmindex bench --json` results: throughput and verbs per operation, per design and
workload; or, when the runs carry timelines (`--timeline-ms`, `--repartition-at`), throughput
over time with one line per run (e.g. one file per cache size, DEX Fig. 10). Called by
`dmindex plot FILE.json... --out FILE.png`; runnable on its own too."""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        records = json.load(f)
    if not isinstance(records, list) or not records:
        raise ValueError(f"{path}: expected a non-empty JSON array of bench records")
    for r in records:
        for field in ("design", "workload", "throughput_ops", "reads_per_op", "writes_per_op",
                      "atomics_per_op", "rpcs_per_op"):
            if field not in r:
                raise ValueError(f"{path}: a record lacks '{field}'")
    return records


def ordered(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def timed(records):
    return [r for r in records if r.get("timeline")]


def line_label(r, runs):
    """What tells this run apart from the others on the figure."""
    parts = []
    for field in ("design", "workload"):
        if len(ordered(x[field] for x in runs)) > 1:
            parts.append(r[field])
    if "cache_per_node_bytes" in r and len(ordered(x.get("cache_per_node_bytes") for x in runs)) > 1:
        parts.append(f"cache {r['cache_per_node_bytes'] / 2**20:.2f} MB per compute node")
    return ", ".join(parts) or f"{r['design']} {r['workload']}"


def plot_timeline(records, out, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = timed(records)
    # The lower panel: round trips per operation, or - for runs without a network (indexy,
    # the store baselines, local) - the index's memory over time.
    memory = all(t.get("round_trips", 0) == 0 for r in runs for t in r["timeline"]) and any(
        t.get("memory_bytes", 0) > 0 for r in runs for t in r["timeline"])
    # A third panel, the cache's hit ratio per interval, when some run counted cache lookups
    # (IndeXY's X: the dip after a shift of the working set, Fig. 7).
    hits = any(t.get("cache_hit_ratio") is not None for r in runs for t in r["timeline"])
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if hits:
        fig, (ax, rtt, hit) = plt.subplots(3, 1, figsize=(9, 9), sharex=True,
                                           gridspec_kw={"height_ratios": [3, 2, 2]})
    else:
        fig, (ax, rtt) = plt.subplots(2, 1, figsize=(9, 7), sharex=True,
                                     gridspec_kw={"height_ratios": [3, 2]})
    moves = []
    for i, r in enumerate(runs):
        color = colors[i % len(colors)]
        xs = [(t["start_s"] + t["end_s"]) / 2 for t in r["timeline"]]
        ax.plot(xs, [t["throughput_ops"] / 1e6 for t in r["timeline"]], marker=".", markersize=3,
                linewidth=1.2, color=color, label=line_label(r, runs))
        if memory:
            rtt.plot(xs, [t.get("memory_bytes", 0) / 2**20 for t in r["timeline"]], marker=".", markersize=3,
                     linewidth=1.2, color=color)
        elif all("round_trips_per_op" in t for t in r["timeline"]):
            rtt.plot(xs, [t["round_trips_per_op"] for t in r["timeline"]], marker=".", markersize=3,
                     linewidth=1.2, color=color)
        if hits:
            ratios = [(x, t["cache_hit_ratio"] * 100) for x, t in zip(xs, r["timeline"])
                      if t.get("cache_hit_ratio") is not None]
            if ratios:
                hit.plot([x for x, _ in ratios], [h for _, h in ratios], marker=".", markersize=3,
                         linewidth=1.2, color=color)
        rp = r.get("repartition")
        if rp and rp.get("ran"):
            # The repartitioning itself: shaded while it ran, a dashed line where it began.
            for a in (ax, rtt):
                a.axvspan(rp["start_s"], rp["end_s"], color=color, alpha=0.15, linewidth=0)
                a.axvline(rp["start_s"], color=color, linestyle="--", linewidth=0.8)
            moves.append(rp)
    (hit if hits else rtt).set_xlabel("time since the measured phase began (s)")
    rtt.set_ylabel("index memory (MB)" if memory else "round trips per operation")
    rtt.set_ylim(bottom=0)
    rtt.grid(alpha=0.3)
    if hits:
        hit.set_ylabel("cache hit ratio (%)")
        hit.set_ylim(0, 100)
        hit.grid(alpha=0.3)
    ax.set_ylabel("throughput (Mops/s)")
    ax.set_ylim(bottom=0, top=ax.get_ylim()[1] * 1.08)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    default = "dmindex bench: throughput over time"
    if moves:
        rp = moves[0]
        default += (f"\ncompute node {rp['from']} hands {rp['moved_keys']} keys to "
                    f"{'scale-out ' if rp['scale_out'] else ''}compute node {rp['to']} "
                    f"at {rp['at_s']:g} s (dashed; shaded while Repartition runs)")
    ax.set_title(title or default, fontsize="medium")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def plot(records, out, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    designs = ordered(r["design"] for r in records)
    workloads = ordered(r["workload"] for r in records)
    by = {(r["design"], r["workload"]): r for r in records}
    width = 0.8 / len(designs)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    fig, (tput, verbs) = plt.subplots(2, 1, figsize=(max(7, 1.6 * len(workloads) * max(1, len(designs) / 2)), 8))
    for d, design in enumerate(designs):
        xs = [w + (d - (len(designs) - 1) / 2) * width for w in range(len(workloads))]
        ys = [by[(design, wl)]["throughput_ops"] / 1e6 if (design, wl) in by else 0 for wl in workloads]
        bars = tput.bar(xs, ys, width, label=design, color=colors[d % len(colors)])
        tput.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
    tput.set_ylabel("throughput (Mops/s)")
    tput.set_xticks(range(len(workloads)), workloads)
    tput.legend(title="design", fontsize="small")
    tput.set_title(title or "dmindex bench: throughput")
    tput.grid(axis="y", alpha=0.3)
    tput.set_ylim(top=tput.get_ylim()[1] * 1.1)

    kinds = [("reads_per_op", "READ"), ("writes_per_op", "WRITE"), ("atomics_per_op", "CAS/FAA"),
             ("rpcs_per_op", "RPC")]
    kind_colors = ["#4c72b0", "#dd8452", "#c44e52", "#8172b3"]
    tallest = 0.0
    rotation = 0 if len(designs) <= 3 else 90
    for d, design in enumerate(designs):
        xs = [w + (d - (len(designs) - 1) / 2) * width for w in range(len(workloads))]
        bottom = [0.0] * len(workloads)
        for k, (field, label) in enumerate(kinds):
            ys = [by[(design, wl)][field] if (design, wl) in by else 0 for wl in workloads]
            verbs.bar(xs, ys, width * 0.95, bottom=bottom, color=kind_colors[k],
                      edgecolor="white", linewidth=0.5, label=label if d == 0 else None)
            bottom = [b + y for b, y in zip(bottom, ys)]
        tallest = max([tallest] + bottom)
        for x, b in zip(xs, bottom):
            verbs.annotate(f"{design}\n{b:.2f}", (x, b), xytext=(0, 2), textcoords="offset points",
                           ha="center", va="bottom", fontsize=7, rotation=rotation)
    verbs.set_ylabel("verbs per operation")
    verbs.set_xticks(range(len(workloads)), workloads)
    verbs.legend(title="verb", fontsize="small")
    verbs.set_title("remote verbs per operation (stacked by kind, one bar per design)")
    verbs.grid(axis="y", alpha=0.3)
    verbs.set_ylim(0, max(tallest, 0.1) * (1.25 if rotation == 0 else 1.6))

    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("json_files", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--title", default="")
    a = p.parse_args()
    try:
        records = [r for path in a.json_files for r in load(path)]
    except (OSError, ValueError) as e:
        print(f"dmindex plot: {e}", file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("dmindex plot: matplotlib is missing for " + sys.executable +
              " (Debian: apt-get install python3-matplotlib)", file=sys.stderr)
        return 3
    (plot_timeline if timed(records) else plot)(records, a.out, a.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
