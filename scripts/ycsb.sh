#!/usr/bin/env bash
# YCSB 0.17.0's client on dmindex, as YCSB's bin/ycsb runs a binding (docs/YCSB_BINDING.md):
#   scripts/ycsb.sh load|run -P WORKLOAD [-p dmindex.design=sherman] [-p NAME=VALUE]... [-threads N] [-target OPS] [-s]
# Installs YCSB and builds the binding's jar if needed (scripts/install-ycsb.sh), then runs the
# dmindex-ycsb launcher (build/bindings/ycsb/dmindex-ycsb, or DMINDEX_YCSB_LAUNCHER) with
# YCSB's jars and the binding's on the class path.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
launcher="${DMINDEX_YCSB_LAUNCHER:-$root/build/bindings/ycsb/dmindex-ycsb}"
if [ ! -x "$launcher" ]; then
  echo "ycsb.sh: no launcher at $launcher: scripts/build.sh --target dmindex-ycsb" >&2
  exit 1
fi
lib=$("$root/scripts/install-ycsb.sh" | tail -1)
classpath="$(find "$lib" -name '*.jar' | sort | paste -sd:):$root/bindings/ycsb/target/dmindex-ycsb-binding.jar"
exec "$launcher" --classpath "$classpath" "$@"
