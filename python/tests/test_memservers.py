"""Cluster.connect to two `dmindex memserver` processes (UCX shared memory)."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
DMINDEX = os.environ.get("DMINDEX_BIN")  # the dmindex command (ctest sets it)


def test_an_index_on_memory_servers():
    if not DMINDEX:
        pytest.skip("DMINDEX_BIN (the dmindex command) not set: ctest sets it")
    run = subprocess.run([str(HERE.parents[1] / "scripts/with-memservers.sh"), DMINDEX, sys.executable,
                          str(HERE / "memservers_client.py")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "memory servers: ok" in run.stdout
