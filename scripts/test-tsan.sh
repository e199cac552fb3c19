#!/usr/bin/env bash
# Builds with ThreadSanitizer into ./build-tsan and runs the tests there. CI runs it after
# scripts/test.sh: concurrency is the heart of dmindex, so data races fail the build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/compiler-cache.sh
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDMINDEX_SANITIZE=thread "${compiler_cache[@]}" \
  | { grep -vP '^-- (?!Configuring incomplete)' || true; }
# With a regular expression (-R) and a Release tree whose tests were discovered (scripts/test.sh
# ran), only the binaries those tests run are built: CI's pass is the concurrency list, whose
# binaries are about two thirds of the test binaries (scripts/ctest-targets.py).
targets=()
args=("$@")
for i in "${!args[@]}"; do
  if [ "${args[$i]}" = "-R" ] && [ -f build/CTestTestfile.cmake ]; then
    mapfile -t targets < <(scripts/ctest-targets.py build "${args[$((i + 1))]}")
  fi
done
ninja -C build-tsan -j"$(nproc)" "${targets[@]}"
cd build-tsan
# UCX's memory hooks (libucm) intercept madvise/mmap in a way TSan's runtime cannot follow.
export UCX_MEM_EVENTS=no
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../scripts/tsan.supp"
ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@" || { failed=$?; ../scripts/ctest-failures.sh .; exit "$failed"; }
