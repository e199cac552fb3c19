#!/usr/bin/env bash
# Writes the modelled compute's calibration (docs/SIMULATION.md, "Calibration"): RUNS measured
# runs of the calibration bench, merged kind by kind into the median of the runs' means, so
# one run disturbed by the machine (a busy neighbour, the host taking the core) does not set a
# design's costs. Run it on a machine otherwise idle. The merge names on stderr every mean
# whose runs were more than 25% apart.
#   scripts/calibrate-compute.sh [OUT] [RUNS]      (default: platforms/compute-calibration.txt 3)
# Environment: DMINDEX (build/dmindex); DESIGNS, WORKLOADS (the shipped file's lists) to
# calibrate a label of one's own, e.g. DESIGNS=dex:cost_factor=1 into a file beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-platforms/compute-calibration.txt}
runs=${2:-3}
dmindex=${DMINDEX:-build/dmindex}
keep=$(mktemp -d)
trap 'rm -rf "$keep"' EXIT
for ((i = 1; i <= runs; ++i)); do
  echo "calibration run $i of $runs" >&2
  "$dmindex" bench --fabric sim --compute measured --threads 4 --keys 1000000 --cache-pct 8 \
    --warmup-ops 40000 --ops 60000 --stall-timeout 0 \
    --design "${DESIGNS:-sherman,dex,dex:offload=off,dex:admission=0:offload=off,naive}" \
    --workload "${WORKLOADS:-dex-ro,dex-ri,dex-wi,dex-si}" --calibrate-out "$keep/run$i.txt" > "$keep/run$i.log"
done
python3 scripts/calibration-median.py "$keep"/run*.txt > "$keep/merged.txt"
mv "$keep/merged.txt" "$out"
echo "wrote $out (median of $runs runs)" >&2
