#!/usr/bin/env bash
# Builds and installs the Python package `dmindex` (docs/PYTHON.md) the way a user does,
# `pip install .`, into a virtual environment: build/python-venv (Debian's python3 refuses
# `pip install` outside one: PEP 668, "externally-managed-environment"). Also installs what
# the package's tests use there (pytest, pandas). The CMake build of the extension is kept in
# build/python/ (pyproject.toml), so a second run rebuilds only what changed; compiles go
# through ccache like scripts/build.sh's. A user's plain `pip install .` compiles the library
# too; this script links the one scripts/build.sh makes.
#   scripts/install-python.sh          then: build/python-venv/bin/python -c 'import dmindex'
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/python-venv
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"  # Debian's python3 (install-deps.sh: python3-venv, python3-dev)
fi
# The build backend and the tests' libraries, from PyPI. Installed once into the venv, and the
# package built without pip's build isolation, so an install does not fetch them again.
"$venv/bin/pip" install -q --disable-pip-version-check \
  'scikit-build-core>=0.10' 'nanobind>=2.0' pytest pandas
# The library from the ordinary build (build/, position-independent: cmake/DmindexLayer.cmake),
# built here if it is not yet; the package's build then compiles the binding's sources only and
# links build/'s archives (DMINDEX_PREBUILT_DIR, CMakeLists.txt), instead of compiling every
# layer a second time (31 min on two cores with nothing cached: docs/CI.md).
started=$SECONDS
# The layers of dmindex::dmindex, which the extension links: dmindex::core's, the UCX fabric's
# and the baselines' (CMakeLists.txt).
scripts/build.sh --target dmindex_api --target dmindex_api_ucx --target dmindex_designs_baselines
echo "install-python: the library built in $(( SECONDS - started )) s"
source scripts/compiler-cache.sh
export CMAKE_ARGS="${compiler_cache[*]} -DDMINDEX_PREBUILT_DIR=$PWD/build"
started=$SECONDS
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation .
echo "install-python: dmindex installed into $venv in $(( SECONDS - started )) s"
