#!/usr/bin/env bash
# Configures and builds dmindex (Release, Ninja) into ./build.
#   scripts/build.sh [--target NAME]... [CMAKE_ARG]...
# --target builds only that target and what it needs (e.g. dmindex, the command); without
# one, everything (library, command, layering checks, tests, examples). Other arguments go
# to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
cmake_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=("$2"); shift 2 ;;
    *) cmake_args+=("$1"); shift ;;
  esac
done
# cmake's "-- " status lines are dropped; its warnings and errors (stderr), and the line
# saying the configuration is incomplete, stay visible.
source scripts/compiler-cache.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${compiler_cache[@]}" "${cmake_args[@]}" \
  | { grep -vP '^-- (?!Configuring incomplete)' || true; }
ninja -C build -j"$(nproc)" "${targets[@]}"
