#!/usr/bin/env bash
# The YCSB binding against `dmindex bench` on one workload, in one sitting (docs/YCSB_BINDING.md):
#   scripts/with-memservers.sh build/dmindex scripts/ycsb-vs-bench.sh [DESIGN [RECORDS [OPERATIONS]]]
# (with-memservers.sh appends the servers' HOST:PORT HOST:PORT --cluster-key FILE). Runs YCSB's
# load and run phases of workload A through the binding, then the bench on the same workload,
# servers and index options (1 KiB nodes, byte keys of up to 24 bytes, 64 MB cache, 1 thread),
# and prints YCSB's summary lines, the binding's verbs per operation and the bench's table.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
design="${1:-sherman}" records="${2:-50000}" operations="${3:-100000}"
shift $(( $# < 3 ? $# : 3 ))
servers=()
while [ $# -gt 0 ] && [ "$1" != "--cluster-key" ]; do servers+=("$1"); shift; done
if [ ${#servers[@]} -eq 0 ] || [ $# -ne 2 ]; then
  echo "usage: scripts/with-memservers.sh build/dmindex $0 [DESIGN [RECORDS [OPERATIONS]]]" >&2
  exit 2
fi
key="$2"
list=$(IFS=,; echo "${servers[*]}")
workload="$root/bindings/ycsb/workloads/workloada"
ycsb_args=(-P "$workload" -p recordcount="$records" -p operationcount="$operations" -p dmindex.design="$design"
           -p dmindex.options=node_bytes=1024,max_key_bytes=24,cache_bytes=67108864
           -p dmindex.memservers="$list" -p dmindex.cluster_key="$key")
summary='^\[(OVERALL|INSERT|READ|UPDATE)\], (Operations|Throughput|AverageLatency|Return)|^dmindex:'
echo "== YCSB load (the binding)"
"$root/scripts/ycsb.sh" load "${ycsb_args[@]}" 2>&1 | grep -E "$summary"
echo "== YCSB run (the binding)"
"$root/scripts/ycsb.sh" run "${ycsb_args[@]}" 2>&1 | grep -E "$summary"
echo "== dmindex bench"
"$root/build/dmindex" bench -P "$workload" --keys "$records" --ops "$operations" --threads 1 --design "$design" \
  --key-format bytes --node-size 1024 --cache-mb 64 --memservers "$list" --cluster-key "$key" 2>&1 | grep -v warning
