#!/usr/bin/env bash
# Installs every Debian package dmindex needs to build, test, benchmark and plot (and no
# other: CMakeLists.txt looks for each library listed here).
# Idempotent: apt-get skips what is already there. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  ccache                          # compiler cache of the build scripts (scripts/compiler-cache.sh)
  libucx-dev                      # UCX fabric: memory-server processes, shm/TCP here, RDMA verbs on a cluster
  libssl-dev                      # libcrypto: HMAC-SHA256 of the memory servers' handshake (cluster key)
  libgtest-dev                    # tests
  libcli11-dev                    # command-line parsing of the dmindex tool
  libxxhash-dev                   # XXH3 check words of tree nodes (header-only use)
  librocksdb-dev liblmdb-dev      # IndeXY's on-disk index Y and the rocksdb/lmdb baselines (src/tiering)
  nlohmann-json3-dev              # JSON output of the bench driver
  libsimgrid-dev                  # the simulated cluster (src/sim/, docs/SIMULATION.md): SimGrid 3.32
  libabsl-dev                     # absl::btree_map behind the `absl` baseline design (docs/LOCAL.md)
  libbenchmark-dev                # bench/local_vs_absl: local's CPU per operation against abseil's
  linux-perf                      # profiling local and the designs (docs/LOCAL.md)
  python3 python3-matplotlib      # dmindex plot
  python3-venv python3-dev        # the Python package: a venv to pip install into, Python.h (install-python.sh)
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The YCSB oracle test runs YCSB 0.17.0 itself: Java, Maven and its jars (cached outside the build).
"$(dirname "$0")/install-ycsb.sh" >/dev/null
