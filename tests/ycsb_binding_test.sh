#!/usr/bin/env bash
# The YCSB binding with YCSB 0.17.0's real client (docs/YCSB_BINDING.md):
#   ycsb_binding_test.sh LAUNCHER embedded abc|def
#       workloads A-C or D-F, each a run phase (-t) on an embedded cluster after the binding's
#       preload, one design each (two halves: each ctest test stays near 7 s);
#   ycsb_binding_test.sh LAUNCHER memservers HOST:PORT HOST:PORT --cluster-key FILE
#       (scripts/with-memservers.sh appends these) workload A's load phase, then its run phase in
#       a second client process against the same memory servers.
# Each run must end with YCSB's own report showing every operation of the phase with
# Return=OK: no -FAILED line, no other return, and the OK counts adding up to the phase's count.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export DMINDEX_YCSB_LAUNCHER="$1"
mode="$2"
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/dmindex-ycsb-binding.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# ycsb PHASE EXPECTED_OPS WORKLOAD [ARG]...: one client run, its report checked.
ycsb() {
  local phase="$1" expected="$2" workload="$3"
  shift 3
  local out="$work/$phase-$workload-$passed-$failed.out"
  local status=0
  "$root/scripts/ycsb.sh" "$phase" -P "$root/bindings/ycsb/workloads/$workload" "$@" >"$out" 2>&1 || status=$?
  # The phase's operations: each type's count, a read-modify-write counted once (YCSB reports
  # its read and its update under READ and UPDATE too). Every one must have returned OK.
  local ok
  ok=$(awk -F', ' '$2 == "Return=OK" && $1 != "[CLEANUP]" { n += $3 }
                   $1 == "[READ-MODIFY-WRITE]" && $2 == "Operations" { n -= $3 } END { print n + 0 }' "$out")
  local bad
  bad=$(awk -F', ' '$2 == "Operations" { ops[$1] = $3 } $2 == "Return=OK" { okay[$1] = $3 }
                    END { for (t in ops) if (t != "[CLEANUP]" && t != "[READ-MODIFY-WRITE]" && okay[t] != ops[t])
                            printf "%s: %d of %d OK; ", t, okay[t], ops[t] }' "$out")
  bad+=$(grep -E '^\[[A-Z-]+\], Return=' "$out" | grep -v 'Return=OK' || true)
  bad+=$(grep -E '^\[[A-Z-]+-FAILED\]' "$out" || true)
  if [ "$status" -eq 0 ] && [ -z "$bad" ] && [ "$ok" -eq "$expected" ]; then
    passed=$((passed + 1))
    echo "ok: $phase $workload $* ($ok operations OK, $(grep -F '[OVERALL], Throughput' "$out" | cut -d' ' -f3) ops/s)"
  else
    failed=$((failed + 1))
    echo "FAILED: $phase $workload $*: exit $status, $ok of $expected operations OK${bad:+, }$bad" >&2
    tail -40 "$out" >&2
  fi
}

case "$mode" in
  embedded)
    case "$1" in
      abc)
        ycsb run 1000 workloada -p dmindex.design=sherman
        ycsb run 1000 workloadb -p dmindex.design=naive -threads 2
        ycsb run 1000 workloadc -p dmindex.design=dex ;;
      def)
        ycsb run 1000 workloadd -p dmindex.design=rftree
        ycsb run 1000 workloade -p dmindex.design=sherman -p dmindex.options=node_bytes=8192 -p dmindex.knobs=hocl=off
        ycsb run 1000 workloadf -p dmindex.design=xstore -target 5000 ;;
      *) echo "usage: $0 LAUNCHER embedded abc|def" >&2; exit 2 ;;
    esac
    ;;
  memservers)
    servers=()
    while [ $# -gt 0 ] && [ "$1" != "--cluster-key" ]; do servers+=("$1"); shift; done
    key="$2"
    list=$(IFS=,; echo "${servers[*]}")
    ycsb load 1000 workloada -p dmindex.memservers="$list" -p dmindex.cluster_key="$key"
    ycsb run 1000 workloada -p dmindex.memservers="$list" -p dmindex.cluster_key="$key"
    ;;
  *) echo "usage: $0 LAUNCHER embedded|memservers ..." >&2; exit 2 ;;
esac
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
