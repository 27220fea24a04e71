# cmake/Layers.cmake — one object library per layer, from cmake/layers.txt.
#
# numaware_read_layers(FILE) reads the table; numaware_add_layer(NAME ...)
# makes the object library numaware_layer_NAME from the layer's folders.
# Its include path is include/ (public headers) and a view of src/ holding
# only the folders of this layer and of the layers it may call (symbolic
# links made at configure time), so an internal header of any other layer
# is not found.

function(numaware_read_layers file)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(STRINGS ${file} lines REGEX "^[a-z]")
  set(names "")
  foreach(line IN LISTS lines)
    string(REPLACE "|" ";" cols "${line}")
    list(GET cols 0 name)
    list(GET cols 1 folders)
    list(GET cols 3 calls)
    string(STRIP "${name}" name)
    separate_arguments(folders UNIX_COMMAND "${folders}")
    separate_arguments(calls UNIX_COMMAND "${calls}")
    list(REMOVE_ITEM calls "-")
    list(APPEND names ${name})
    set(NUMAWARE_LAYER_${name}_FOLDERS ${folders} PARENT_SCOPE)
    set(NUMAWARE_LAYER_${name}_CALLS ${calls} PARENT_SCOPE)
  endforeach()
  set(NUMAWARE_LAYERS ${names} PARENT_SCOPE)
endfunction()

# The first path component under src/ of each folder of `layer`: what an
# include names ("os/os.hpp", "tools/vm/runner.hpp").
function(_numaware_layer_roots layer out)
  set(roots "")
  foreach(folder IN LISTS NUMAWARE_LAYER_${layer}_FOLDERS)
    if(folder MATCHES "^src/([^/]+)")
      list(APPEND roots ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES roots)
  set(${out} ${roots} PARENT_SCOPE)
endfunction()

# numaware_add_layer(NAME [PRIVATE deps...] [EXCLUDE folders...])
function(numaware_add_layer name)
  cmake_parse_arguments(ARG "" "" "PRIVATE;EXCLUDE" ${ARGN})
  set(sources "")
  foreach(folder IN LISTS NUMAWARE_LAYER_${name}_FOLDERS)
    if(NOT folder IN_LIST ARG_EXCLUDE)
      file(GLOB found CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cpp)
      list(APPEND sources ${found})
    endif()
  endforeach()
  set(view ${PROJECT_BINARY_DIR}/layer-views/${name})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view})
  foreach(visible IN LISTS name NUMAWARE_LAYER_${name}_CALLS)
    _numaware_layer_roots(${visible} roots)
    foreach(root IN LISTS roots)
      if(NOT EXISTS ${view}/${root})
        file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${root} ${view}/${root} SYMBOLIC)
      endif()
    endforeach()
  endforeach()
  add_library(numaware_layer_${name} OBJECT ${sources})
  # The library's own calls bind inside it: no function of libnumaware is
  # meant to be replaced by another DSO's (the malloc and OpenMP shims are
  # libraries of their own), so GCC may inline and call directly what PIC
  # code would otherwise call through the PLT; and the inline functions of
  # its headers are not exported (a test that includes them compiles its
  # own copy).
  target_compile_options(numaware_layer_${name} PRIVATE ${NUMAWARE_WARNINGS}
    $<$<CXX_COMPILER_ID:GNU>:-fno-semantic-interposition> -fvisibility-inlines-hidden)
  target_include_directories(numaware_layer_${name} PRIVATE ${PROJECT_SOURCE_DIR}/include ${view})
  target_link_libraries(numaware_layer_${name} PRIVATE Threads::Threads ${ARG_PRIVATE})
endfunction()
