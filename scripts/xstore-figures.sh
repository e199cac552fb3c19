#!/usr/bin/env bash
# The figures of docs/results/xstore.md: one `dmindex bench` run per figure, side by side with sherman
# and dex where the issue asks for it. Writes OUT/<figure>.txt and OUT/<figure>.json.
#   scripts/xstore-figures.sh OUT
# Environment: DMINDEX (build/dmindex), KEYS (200000), OPS (20000), WARMUP (5000),
# BIG_KEYS (1000000, the client-memory figure), ONLY (a figure name or glob, e.g. 'sim-*': run
# only those).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/xstore-figures.sh OUT}
mkdir -p "$out"
dmindex=${DMINDEX:-build/dmindex}
size=(--keys "${KEYS:-200000}" --warmup-ops "${WARMUP:-5000}" --ops "${OPS:-20000}")
big=(--keys "${BIG_KEYS:-1000000}" --warmup-ops 10000 --ops 40000 --pool-size 1G)
run() {
  local name=$1
  shift
  [ -n "${ONLY:-}" ] && [[ "$name" != $ONLY ]] && return 0
  echo "=== $name: dmindex $*" | tee "$out/$name.txt"
  nice "$dmindex" "$@" --json "$out/$name.json" 2>&1 | grep -v '^\[' | tee -a "$out/$name.txt"
}
both=(--design xstore,xstore:slot_read=on,sherman,dex --workload ycsb-c,ycsb-e)
run zipfian-ce bench "${both[@]}" -p requestdistribution=zipfian "${size[@]}"
run uniform-ce bench "${both[@]}" -p requestdistribution=uniform "${size[@]}"
# Client memory: XStore's models and tables against Sherman's and DEX's caches (default 10 % of
# the records, then 0.1-0.5 MB), and XStore's knobs that trade leaves per lookup for memory.
run memory-1m bench "${both[@]}" -p requestdistribution=uniform "${big[@]}"
for mb in 0.1 0.25 0.5; do
  run "memory-1m-cache$mb" bench --design sherman,dex --workload ycsb-c -p requestdistribution=uniform "${big[@]}" --cache-mb "$mb"
done
run memory-1m-xstore-knobs bench --design xstore,xstore:keys_per_model=400,xstore:leaf_slots=32,xstore:leaf_slots=32:keys_per_model=400,xstore:leaf_slots=32:keys_per_model=800 --workload ycsb-c \
  -p requestdistribution=uniform "${big[@]}"
# Slot reads against sub-model size (bytes per lookup and client memory).
run slot-read-sweep bench --design xstore:slot_read=on,xstore:slot_read=on:keys_per_model=100,xstore:slot_read=on:keys_per_model=50,xstore:slot_read=on:keys_per_model=20,xstore:slot_read=on:keys_per_model=8 \
  --workload ycsb-c -p requestdistribution=uniform "${size[@]}"
# YCSB D: splits invalidate predictions; speculation follows the sibling link instead of an RPC.
# A small index and a long run, so that the 5 % inserts split many of its leaves.
run ycsb-d bench --design xstore:speculate=0,xstore,xstore:retrain=off:speculate=0,xstore:retrain=off,sherman,dex \
  --workload ycsb-d --keys 20000 --warmup-ops 0 --ops 100000
# Insert-heavy timeline (Fig. 14): half lookups, half inserts of new keys, with retraining and
# expansions (two, at 150 keys per sub-model) and without.
run timeline bench --design xstore:keys_per_model=100:expand_at=150,xstore:keys_per_model=100:retrain=off:expand_at=off \
  --workload ycsb-c -p readproportion=0.5 -p insertproportion=0.5 -p requestdistribution=uniform \
  --keys 50000 --warmup-ops 0 --ops 200000 --timeline-ms 250
# YCSB A with 1, 2 and 4 RPC handler threads per memory node (8 client threads).
for t in 1 2 4; do
  run "ycsb-a-rpc$t" bench --design xstore,sherman --workload ycsb-a --rpc-threads "$t" --threads 8 "${size[@]}"
done
# The same on the simulated DEX testbed (docs/SIMULATION.md) with memory servers of 1, 2 and 4
# cores (the platform's 4, edited), 144 client threads, modelled compute: there the RPC
# handlers have cores of their own, and XStore's writes queue for them. XStore's cycles per
# segment (its handlers: a server-side tree write) are measured first, as the shared
# calibration's designs were, and added to a copy of it.
run sim-calibrate-xstore bench --fabric sim --compute measured --threads 4 --keys 100000 --warmup-ops 20000 \
  --ops 60000 --stall-timeout 0 --design xstore --workload ycsb-a --calibrate-out "$out/xstore-calibration.txt"
{ cat platforms/compute-calibration.txt; grep '^design xstore ' "$out/xstore-calibration.txt"; } > "$out/calibration.txt"
for c in 1 2 4; do
  sed "s/core=\"4\"/core=\"$c\"/" platforms/dex-vldb24.xml > "$out/dex-vldb24-ms$c.xml"
  run "sim-ycsb-a-ms$c" bench --fabric sim --platform "$out/dex-vldb24-ms$c.xml" --compute modelled \
    --calibration "$out/calibration.txt" --design xstore,sherman --workload ycsb-a --keys 100000 \
    --warmup-ops 20000 --ops 100000 --threads 144
done
# Table 2's key sets.
for d in hashed sequential noised-linear lognormal; do
  run "keys-$d" bench "${both[@]/ycsb-c,ycsb-e/ycsb-c}" --key-dist "$d" -p requestdistribution=uniform "${size[@]}"
done
