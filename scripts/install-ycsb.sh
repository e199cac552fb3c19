#!/usr/bin/env bash
# Installs what the YCSB oracle test (tests/ycsb_oracle_test.cc) and the YCSB binding
# (bindings/ycsb, scripts/ycsb.sh) need: a JDK and Maven from Debian, then YCSB 0.17.0's core
# jar and its dependencies from Maven Central into a cache outside the build tree
# (DMINDEX_YCSB_DIR, default ~/.cache/dmindex/ycsb-0.17.0), then builds the binding's jar
# (bindings/ycsb/target/dmindex-ycsb-binding.jar) with Maven when its sources are newer -
# offline once Maven's local repository has the plugins. Idempotent.
# Prints the directory holding YCSB's jars on its last line. With --print-dir it only prints
# it (exit 1 if it is not installed), which is how the tests find it.
set -euo pipefail

DIR="${DMINDEX_YCSB_DIR:-${HOME:-/root}/.cache/dmindex/ycsb-0.17.0}"
BINDING="$(cd "$(dirname "$0")/.." && pwd)/bindings/ycsb"

# The binding's jar, rebuilt if missing or older than its pom or a source file.
build_binding() {
  local jar="$BINDING/target/dmindex-ycsb-binding.jar"
  if [ -f "$jar" ] && [ -z "$(find "$BINDING/pom.xml" "$BINDING/src" -newer "$jar" -print -quit)" ]; then
    return
  fi
  # Offline first (quiet: a miss only means the local repository lacks a plugin), then online.
  (cd "$BINDING" && { mvn -q -B -o package >/dev/null 2>&1 || mvn -q -B package >&2; })
  touch "$jar"  # Maven leaves an up-to-date jar as it was: mark it checked
}

if [ "${1:-}" != "--print-dir" ] && [ -f "$DIR/lib/core-0.17.0.jar" ] && [ -f "$DIR/complete" ] &&
   command -v javac >/dev/null && command -v mvn >/dev/null; then
  build_binding
  echo "$DIR/lib"
  exit 0
fi
if [ -f "$DIR/lib/core-0.17.0.jar" ] && [ -f "$DIR/complete" ] && command -v java >/dev/null; then
  echo "$DIR/lib"
  exit 0
fi
if [ "${1:-}" = "--print-dir" ]; then
  echo "YCSB 0.17.0 is not installed in $DIR: run scripts/install-ycsb.sh" >&2
  exit 1
fi

need=()
command -v javac >/dev/null || need+=(default-jdk-headless)  # javac and jni.h too
command -v mvn >/dev/null || need+=(maven)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q >&2
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" >&2
fi

mkdir -p "$DIR"
cat > "$DIR/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dmindex</groupId>
  <artifactId>ycsb-oracle</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>site.ycsb</groupId>
      <artifactId>core</artifactId>
      <version>0.17.0</version>
    </dependency>
  </dependencies>
</project>
POM
(cd "$DIR" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib >&2)
test -f "$DIR/lib/core-0.17.0.jar"
touch "$DIR/complete"
build_binding
echo "$DIR/lib"
