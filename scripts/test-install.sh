#!/usr/bin/env bash
# Checks dmindex as a library a program outside the repository uses (docs/CI.md): installs
# the build into a fresh temporary prefix, moves that prefix (nothing in it may point back
# to where it was installed or built), then against it
#   - compiles every public header alone, with nothing but <prefix>/include on the path (and
#     dmindex/c.h as C11);
#   - builds examples/ with find_package(dmindex CONFIG REQUIRED COMPONENTS core ucx)
#     (examples/CMakeLists.txt), and quick_start (C++) and c_quick_start (C) with a plain
#     compiler command line and pkg-config --cflags --libs dmindex-core; checks that those
#     linked against dmindex::core alone need no shared library beyond the C/C++ runtime
#     (scripts/check-core-links.sh); builds quick_start again with pkg-config's dmindex (the
#     whole library) and runs it on a design of dmindex::baselines;
#   - runs quick_start and c_quick_start (both builds each) and range_iteration, and memory_servers against two
#     memory servers started from the installed dmindex (scripts/with-memservers.sh);
#   - checks that the installed `dmindex plot` runs the plot.py installed beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --target dmindex  # builds every installed library too

work=$(mktemp -d "${TMPDIR:-/tmp}/dmindex-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install build --prefix "$work/installed" >/dev/null
mv "$work/installed" "$work/prefix"
prefix="$work/prefix"
echo "test-install: installed and moved to $prefix:"
(cd "$prefix" && find . -type f | sort | sed 's|^\./|  |')

if grep -rIl -e "$PWD" -e "$work/installed" "$prefix"; then
  echo "test-install: the files above name the source, build or install directory" >&2
  exit 1
fi

cxx="${CXX:-c++}"
for header in "$prefix"/include/dmindex/*.h; do
  echo "#include <dmindex/$(basename "$header")>" \
    | "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include" -x c++ -
done
echo '#include <dmindex/c.h>' | "${CC:-cc}" -std=c11 -pedantic -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include" -x c -
echo "test-install: every public header compiles alone (dmindex/c.h as C11 too)"

cmake -S examples -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  | { grep -vP '^-- (?!Configuring incomplete)' || true; }
ninja -C "$work/examples"

export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name dmindex-core.pc)")
flags=$(pkg-config --cflags --libs dmindex-core)
echo "test-install: $cxx -std=c++20 -O2 examples/quick_start.cc $flags"
# shellcheck disable=SC2086  # $flags is a list of compiler arguments
"$cxx" -std=c++20 -O2 -Wall -Wextra -Werror examples/quick_start.cc -o "$work/quick_start_pkg_config" $flags

# A C program links the same static libraries: the C++ runtime comes in by name.
echo "test-install: ${CC:-cc} -std=c11 examples/c_quick_start.c $flags -lstdc++ -lm"
# shellcheck disable=SC2086
"${CC:-cc}" -std=c11 -O2 -Wall -Wextra -Werror examples/c_quick_start.c -o "$work/c_quick_start_pkg_config" $flags -lstdc++ -lm

core_only=("$work/examples/quick_start" "$work/quick_start_pkg_config" "$work/examples/range_iteration"
           "$work/examples/c_quick_start" "$work/c_quick_start_pkg_config")
scripts/check-core-links.sh "${core_only[@]}"
for example in "${core_only[@]}"; do
  echo "test-install: $(basename "$example")"
  "$example"
done

# The whole library through pkg-config: dmindex.pc requires the components' modules, whose
# linker options pull in the parts dmindex::core reaches through weak symbols.
flags=$(pkg-config --cflags --libs dmindex)
echo "test-install: $cxx -std=c++20 -O2 examples/quick_start.cc $flags"
# shellcheck disable=SC2086
"$cxx" -std=c++20 -O2 -Wall -Wextra -Werror examples/quick_start.cc -o "$work/quick_start_all" $flags
echo "test-install: quick_start_all lmdb"
"$work/quick_start_all" lmdb
if "$work/quick_start_pkg_config" lmdb 2>"$work/lmdb.err"; then
  echo "test-install: quick_start linked against dmindex-core opened an lmdb index" >&2
  exit 1
fi
grep -F "design lmdb is not linked into this program; link dmindex::baselines" "$work/lmdb.err"
echo "test-install: memory_servers"
scripts/with-memservers.sh "$prefix/bin/dmindex" "$work/examples/memory_servers"

# `dmindex plot` finds plot.py relative to the executable: replace the installed one by a stub
# that leaves a mark, so that a fallback to the source tree's plot.py would show.
cat > "$prefix/share/dmindex/plot.py" <<STUB
import sys
open("$work/plot-ran", "w").write(" ".join(sys.argv[1:]))
STUB
echo '[]' > "$work/results.json"
"$prefix/bin/dmindex" plot "$work/results.json" --out "$work/plot.png" >/dev/null
if [ ! -f "$work/plot-ran" ]; then
  echo "test-install: the installed dmindex plot did not run the installed plot.py" >&2
  exit 1
fi
echo "test-install: the installed dmindex plot runs the installed plot.py"
echo "test-install: passed"
