#!/usr/bin/env bash
# Runs the Python package's pytest suite (python/tests/) against the package installed by
# scripts/install-python.sh into build/python-venv. ctest runs it as Python.Package (with
# DMINDEX_BIN, the dmindex command, for the bench_frame tests); exit 77 (ctest: skipped) when
# the package was never installed. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python=build/python-venv/bin/python
if ! "$python" -c 'import dmindex' 2>/dev/null; then
  echo "test-python: the dmindex package is not installed in build/python-venv: run scripts/install-python.sh"
  exit 77
fi
# From outside the source tree, so `import dmindex` is the installed package, not python/.
cd /tmp
exec "$OLDPWD/$python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" "$@"
