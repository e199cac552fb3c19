#!/usr/bin/env bash
# Fails if a program meant to link dmindex::core alone (docs/C_API.md, "What a program links")
# needs any shared library beyond the C and C++ runtime (libstdc++, libm, libgcc_s, libc):
# not UCX or OpenSSL (dmindex::ucx), nor RocksDB, LMDB, abseil and their compression libraries
# (dmindex::baselines). Reads the NEEDED entries of each file's dynamic section (readelf -d),
# so it checks what the program was linked with, not what the loader happens to find.
#   scripts/check-core-links.sh PROGRAM...
set -euo pipefail
status=0
for program in "$@"; do
  needed=$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if [ -z "$needed" ]; then
    echo "check-core-links: $program has no NEEDED entries (not a dynamically linked program?)" >&2
    exit 1
  fi
  # The sanitizers' runtimes are part of the C/C++ runtime of a sanitizer build (CI's ASan tree
  # runs this test too).
  beyond=$(grep -vE '^(libstdc\+\+|libm|libgcc_s|libc|libpthread|ld-linux-x86-64|ld-linux-aarch64|libasan|libubsan|libtsan)\.so' <<<"$needed" || true)
  if [ -n "$beyond" ]; then
    echo "check-core-links: $program needs more than the C/C++ runtime:" $beyond >&2
    status=1
  else
    echo "check-core-links: $program needs only" $needed
  fi
done
exit $status
