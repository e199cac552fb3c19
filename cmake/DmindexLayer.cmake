# dmindex_layer(): one layer of src/ (docs/ARCHITECTURE.md, "Layers") as its own static
# library, dmindex_<name>, built from the .cc files directly in src/<folder>/ (not its
# subfolders: those are layers of their own, e.g. fabric/ucx).
#
#   dmindex_layer(<name> <folder>
#                 [DEPENDS <layer>...]     layers it calls into (names without dmindex_)
#                 [LIBS <target>...]       external libraries its callers link too
#                 [PRIVATE_LIBS <target>...] external libraries only its own files include
#                                          (still linked into every program using it)
#                 [BUILD_ONLY <target>...] header-only libraries needed to compile it only
#                 [LINK_SYMBOL <symbol>]   an extern "C" function of the layer that the layers
#                                          below reach through a weak reference only (a part
#                                          of the library a program may leave out, e.g. the
#                                          UCX fabric): every program linking the layer is
#                                          made to link it (--undefined), else the archive
#                                          would add nothing
#                 [PUBLIC_API])            the library users link: src/ stays private
#
# The linker enforces DEPENDS: dmindex_<name>_layering is a program linking every object of
# the layer (whole archive) against only the layers it declares (and theirs, transitively),
# built by default. A call into a layer not declared - an upward call such as tree/ into
# designs/ - is an undefined symbol there, and the build fails naming it. (Static libraries
# alone would not notice: the final program links every layer and resolves anything.)
# Only calls into compiled code are checked; an inline function or template of another
# layer's header is not a symbol.

function(dmindex_layer name folder)
  cmake_parse_arguments(PARSE_ARGV 2 arg "PUBLIC_API" "LINK_SYMBOL" "DEPENDS;LIBS;PRIVATE_LIBS;BUILD_ONLY")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dmindex_layer(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${folder}/*.cc)
  if(NOT sources)
    message(FATAL_ERROR "dmindex_layer(${name}): no .cc files in src/${folder}/")
  endif()

  set(target dmindex_${name})
  add_library(${target} STATIC ${sources})
  list(TRANSFORM arg_DEPENDS PREPEND dmindex_ OUTPUT_VARIABLE layer_deps)
  if(arg_PUBLIC_API)
    # Its users see include/ only (installed: <prefix>/include); its layers are link-only.
    target_include_directories(${target}
      PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
      PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} PRIVATE ${layer_deps})
  else()
    # Internal layers include each other by path under src/ ("fabric/fabric.h"). Installed
    # copies of them are link-only, so the export carries no include directory for them.
    target_include_directories(${target}
      PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>)
    target_link_libraries(${target} PUBLIC ${layer_deps})
  endif()
  target_link_libraries(${target} PUBLIC ${arg_LIBS} PRIVATE ${arg_PRIVATE_LIBS})
  foreach(lib IN LISTS arg_BUILD_ONLY)
    target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:${lib}>)
  endforeach()
  target_compile_features(${target} PUBLIC cxx_std_20)
  if(arg_LINK_SYMBOL)
    target_link_options(${target} INTERFACE "LINKER:--undefined=${arg_LINK_SYMBOL}")
    set_property(GLOBAL PROPERTY DMINDEX_LAYER_LINK_SYMBOL_${name} ${arg_LINK_SYMBOL})
  endif()
  # Position-independent, so that the Python extension (a shared object: python/) links these
  # very archives instead of compiling every layer a second time (scripts/install-python.sh,
  # docs/PYTHON.md). -fno-semantic-interposition keeps -fPIC's cost small: calls between the
  # library's own functions are not routed through the PLT for a preloaded library to replace,
  # so they inline and bind locally as under the executables' -fPIE (GCC's default on Debian).
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  if(DMINDEX_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()

  if(NOT TARGET dmindex_layering_main)  # the checks' empty main(), compiled once
    add_library(dmindex_layering_main OBJECT ${PROJECT_SOURCE_DIR}/cmake/layering_check_main.cc)
  endif()
  add_executable(${target}_layering $<TARGET_OBJECTS:dmindex_layering_main>)
  target_link_libraries(${target}_layering PRIVATE $<LINK_LIBRARY:WHOLE_ARCHIVE,${target}>)

  set_property(GLOBAL APPEND PROPERTY DMINDEX_LAYERS ${name})
  set_property(GLOBAL PROPERTY DMINDEX_LAYER_DEPENDS_${name} ${arg_DEPENDS})
endfunction()

# The layers `name` links, itself first, each before the layers it depends on (the order a
# static link line needs, e.g. for dmindex.pc).
function(dmindex_layer_closure name out_var)
  set(order "")
  _dmindex_post_order(${name})
  list(REVERSE order)
  set(${out_var} ${order} PARENT_SCOPE)
endfunction()

# Appends `layer` to `order` after every layer it depends on.
function(_dmindex_post_order layer)
  if(NOT "${layer}" IN_LIST order)
    get_property(deps GLOBAL PROPERTY DMINDEX_LAYER_DEPENDS_${layer})
    foreach(dep IN LISTS deps)
      _dmindex_post_order(${dep})
    endforeach()
    list(APPEND order ${layer})
    set(order ${order} PARENT_SCOPE)
  endif()
endfunction()
