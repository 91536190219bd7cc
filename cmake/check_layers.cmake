# The layering rule, checked on every build (cmake -P cmake/check_layers.cmake, run by the
# `check_layers` target that every layer library depends on): a file may include headers of
# its own layer and the layers below it, never above.
#
#   core (0) < store (1) < service (2) < http (3) < cli (4)
#
# A file's layer is its directory: src/<layer>/ (and below), or include/onceorder/<layer>/ for a
# public header. A public header directly in include/onceorder/ has no layer and is an error.
cmake_minimum_required(VERSION 3.25)

set(layers core store service http cli)

function(layer_rank name out)
  list(FIND layers "${name}" rank)
  set(${out} ${rank} PARENT_SCOPE)
endfunction()

# Layer of an include path ("onceorder/service/intake.hpp", "store/dialect.hpp"), "unlisted" for
# a public header outside a layer directory ("onceorder/intake.hpp"), or "" if outside.
function(include_layer path out)
  set(layer "")
  if(path MATCHES "^onceorder/([a-z_]+)/")
    set(layer "${CMAKE_MATCH_1}")
    if(NOT layer IN_LIST layers)
      set(layer "unlisted")
    endif()
  elseif(path MATCHES "^onceorder/[a-z_]+\\.hpp$")
    set(layer "unlisted")
  elseif(path MATCHES "^(core|store|service|http|cli)/")
    set(layer "${CMAKE_MATCH_1}")
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/src/*.cpp" "${SOURCE_DIR}/src/*.hpp" "${SOURCE_DIR}/include/onceorder/*.hpp")
set(errors "")
foreach(file IN LISTS files)
  if(file MATCHES "_test\\.cpp$")
    continue()  # a test may reach across layers to set up what it tests
  endif()
  if(file MATCHES "^src/(core|store|service|http|cli)/")
    set(own "${CMAKE_MATCH_1}")
  else()
    string(REGEX REPLACE "^include/" "" public "${file}")
    include_layer("${public}" own)
  endif()
  if(own STREQUAL "unlisted")
    string(APPEND errors "  ${file}: a public header outside a layer directory (include/onceorder/<layer>/)\n")
    continue()
  endif()
  layer_rank(${own} own_rank)
  file(STRINGS "${SOURCE_DIR}/${file}" lines REGEX "^#include \"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${line}")
    include_layer("${inc}" to)
    if(to STREQUAL "")
      continue()
    endif()
    if(to STREQUAL "unlisted")
      string(APPEND errors "  ${file}: includes ${inc}, a public header outside a layer directory\n")
      continue()
    endif()
    layer_rank(${to} to_rank)
    if(to_rank GREATER own_rank)
      string(APPEND errors "  ${file} (${own}) includes ${inc} (${to}): imports run downwards only\n")
    endif()
  endforeach()
endforeach()
if(errors)
  message(FATAL_ERROR "layering violations:\n${errors}")
endif()
