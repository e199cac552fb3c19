#!/usr/bin/env bash
# Builds with ThreadSanitizer into ./build-tsan and runs the tests there. CI runs it after
# scripts/test.sh: concurrency is the heart of dmindex, so data races fail the build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/compiler-cache.sh
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDMINDEX_SANITIZE=thread "${compiler_cache[@]}" \
  | { grep -vP '^-- (?!Configuring incomplete)' || true; }
ninja -C build-tsan -j"$(nproc)"
cd build-tsan
# UCX's memory hooks (libucm) intercept madvise/mmap in a way TSan's runtime cannot follow.
export UCX_MEM_EVENTS=no
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../scripts/tsan.supp"
ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@" || { failed=$?; ../scripts/ctest-failures.sh .; exit "$failed"; }
