#!/usr/bin/env bash
# Builds with AddressSanitizer + UndefinedBehaviorSanitizer into ./build-asan and runs the
# tests there. CI runs it beside scripts/test-tsan.sh: use after free, overflows, leaks and
# undefined behaviour fail the build. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/compiler-cache.sh
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDMINDEX_SANITIZE=address,undefined "${compiler_cache[@]}" \
  | { grep -vP '^-- (?!Configuring incomplete)' || true; }
ninja -C build-asan -j"$(nproc)"
cd build-asan
# UCX's memory hooks (libucm) patch mmap/munmap/brk, which ASan intercepts too.
export UCX_MEM_EVENTS=no
export ASAN_OPTIONS="abort_on_error=1 detect_leaks=1 strict_string_checks=1 detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@" || { failed=$?; ../scripts/ctest-failures.sh .; exit "$failed"; }
