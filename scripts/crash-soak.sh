#!/usr/bin/env bash
# The crash soak, for as long as you give it (docs/FAILURES.md, "The crash soak"): runs
# `dmindex soak` in batches of trials with consecutive seeds until the time is up, appending
# every trial's line to a log, and ends with the count of trials run and failed. A failed
# trial's lines in the log name its seed and the command that replays it; its directory
# (pools, journals, logs) is kept.
#   scripts/crash-soak.sh [--hours H] [--seed S] [--batch N] [--log FILE] [-- SOAK_FLAGS...]
# Defaults: 8 hours, a seed from the clock, batches of 50, crash-soak.log; SOAK_FLAGS go to
# every `dmindex soak` (e.g. --seconds 5 --designs sherman,dex --transport tcp).
# DMINDEX names the dmindex executable (default build/dmindex).
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${DMINDEX:-build/dmindex}
hours=8 seed=$(( $(date +%s) % 100000 * 1000 )) batch=50 log=crash-soak.log
while [ $# -gt 0 ]; do
  case "$1" in
    --hours) hours=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "crash-soak.sh: unknown argument $1 (flags for dmindex soak go after --)" >&2; exit 2 ;;
  esac
done
[ -x "$tool" ] || { echo "crash-soak.sh: $tool is not built (scripts/build.sh --target dmindex)" >&2; exit 2; }
end=$(( SECONDS + $(awk -v h="$hours" 'BEGIN { printf "%d", h * 3600 }') ))
echo "=== crash soak from seed $seed for $hours h, batches of $batch: $tool soak $*" | tee -a "$log"
batches=0
while [ $SECONDS -lt $end ]; do
  "$tool" soak --trials "$batch" --seed "$seed" "$@" >>"$log" 2>&1 || true
  seed=$(( seed + batch )) batches=$(( batches + 1 ))
done
trials=$(grep -c '^trial ' "$log" || true)
failed=$(grep -c '^trial .*: FAILED' "$log" || true)
echo "=== crash soak: $trials trial(s) in $log, $failed failed (this run: $batches batch(es))" | tee -a "$log"
[ "$failed" -eq 0 ]
