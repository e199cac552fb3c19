# Sourced by the build scripts (build.sh, test-tsan.sh, test-asan.sh) from the checkout's root:
# with ccache installed (install-deps.sh installs it) every compile goes through it, keyed on
# paths relative to the checkout, so a second clone (CI's clean clone) and the three build
# trees' rebuilds reuse objects instead of recompiling ~350 targets on two cores.
# Sets `compiler_cache` to the CMake arguments (empty without ccache).
compiler_cache=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  compiler_cache=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
