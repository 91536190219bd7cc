# The layering rule, checked on every build (cmake -P cmake/check_layers.cmake, run by the
# `check_layers` target that every layer library depends on): a file may include headers of
# its own layer and the layers below it, never above.
#
#   core (0) < store (1) < service (2) < http (3) < cli (4)
#
# A file's layer is its directory: src/<layer>/ (and below), or include/onceorder/<layer>/ for a
# public header. The public headers still directly in include/onceorder/ are given theirs by
# the lists below, the one place that says it; a public header in neither is an error, so a
# new header has to be given its layer.
cmake_minimum_required(VERSION 3.25)

set(core_headers cart cart_lanes combiner counters recent_answers csv db_url document_types duration id_generator invariant number_format principal
  order_types process_identity progress redact schedule_status schedule_types status text timestamp
  audit_types event_types http_url limits signature)
set(store_headers store)
set(service_headers audit intake invariants legacy_items listings maintenance node_lease numbering outbox
  receipts scheduling stock)
set(http_headers http_server)
set(layers core store service http cli)

function(layer_rank name out)
  list(FIND layers "${name}" rank)
  set(${out} ${rank} PARENT_SCOPE)
endfunction()

# Layer of an include path ("onceorder/service/intake.hpp", "onceorder/intake.hpp",
# "store/dialect.hpp"), "unlisted" for a public header of no layer, or "" if outside.
function(include_layer path out)
  set(layer "")
  if(path MATCHES "^onceorder/([a-z_]+)/")
    set(layer "${CMAKE_MATCH_1}")
    if(NOT layer IN_LIST layers)
      set(layer "unlisted")
    endif()
  elseif(path MATCHES "^onceorder/([a-z_]+)\\.hpp$")
    set(stem "${CMAKE_MATCH_1}")
    foreach(l core store service http)
      if(stem IN_LIST ${l}_headers)
        set(layer ${l})
      endif()
    endforeach()
    if(layer STREQUAL "")
      set(layer "unlisted")
    endif()
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
    string(APPEND errors "  ${file}: a public header without a layer (cmake/check_layers.cmake)\n")
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
      string(APPEND errors "  ${file}: includes ${inc}, a public header without a layer\n")
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
