#!/usr/bin/env bash
# The IndeXY figures of docs/results/indexy.md, scaled to a 2-core machine: the paper's ratios (a memory
# limit of about 40% of the raw data; X holds ~14% of the keys), its four systems, direct I/O
# for every store as the authors' code runs RocksDB and LeanStore runs its B-tree.
#   scripts/indexy-figures.sh [OUT_DIR] [SECTION...]
#     sections: fig3 cpu table2 fig5 fig8 fig8ycsb fig8warm fig7 fig7clustered policy
# Writes one JSON (dmindex bench --json) and one text report per run into OUT_DIR (default
# build/indexy-figures), then the plots of the timelines. KEYS and LIMIT override the scale,
# FIG5_PCTS the read working sets of fig5 (percent of the records), FIG8_DESIGNS fig8's and
# fig8ycsb's systems, FIG8_WORKLOADS their workloads, DM the dmindex binary (a copy keeps a long
# run measuring one build while the checkout is rebuilt).
# Zipfian requests: the paper's bench ranks the records themselves and maps rank i to the i-th
# key of a random permutation (zipfianranks=records, scattered hot keys); YCSB's scrambled
# zipfian (fig8ycsb) draws ranks over 10^10 items and is much flatter at theta 0.7. Each run
# reports the hit ratios an oracle, an LRU and a random-eviction cache of X's size would get.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/indexy-figures}
shift || true
SECTIONS=${*:-fig3 cpu table2 fig5 fig8 fig8ycsb fig8warm fig7 fig7clustered policy}
KEYS=${KEYS:-1000000}
LIMIT=${LIMIT:-6M}
DM=${DM:-build/dmindex}
FIG5_PCTS=${FIG5_PCTS:-1 5 25 50}
mkdir -p "$OUT"

# The paper's systems (Table I). Y's own buffers are ~1/6 of X's memory (paper: 0.5 of 5 GB);
# RocksDB's index and filter blocks stay beside its block cache (RocksDB's default: at 1 MB the
# filters of a million keys do not fit the cache), counted in its memory.
ART_LSM="indexy:x=art:y=rocksdb:y_buffer_mb=1:y_cache_mb=1:y_direct=on:y_meta_cached=off"
ART_B="indexy:x=art:y=btree:y_cache_mb=1:y_direct=on"
BB="btree-disk:direct=on"
ROCKS="rocksdb:y_direct=on:y_meta_cached=off"
SYSTEMS="$ART_LSM,$ART_B,$BB,$ROCKS"
# Fig. 8 runs every X/Y pair beside the three stores alone (LMDB has no cache to size: its pages
# live in the OS page cache, which nothing bounds short of a cgroup).
B_LSM="indexy:x=btree:y=rocksdb:y_buffer_mb=1:y_cache_mb=1:y_direct=on:y_meta_cached=off"
B_B="indexy:x=btree:y=btree:y_cache_mb=1:y_direct=on"
ALL_PAIRS="$ART_LSM,$ART_B,indexy:x=art:y=lmdb,$B_LSM,$B_B,indexy:x=btree:y=lmdb,$BB,$ROCKS,lmdb"
FIG8_DESIGNS=${FIG8_DESIGNS:-$ALL_PAIRS}
FIG8_WORKLOADS=${FIG8_WORKLOADS:-ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-e,ycsb-f}

run() {  # run NAME bench-args...
  local name=$1
  shift
  echo "== $name: $DM bench $*" | tee "$OUT/$name.txt"
  "$DM" bench "$@" --json "$OUT/$name.json" --progress-s 30 >> "$OUT/$name.txt"
}

for section in $SECTIONS; do
  case $section in
    fig3)  # inserts past the limit, random and sequential order, throughput and memory over time
      run fig3-random --design "$SYSTEMS" --workload load-a --keys "$KEYS" --memory-limit "$LIMIT" --timeline-ms 1000
      run fig3-sequential --design "$SYSTEMS" --workload load-a --keys "$KEYS" --memory-limit "$LIMIT" \
        --timeline-ms 1000 -p insertorder=ordered
      "$DM" plot "$OUT/fig3-random.json" --out "$OUT/fig3-random.png" --title "IndeXY Fig. 3(a,b): random inserts"
      "$DM" plot "$OUT/fig3-sequential.json" --out "$OUT/fig3-sequential.png" --title "IndeXY Fig. 3(c,d): sequential inserts"
      ;;
    table2)  # random-insert throughput over the whole run by page size
      for kb in 4 8 16; do
        run "table2-$kb" --design "btree-disk:direct=on:page_kb=$kb,indexy:x=art:y=btree:y_cache_mb=1:y_direct=on:y_page_kb=$kb" \
          --workload load-a --keys "$((KEYS / 2))" --memory-limit "$LIMIT"
      done
      ;;
    fig5)  # uniform reads over working sets of a growing share of the loaded records
      for pct in $FIG5_PCTS; do
        frac=$(awk "BEGIN { print $pct / 100 }")
        warm=$(awk "BEGIN { print int(2 * $KEYS * $pct / 100) + 20000 }")
        run "fig5-$pct" --design "$SYSTEMS" --workload ycsb-c --keys "$KEYS" --memory-limit "$LIMIT" \
          -p requestdistribution=hotspot -p hotspotdatafraction="$frac" -p hotspotopnfraction=1 \
          --warmup-ops "$warm" --duration 3
      done
      ;;
    fig8|fig8ycsb)  # YCSB A-F at zipfian 0.7 after the limit: the paper's zipfian, or YCSB's
      ranks=records
      [ "$section" = fig8ycsb ] && ranks=ycsb
      run "$section" --design "$FIG8_DESIGNS" --workload "$FIG8_WORKLOADS" --keys "$KEYS" \
        --memory-limit "$LIMIT" --theta 0.7 -p zipfianranks=$ranks --warmup-ops "$((KEYS / 5))" --duration 2
      ;;
    cpu)  # Fig. 3's random inserts, one system per process: CPU seconds (all its threads) per insert
      for pair in "art-lsm=$ART_LSM" "bb=$BB"; do
        name="cpu-${pair%%=*}" sys="${pair#*=}"
        echo "== $name: $DM bench --design $sys --workload load-a --keys $KEYS --memory-limit $LIMIT" | tee "$OUT/$name.txt"
        /usr/bin/time -f "wall %e s, user %U s, sys %S s" "$DM" bench --design "$sys" --workload load-a --keys "$KEYS" \
          --memory-limit "$LIMIT" --json "$OUT/$name.json" >> "$OUT/$name.txt" 2>&1
        tail -1 "$OUT/$name.txt"
      done
      ;;
    fig8warm)  # why fig8's X hits no more than its share of keys: warm-up length and sampled counters
      run fig8-warm --design "$ART_LSM,$ART_LSM:sample=1,$BB" --workload ycsb-c --keys "$KEYS" \
        --memory-limit "$LIMIT" --theta 0.7 --warmup-ops "$((KEYS * 2))" --duration 3
      ;;
    fig7|fig7clustered)  # a shifting working set: 4 phases, access units of 1, 5, 10 consecutive
      # keys; zipfian THETA7 (the paper's 0.7). As in the paper, one phase of warm-up reads (in the
      # distribution before the first shift), then 4 measured phases that each begin with a
      # shift. fig7: the paper's scattered hot keys; fig7clustered: hot keys side by side in key
      # order (zipfianranks=clustered, fixed-width ordered keys), unit 1 only.
      units="1 5 10" extra=()
      if [ "$section" = fig7clustered ]; then units=1 extra=(-p zipfianranks=clustered -p zeropadding=7); fi
      for unit in $units; do
        name="$section-unit$unit"
        run "$name" --design "$ART_B,$BB" --workload shift-c --keys "$KEYS" --memory-limit "$LIMIT" \
          -p insertorder=ordered -p readunit="$unit" "${extra[@]}" --ops 800000 --warmup-ops 200000 \
          --timeline-ms 500 --theta "${THETA7:-0.7}"
        "$DM" plot "$OUT/$name.json" --out "$OUT/$name.png" \
          --title "IndeXY Fig. 7: shifting working set, access unit $unit"
      done
      ;;
    policy)  # release by density (the paper) and by clock (the authors' code)
      for pct in 5 25; do
        frac=$(awk "BEGIN { print $pct / 100 }")
        warm=$(awk "BEGIN { print int(3 * $KEYS * $pct / 100) + 20000 }")
        run "policy-$pct" --design "$ART_LSM:release=density,$ART_LSM:release=clock" --workload ycsb-c \
          --keys "$KEYS" --memory-limit "$LIMIT" -p requestdistribution=hotspot -p hotspotdatafraction="$frac" \
          -p hotspotopnfraction=1 --warmup-ops "$warm" --duration 3
      done
      run policy-ycsb-a --design "$ART_LSM:release=density,$ART_LSM:release=clock" --workload ycsb-a \
        --keys "$KEYS" --memory-limit "$LIMIT" --theta 0.7 --warmup-ops 200000 --duration 3
      ;;
    *) echo "unknown section $section" >&2; exit 2 ;;
  esac
done
