#!/usr/bin/env bash
# Runs a command against two fresh memory servers on this machine, then stops them:
#   scripts/with-memservers.sh DMINDEX_TOOL COMMAND [ARG]...
# Starts two `DMINDEX_TOOL memserver` processes (shared memory, 256 MiB pools) on free ports
# (port 0: each prints the address it listens on) with a new cluster key of their own, and
# runs COMMAND ARG... HOST:PORT HOST:PORT --cluster-key FILE. Exits with COMMAND's status.
# Used by scripts/test-install.sh and the Examples.MemoryServers test.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 DMINDEX_TOOL COMMAND [ARG]..." >&2
  exit 2
fi
tool="$1"
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/dmindex-memservers.XXXXXX")
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop EXIT

# A key file of this run only (an explicit --cluster-key must exist; mode 0600 or it is refused).
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$work/cluster-key")

addresses=()
for i in 0 1; do
  # The log exists before the server starts: a background job opens its redirect only once it
  # runs, and the wait below, reading a log not yet there, would end the script (set -e; the
  # YcsbBinding.MemoryServers failure in 0.06 s on a loaded machine).
  : > "$work/memserver$i.log"
  "$tool" memserver --listen 127.0.0.1:0 --size 256M --cluster-key "$work/cluster-key" \
    >> "$work/memserver$i.log" 2>&1 &
  pids+=($!)
done
for i in 0 1; do
  # Wait for "dmindex memserver listening on HOST:PORT" (it listens before it prints).
  for _ in $(seq 300); do
    address=$(sed -n 's/^dmindex memserver listening on //p' "$work/memserver$i.log")
    [ -n "$address" ] && break
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
      echo "with-memservers: memory server $i exited:" >&2
      cat "$work/memserver$i.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  if [ -z "$address" ]; then
    echo "with-memservers: memory server $i printed no address within 30 s:" >&2
    cat "$work/memserver$i.log" >&2
    exit 1
  fi
  addresses+=("$address")
done

status=0
"$@" "${addresses[@]}" --cluster-key "$work/cluster-key" || status=$?
if [ "$status" -ne 0 ]; then
  for i in 0 1; do echo "--- memory server $i:" >&2; cat "$work/memserver$i.log" >&2; done
fi
exit "$status"
