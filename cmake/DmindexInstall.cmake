# `cmake --install build --prefix P` puts under P:
#   include/dmindex/*.h                  the public API (nothing of src/)
#   lib/libdmindex.a, lib/libdmindex_c.a, lib/libdmindex_<layer>.a
#                                        dmindex::dmindex, dmindex::c and the layers they link
#   lib/cmake/dmindex/                   find_package(dmindex CONFIG REQUIRED)
#                                        (the build tree has one too: dmindex_DIR=<build>)
#   lib/pkgconfig/dmindex.pc             pkg-config --cflags --libs dmindex
#   bin/dmindex, share/dmindex/plot.py   the command (memserver, bench, plot, ...)
# (lib is CMAKE_INSTALL_LIBDIR, e.g. lib/x86_64-linux-gnu under /usr.) Every path in the
# CMake package and in dmindex.pc is relative to where it is installed, so the tree can move.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

dmindex_layer_closure(capi installed_layers)  # capi, api and every layer below
list(TRANSFORM installed_layers PREPEND dmindex_ OUTPUT_VARIABLE installed_targets)
install(TARGETS ${installed_targets} EXPORT dmindexTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/dmindex DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/dmindex)
install(EXPORT dmindexTargets NAMESPACE dmindex:: DESTINATION ${cmake_dir})
# The same package for the build tree itself, uninstalled: dmindexConfig.cmake below and these
# targets, naming the archives where the build makes them. The Python extension's build links
# them (DMINDEX_PREBUILT_DIR, CMakeLists.txt) rather than compiling the library again.
export(EXPORT dmindexTargets NAMESPACE dmindex:: FILE ${PROJECT_BINARY_DIR}/dmindexTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dmindexConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/dmindexConfig.cmake INSTALL_DESTINATION ${cmake_dir})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dmindexConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dmindexConfig.cmake ${PROJECT_BINARY_DIR}/dmindexConfigVersion.cmake
        DESTINATION ${cmake_dir})

# dmindex.pc: the static libraries in link order (each before the layers it calls).
set(pc_libs "")
foreach(target IN LISTS installed_targets)
  get_target_property(output_name ${target} OUTPUT_NAME)
  if(NOT output_name)
    set(output_name ${target})
  endif()
  string(APPEND pc_libs " -l${output_name}")
endforeach()
file(RELATIVE_PATH pc_to_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/dmindex.pc.in ${PROJECT_BINARY_DIR}/dmindex.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dmindex.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

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
