#!/usr/bin/env bash
# The figures of docs/results/rftree.md: RF-tree beside naive (the uncached B-link tree), Sherman and
# DEX on the embedded in-process cluster, in one bench run per configuration, as the RF-tree
# paper's Fig. 6-7 (Load A and YCSB A-E, zipfian and uniform, a thread sweep), Fig. 9 (tails,
# p99.99), the search-layer cache's refresh threshold and client memory. Writes
# OUT/<figure>[-<threads>].txt (the bench tables) and .json; scripts/rftree-tables.py turns
# them into docs/results/rftree.md's tables.
#   scripts/rftree-figures.sh OUT [figure...]   figures: zipf uniform threshold memory bytes
# Environment: KEYS (200000), OPS (100000 per run), THREAD_COUNTS ("1 2 4 8"), DESIGNS.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/rftree-figures.sh OUT [figure...]}
shift
figures=("${@:-zipf uniform threshold memory bytes}")
mkdir -p "$out"
dmindex=${DMINDEX:-build/dmindex}
keys=${KEYS:-200000}
ops=${OPS:-100000}
thread_counts=${THREAD_COUNTS:-1 2 4 8}
# Sherman's techniques on RF-tree (the paper: it "can apply Sherman's optimizations").
designs=${DESIGNS:-naive,sherman,rftree,rftree:lock=table:combine=on:hocl=on,dex}
workloads=load-a,ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-e
# Two compute nodes (the paper's two compute servers, each with its own cache; one with a
# single thread), 2 us round trips; ratios against Sherman.
common=(bench --baseline sherman --stall-timeout 0)
sized=(--keys "$keys" --ops "$ops")
nodes() { [ "$1" -ge 2 ] && echo 2 || echo 1; }
run() {
  local name=$1
  shift
  echo "=== $name: $dmindex ${common[*]} $*" | tee "$out/$name.txt"
  nice "$dmindex" "${common[@]}" --json "$out/$name.json" "$@" 2>&1 | grep -v '^\[' | tee -a "$out/$name.txt"
}
for f in ${figures[*]}; do
  case $f in
    # Fig. 6: every workload zipfian (0.99), D included (YCSB's D asks for "latest").
    zipf | uniform)
      dist=$([ "$f" = zipf ] && echo zipfian || echo uniform)
      for t in $thread_counts; do
        run "$f-$t" "${sized[@]}" --threads "$t" --compute-nodes "$(nodes "$t")" --design "$designs" --workload "$workloads" -p requestdistribution="$dist"
      done ;;
    # The refresh threshold on Load A, where the search layer changes all the time; with a
    # bandwidth model so that refresh bytes cost time.
    threshold)
      run threshold "${sized[@]}" --threads 4 --compute-nodes 2 --bandwidth-gbps 100 --cache-mb 16 --workload load-a \
        --design rftree:refresh_hops=off,rftree:refresh_hops=1,rftree:refresh_hops=4,rftree:refresh_hops=16,rftree:refresh_hops=64,rftree:refresh_hops=256,rftree:refresh_hops=1024,rftree,sherman ;;
    # Client memory at equal key counts: the default budget (10% of the records) and one that
    # holds every design's whole working set.
    memory)
      for k in 100000 400000 1600000; do
        run "memory-$k" --keys "$k" --ops 20000 --threads 2 --compute-nodes 2 --workload ycsb-c --design sherman,rftree,dex
        run "memory-$k-64mb" --keys "$k" --ops 20000 --threads 2 --compute-nodes 2 --cache-mb 64 --workload ycsb-c --design sherman,rftree,dex
      done ;;
    # Byte keys (issue 12): 32-byte keys, 8- and 1000-byte values.
    bytes)
      for v in 8 1000; do
        run "bytes-$v" "${sized[@]}" --threads 2 --compute-nodes 2 --key-format bytes --key-bytes 32 --value-bytes "$v" \
          --design naive,sherman,rftree --workload load-a,ycsb-a,ycsb-c,ycsb-e
      done ;;
    *) echo "unknown figure $f" >&2; exit 2 ;;
  esac
done
