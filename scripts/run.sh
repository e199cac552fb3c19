#!/usr/bin/env bash
# Newcomer's command 1: install dependencies, build, and run the main job on the embedded
# (in-process) cluster. Extra arguments are passed to the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --target dmindex  # the command only, not the tests
exec build/dmindex bench "$@"
