# A layer is its directory: the sources of layer L are src/L/*.cpp (the store's with its engine
# directories), so a file's place is its layer; cmake/check_layers.cmake reads the same
# directories. Unit tests (*_test.cpp beside the code) go to tests/CMakeLists.txt instead.
# CONFIGURE_DEPENDS: a file added or removed is found by the next build.
function(onceorder_layer_sources out)
  set(sources "")
  foreach(dir IN LISTS ARGN)
    file(GLOB found CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/${dir}/*.cpp)
    list(APPEND sources ${found})
  endforeach()
  list(FILTER sources EXCLUDE REGEX "_test\\.cpp$")
  set(${out} ${sources} PARENT_SCOPE)
endfunction()

onceorder_layer_sources(ONCEORDER_CORE_SOURCES src/core)
onceorder_layer_sources(ONCEORDER_STORE_SOURCES src/store src/store/postgres src/store/sqlite)
onceorder_layer_sources(ONCEORDER_SERVICE_SOURCES src/service)
onceorder_layer_sources(ONCEORDER_HTTP_SOURCES src/http)
onceorder_layer_sources(ONCEORDER_CLI_SOURCES src/cli)

# Compiled once for the product and once per broken variant (tools/torture), so not part of
# onceorder_store itself.
set(ONCEORDER_STORE_SEAMS
  src/store/postgres/intake_sql.cpp
  src/store/postgres/numbering_sql.cpp
  src/store/postgres/scheduling_sql.cpp
)
list(REMOVE_ITEM ONCEORDER_STORE_SOURCES ${ONCEORDER_STORE_SEAMS})
