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

# The product's statement overlay (none); each broken variant of tools/torture links its own
# instead, so it is not part of onceorder_store itself.
set(ONCEORDER_STORE_SEAMS
  src/store/sql_overlay.cpp
)
list(REMOVE_ITEM ONCEORDER_STORE_SOURCES ${ONCEORDER_STORE_SEAMS})

# Each engine's migrations (src/store/<engine>/migrations/NNNN_<name>.up.sql and .down.sql),
# built into the binary (store/migrations.hpp), again whenever one of them changes.
foreach(engine postgres sqlite)
  set(dir ${CMAKE_SOURCE_DIR}/src/store/${engine}/migrations)
  file(GLOB files CONFIGURE_DEPENDS RELATIVE ${dir} ${dir}/*.sql)
  list(TRANSFORM files PREPEND "${dir}/" OUTPUT_VARIABLE depends)
  list(TRANSFORM files REPLACE "^(.+)$" "/\\1=${dir}/\\1")
  list(JOIN files "|" entries)
  set(out ${PROJECT_BINARY_DIR}/generated/${engine}_migrations.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${out} "-DENTRIES=${entries}" -DHEADER=store/migrations.hpp
      -DNAMESPACE=onceorder::store::${engine} -DFUNCTION=migration_files
      -P ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake ${depends}
    COMMENT "Embedding the ${engine} migrations"
    VERBATIM)
  # Outside the unity batches: its file-local names are those of every other embedded table.
  set_source_files_properties(${out} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON
    SKIP_PRECOMPILE_HEADERS ON)
  list(APPEND ONCEORDER_STORE_SOURCES ${out})
endforeach()
