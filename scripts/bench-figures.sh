#!/usr/bin/env bash
# The figures of docs/results/ycsb-af.md (docs/BENCHMARKS.md, "Results on this machine"): YCSB
# A-F on every registered design in one `dmindex bench` run with the default settings (its C and
# A rows are the default run's table, `scripts/run.sh`), then its tables. The exact columns are
# kept in OUT/exact.csv; with OLD (a CSV of an earlier run, e.g. docs/results/ycsb-af.csv) every
# exact figure that moved is listed with its old and new value.
#   scripts/bench-figures.sh OUT [OLD.csv] [-- BENCH_ARG...]
# Environment: DMINDEX (build/dmindex).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/bench-figures.sh OUT [OLD.csv] [-- BENCH_ARG...]}
shift
old=()
if [ $# -gt 0 ] && [ "$1" != "--" ]; then old=(--vs "$1"); shift; fi
[ "${1:-}" = "--" ] && shift
mkdir -p "$out"
dmindex=${DMINDEX:-build/dmindex}
echo "=== $dmindex bench --workload ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-e,ycsb-f $*" | tee "$out/ycsb-af.txt"
"$dmindex" bench --workload ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-e,ycsb-f --json "$out/ycsb-af.json" "$@" 2>&1 |
  tee -a "$out/ycsb-af.txt"
python3 scripts/bench-tables.py "$out/ycsb-af.json" --csv "$out/exact.csv" "${old[@]}"
