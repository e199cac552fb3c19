#!/usr/bin/env python3
"""Prints the build targets that the tests matching a ctest regular expression run, one per
line, read from a build tree whose tests were discovered already (the Release tree that
scripts/test.sh built). scripts/test-tsan.sh builds only these in its tree: the tests that
start no second thread need no ThreadSanitizer build, and their ~30 test binaries are most of
that tree's compile time with a cold compiler cache (docs/CI.md).

    scripts/ctest-targets.py build 'Concurrent|Dex'   ->   dex_test, dmindex, ...
"""
import json
import os
import subprocess
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, regex = sys.argv[1], sys.argv[2]
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1", "-R", regex],
                             check=True, capture_output=True, text=True).stdout
    build_dir = os.path.realpath(build)
    # The tool is always built: tests start it as a memory server or a child process.
    targets = {"dmindex"}
    for test in json.loads(listing)["tests"]:
        # A test's program is a binary of the tree, or a script given binaries of the tree.
        for word in test.get("command", []):
            path = os.path.realpath(word)
            if path.startswith(build_dir + os.sep) and os.path.isfile(path) and os.access(path, os.X_OK):
                targets.add(os.path.basename(path))
    print("\n".join(sorted(targets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
