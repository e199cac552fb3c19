#!/usr/bin/env bash
# Prints, for each test that failed in the last ctest run of a build directory, the lines of
# its output that say why (gtest failures, sanitizer reports, Status messages), at most 60 a
# test. The test scripts call it after a failed run so that the reason sits at the end of the
# log, where a reader of CI's tail looks, not hundreds of tests above it.
# Usage: scripts/ctest-failures.sh <build dir>
set -uo pipefail
log="${1:?usage: $0 <build dir>}/Testing/Temporary/LastTest.log"
[[ -f "$log" ]] || { echo "ctest-failures: no $log" >&2; exit 0; }
awk '
  / Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name); n = 0; inout = 0; next }
  /^Output:$/ { inout = 1; next }
  /^<end of output>$/ { inout = 0; next }
  inout && !/^-+$/ { out[++n] = $0; next }
  /^Test Failed\.$/ || /^Test Passed\.$/ {
    if ($0 ~ /Passed/) next
    print "=== failed: " name
    shown = 0; after = 0
    for (i = 1; i <= n && shown < 60; ++i) {
      if (out[i] ~ /Failure|FAILED|rror|ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error|SUMMARY|Expected|Which is|Value of|Actual|first:|Corruption|Busy|Unavailable|terminate|Abort|signal/) after = 4
      if (after > 0) { print "  " out[i]; ++shown; --after }
    }
    if (shown == 0) for (i = (n > 20 ? n - 19 : 1); i <= n; ++i) print "  " out[i]
  }
' "$log"
