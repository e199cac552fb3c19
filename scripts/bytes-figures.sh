#!/usr/bin/env bash
# The byte-record figures of docs/results/byte-keys.md (issue 12): every design on YCSB A, C and E
# with binary and YCSB keys of 8..128 bytes and values of 8, 100 and 1000 bytes, side by side
# with `local` (the throughput baseline) in one bench run per record shape, and the u64 fast
# path for comparison. Writes OUT/<shape>.json and OUT/<shape>.txt; tables by
# scripts/bytes-tables.py OUT.
#   scripts/bytes-figures.sh OUT
# Environment: DESIGNS (default: every registered design), KEYS (100000), OPS (20000),
# WARMUP (10000), THREADS (2), KEY_BYTES ("8 16 32 64 128"), VALUE_BYTES ("8 100 1000"),
# STYLES ("binary ycsb"), DMINDEX (build/dmindex). Keys of 128 bytes and more run on 2 KiB
# nodes (the slotted layout needs 1408 bytes for a 128-byte key and a 128-byte inline value).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/bytes-figures.sh OUT}
mkdir -p "$out"
dmindex=${DMINDEX:-build/dmindex}
designs=${DESIGNS:-$("$dmindex" bench --list | sed -n 's/^designs: //p' | tr ' ' ',')}
common=(bench --design "$designs" --workload ycsb-a,ycsb-c,ycsb-e --keys "${KEYS:-100000}"
        --ops "${OPS:-20000}" --warmup-ops "${WARMUP:-10000}" --threads "${THREADS:-2}"
        --baseline local --stall-timeout 120)
run() {
  local name=$1
  shift
  echo "=== $name: $dmindex ${common[*]} $*" | tee "$out/$name.txt"
  nice "$dmindex" "${common[@]}" --json "$out/$name.json" "$@" 2>&1 | grep -v '^\[' | tee -a "$out/$name.txt"
}
run u64
for style in ${STYLES:-binary ycsb}; do
  for k in ${KEY_BYTES:-8 16 32 64 128}; do
    for v in ${VALUE_BYTES:-8 100 1000}; do
      node=$(( k >= 128 ? 2048 : 1024 ))
      run "bytes-$style-k$k-v$v" --key-format bytes --key-style "$style" --key-bytes "$k" --value-bytes "$v" \
        --node-size "$node"
    done
  done
done
