#!/usr/bin/env python3
"""DEX's hit path against `local` as ratios measured in one run (docs/results/dex-hit-path.md).

    scripts/dex-vs-local-ratios.py [--runs N] [--min-time S] LABEL=BINARY [LABEL=BINARY ...]

Runs each dex_vs_local binary in turn, N rounds (the builds alternate, so a change in the
machine's load hits them alike), each run timing lookup and update of `local` and `dex`
(durability=none) in one process. Prints, per build, every run's CPU ns per operation and
dex/local ratio, and the median ratio of the runs. The machine's load average is printed
before and after: the machine is shared, and the ratios move with it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

OPS = ("lookup", "update")


def run_once(binary, min_time):
    out = subprocess.run(
        [binary, "--benchmark_filter=(lookup|update)/(local|dex)$",
         f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    times = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"{binary}: {b['name']}: {b.get('error_message')}")
        times[b["name"]] = b["cpu_time"]  # ns (the benchmark's default unit)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--min-time", default="0.3")
    p.add_argument("builds", nargs="+", help="LABEL=BINARY")
    a = p.parse_args()
    builds = [b.split("=", 1) for b in a.builds]
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    results = {label: [] for label, _ in builds}
    for r in range(a.runs):
        for label, binary in builds:
            results[label].append(run_once(binary, a.min_time))
            t = results[label][-1]
            print(f"run {r + 1} {label}: " + ", ".join(
                f"{op} local {t[op + '/local']:.0f} ns dex {t[op + '/dex']:.0f} ns "
                f"({t[op + '/dex'] / t[op + '/local']:.2f}x)" for op in OPS), flush=True)
    print("load average after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print()
    print("| build | operation | local (ns) | dex (ns) | dex/local per run | median |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, _ in builds:
        for op in OPS:
            runs = results[label]
            local = [t[op + "/local"] for t in runs]
            dex = [t[op + "/dex"] for t in runs]
            ratios = [d / l for d, l in zip(dex, local)]
            print(f"| {label} | {op} | {', '.join(f'{x:.0f}' for x in local)} | "
                  f"{', '.join(f'{x:.0f}' for x in dex)} | {', '.join(f'{x:.2f}' for x in ratios)} | "
                  f"**{statistics.median(ratios):.2f}x** |")


if __name__ == "__main__":
    main()
