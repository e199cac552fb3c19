#!/usr/bin/env bash
# Newcomer's command 2: install dependencies, build, and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
scripts/install-python.sh  # the Python package (pip install .), tested by ctest's Python.Package
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600 "$@" || { failed=$?; ../scripts/ctest-failures.sh .; exit "$failed"; }
