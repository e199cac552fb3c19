#!/usr/bin/env bash
# The macro figures of docs/results/simulation.md: DEX vs Sherman and P-Sherman on the simulated DEX
# testbed (platforms/dex-vldb24.xml: 4 x 36 client threads, 4 memory servers of 4 cores,
# ConnectX-5), cache 8% of the data, as the DEX paper's Table 2, Fig. 6 (skewed), Fig. 7
# (uniform) and Fig. 11 (threads 36..144). Modelled compute unless COMPUTE says otherwise.
# Writes OUT/<figure>.txt (the bench tables) and OUT/<figure>.json.
#   scripts/sim-figures.sh OUT [figure...]      figures: skewed uniform threads measured
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/sim-figures.sh OUT [figure...]}
shift
figures=("${@:-skewed uniform threads measured}")
mkdir -p "$out"
dmindex=${DMINDEX:-build/dmindex}
keys=${KEYS:-20000000}
warmup=${WARMUP:-500000}
ops=${OPS:-300000}
compute=${COMPUTE:-modelled}
# P-Sherman: Sherman with DEX's logical partitioning (docs/DEX.md): DEX's tree with leaves never
# cached and no offloading.
designs=${DESIGNS:-sherman,dex,dex:offload=off,dex:admission=0:offload=off}
thread_designs=${THREAD_DESIGNS:-sherman,dex,dex:admission=0:offload=off}
thread_counts=${THREAD_COUNTS:-36 72 108 144}
common=(bench --fabric sim --platform platforms/dex-vldb24.xml --keys "$keys" --cache-pct 8
        --warmup-ops "$warmup" --ops "$ops" --pool-size 4G --stall-timeout 0)
run() {
  local name=$1
  shift
  echo "=== $name: $dmindex ${common[*]} $*" | tee "$out/$name.txt"
  /usr/bin/time -f "=== real %e s, peak %M KB" nice "$dmindex" "${common[@]}" --json "$out/$name.json" "$@" 2>&1 |
    grep -v '^\[' | tee -a "$out/$name.txt"
}
for f in ${figures[*]}; do
  case $f in
    skewed) run skewed --compute "$compute" --design "$designs" --workload dex-ro,dex-ri,dex-wi,dex-si ;;
    uniform) run uniform --compute "$compute" --theta 0 --design "$designs" --workload dex-ro,dex-ri,dex-wi,dex-si ;;
    threads)
      for t in $thread_counts; do
        run "threads-$t" --compute "$compute" --threads "$t" --design "$thread_designs" --workload dex-ri
      done ;;
    measured) run measured --compute measured --design "$designs" --workload dex-ro,dex-wi ;;
    *) echo "unknown figure $f" >&2; exit 2 ;;
  esac
done
