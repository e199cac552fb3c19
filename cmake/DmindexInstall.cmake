# `cmake --install build --prefix P` puts under P:
#   include/dmindex/*.h                  the public API (nothing of src/)
#   lib/libdmindex.a, lib/libdmindex_c.a, lib/libdmindex_<layer>.a
#                                        the layers of dmindex::core, dmindex::c, dmindex::ucx
#                                        and dmindex::baselines (CMakeLists.txt)
#   lib/cmake/dmindex/                   find_package(dmindex CONFIG REQUIRED [COMPONENTS ...])
#                                        (the build tree has one too: dmindex_DIR=<build>)
#   lib/pkgconfig/dmindex{,-core,-ucx,-baselines}.pc
#                                        pkg-config --cflags --libs dmindex-core, ...
#   bin/dmindex, share/dmindex/plot.py   the command (memserver, bench, plot, ...)
# (lib is CMAKE_INSTALL_LIBDIR, e.g. lib/x86_64-linux-gnu under /usr.) Every path in the
# CMake package and in the .pc files is relative to where it is installed, so the tree can move.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The layers of each component, each layer in the first component whose closure holds it:
# core is the C API's closure (the C++ API and everything under it), ucx and baselines add
# their layers on top of core's. Each component is an export set of its own, so that
# find_package(dmindex COMPONENTS core) looks for none of the other components' libraries.
dmindex_layer_closure(capi core_layers)
dmindex_layer_closure(api_ucx ucx_layers)
dmindex_layer_closure(designs_baselines baselines_layers)
list(REMOVE_ITEM ucx_layers ${core_layers})
list(REMOVE_ITEM baselines_layers ${core_layers})
set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/dmindex)
set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH pc_to_prefix /prefix/${pc_dir} /prefix)
string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")

# Installs and exports one component: its layers and `extra_targets`, in export set
# dmindex<Name>Targets, and its pkg-config file dmindex-<name>.pc (dmindex.pc for `all`), which
# lists the layers' archives in link order (each before the layers it calls), the linker
# options that pull in their LINK_SYMBOLs, `requires` (pkg-config modules) and `description`.
function(dmindex_install_component name layers extra_targets requires description)
  string(SUBSTRING ${name} 0 1 first)
  string(TOUPPER ${first} first)
  string(SUBSTRING ${name} 1 -1 rest)
  set(export_set dmindex${first}${rest}Targets)
  list(TRANSFORM layers PREPEND dmindex_ OUTPUT_VARIABLE targets)
  install(TARGETS ${targets} ${extra_targets} EXPORT ${export_set} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT ${export_set} NAMESPACE dmindex:: DESTINATION ${cmake_dir})
  # The same for the build tree itself, uninstalled, naming the archives where the build makes
  # them: the Python extension's build links them (DMINDEX_PREBUILT_DIR, CMakeLists.txt) rather
  # than compiling the library again.
  export(EXPORT ${export_set} NAMESPACE dmindex:: FILE ${PROJECT_BINARY_DIR}/${export_set}.cmake)

  set(pc_libs "")
  foreach(layer IN LISTS layers)
    get_property(symbol GLOBAL PROPERTY DMINDEX_LAYER_LINK_SYMBOL_${layer})
    if(symbol)
      string(PREPEND pc_libs " -Wl,--undefined=${symbol}")
    endif()
  endforeach()
  foreach(target IN LISTS targets)
    get_target_property(output_name ${target} OUTPUT_NAME)
    if(NOT output_name)
      set(output_name ${target})
    endif()
    string(APPEND pc_libs " -l${output_name}")
  endforeach()
  set(pc_name dmindex-${name})
  if(name STREQUAL "all")
    set(pc_name dmindex)
  endif()
  set(pc_requires "${requires}")
  set(pc_description "${description}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/dmindex.pc.in ${PROJECT_BINARY_DIR}/${pc_name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc_name}.pc DESTINATION ${pc_dir})
endfunction()

# The C API's layer first: it calls the C++ API's (pkg-config's link order).
dmindex_install_component(core "${core_layers}" "" ""
  "the C++ and C APIs, the in-process cluster and the in-memory designs (C++ runtime only)")
dmindex_install_component(ucx "${ucx_layers}" dmindex_component_ucx "dmindex-core ucx libcrypto"
  "memory servers over UCX: Cluster::Open(MemoryServers)")
dmindex_install_component(baselines "${baselines_layers}" dmindex_component_baselines
  "dmindex-core rocksdb lmdb absl_btree" "the designs indexy, rocksdb, lmdb, btree-disk and absl")
dmindex_install_component(all "" dmindex_component_all "dmindex-ucx dmindex-baselines"
  "the whole library: dmindex-core, dmindex-ucx and dmindex-baselines")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/dmindex DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dmindexConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/dmindexConfig.cmake INSTALL_DESTINATION ${cmake_dir})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dmindexConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dmindexConfig.cmake ${PROJECT_BINARY_DIR}/dmindexConfigVersion.cmake
        DESTINATION ${cmake_dir})

# The command, and the script `dmindex plot` runs, found relative to the executable.
install(TARGETS dmindex RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(plot_dir ${CMAKE_INSTALL_DATADIR}/dmindex)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/src/tools/plot.py DESTINATION ${plot_dir})
file(RELATIVE_PATH plot_from_bin /prefix/${CMAKE_INSTALL_BINDIR} /prefix/${plot_dir}/plot.py)
target_compile_definitions(dmindex PRIVATE DMINDEX_PLOT_FROM_BIN="${plot_from_bin}"
                                           DMINDEX_PLOT_IN_SOURCE="${PROJECT_SOURCE_DIR}/src/tools/plot.py")
# The simulated cluster's platform files (--fabric sim), found the same way.
set(platform_dir ${CMAKE_INSTALL_DATADIR}/dmindex/platforms)
install(FILES ${PROJECT_SOURCE_DIR}/platforms/dex-vldb24.xml ${PROJECT_SOURCE_DIR}/platforms/sherman-sigmod22.xml
        DESTINATION ${platform_dir})
file(RELATIVE_PATH platforms_from_bin /prefix/${CMAKE_INSTALL_BINDIR} /prefix/${platform_dir})
target_compile_definitions(dmindex PRIVATE DMINDEX_PLATFORMS_FROM_BIN="${platforms_from_bin}"
                                           DMINDEX_PLATFORM_DIR="${PROJECT_SOURCE_DIR}/platforms")
