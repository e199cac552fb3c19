#!/usr/bin/env bash
# CI's seed sweep of the correctness harness on the simulated cluster (docs/SIMULATION.md):
# `dmindex check --fabric sim` (modelled compute, so a run is a function of its seed) over
# SEEDS seeds, the designs taking turns. The first failure prints the command that reproduces
# it exactly, and the sweep stops with its exit status.
#   scripts/sim-seed-sweep.sh [DMINDEX] [SEEDS] [FIRST_SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
dmindex=${1:-build/dmindex}
seeds=${2:-36}
first=${3:-1}
# indexy with an X limit of 4 KiB: release, pre-cleaning and admission on the simulated
# threads, its background thread among them; Y in memory keeps the sweep off the disk (Y on
# disk replays as exactly: a store call is one step of a simulated thread).
designs=(sherman dex naive local indexy:y=mem:limit_mb=0.00390625)
started=$SECONDS
for ((seed = first; seed < first + seeds; ++seed)); do
  design=${designs[$(( seed % ${#designs[@]} ))]}
  cmd=("$dmindex" check --fabric sim --design "$design" --threads 64 --ops 400 --rounds 2 --seed "$seed")
  if ! out=$("${cmd[@]}" 2>&1); then
    status=$?
    echo "$out" | tail -40
    echo "sim-seed-sweep: FAILED at seed $seed; reproduce with: ${cmd[*]}"
    exit $status
  fi
  echo "seed $seed $design: ${out##*: }"
done
echo "sim-seed-sweep: $seeds seeds passed in $(( SECONDS - started )) s"
