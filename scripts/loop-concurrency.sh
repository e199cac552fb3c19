#!/usr/bin/env bash
# Repeats the concurrency list (.ci/concurrency-tests) in one build tree, one whole pass at a
# time, until a pass fails, N passes are done, or the file STOP appears in the log's folder.
# Appends one line a pass to LOG (commit, duration, ctest's summary); a failed pass's ctest
# output is kept as LOG.fail.<pass>, with its failures' reasons at the end.
#   scripts/loop-concurrency.sh [--build DIR] [--jobs J] [--passes N] LOG
# Whole passes rather than `ctest --repeat until-fail:N`, which runs each test N times before
# it starts the next: stopped early, it leaves the last tests with no run at all.
# The brief's count is of passes under load: run a second copy in a second clone's build tree
# (not the same tree: both would write its Testing/ folder), e.g. one copy with --jobs 1 for
# each core (docs/CI.md "Looping").
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build jobs=1 passes=0
while [ $# -gt 1 ]; do
  case "$1" in
    --build) build=$(cd "$2" 2>/dev/null && pwd) || { echo "loop-concurrency: no folder $2" >&2; exit 2; }; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    *) echo "loop-concurrency: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--build DIR] [--jobs J] [--passes N] LOG" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ && "$passes" =~ ^[0-9]+$ ]] || { echo "loop-concurrency: --jobs and --passes take a number" >&2; exit 2; }
log=$(realpath -m "$1")
[ -f "$build/CMakeCache.txt" ] || { echo "loop-concurrency: $build is not a build tree (scripts/build.sh)" >&2; exit 2; }
# The list and the commit are those of the sources the tree was built from.
repo=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
regex=$(grep -v '^#' "$repo/.ci/concurrency-tests" | paste -sd'|')
# A count names a commit, so the tree must hold that commit's binaries: bring it up to date
# (nothing to do when it is), and say so in the log when the sources differ from the commit.
ninja -C "$build" > /dev/null || { echo "loop-concurrency: $build does not build" >&2; exit 2; }
commit=$(git -C "$repo" rev-parse --short HEAD)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] || commit="$commit with uncommitted changes"
mkdir -p "$(dirname "$log")"
stop=$(dirname "$log")/STOP
echo "$(date -Is) start $commit in $build, jobs $jobs" >> "$log"
pass=0
while [ ! -e "$stop" ] && { [ "$passes" -eq 0 ] || [ "$pass" -lt "$passes" ]; }; do
  pass=$((pass + 1)) started=$SECONDS
  if (cd "$build" && ctest -j"$jobs" --timeout 600 -R "$regex") > "$log.pass" 2>&1; then
    echo "$(date -Is) pass $pass ok $((SECONDS - started)) s: $(grep -o '[0-9]*% tests passed.*' "$log.pass")" >> "$log"
  else
    "$repo/scripts/ctest-failures.sh" "$build" >> "$log.pass"
    mv "$log.pass" "$log.fail.$pass"
    echo "$(date -Is) pass $pass FAILED after $((SECONDS - started)) s: $log.fail.$pass" >> "$log"
    exit 1
  fi
done
rm -f "$log.pass"
