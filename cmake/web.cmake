# The browser bench (make web), included by src/CMakeLists.txt in an
# emscripten build: the engine as one JavaScript file with its WebAssembly
# inside (seqgrad-engine.js), then the page, one HTML file holding the engine,
# the worker and the page's script (seqgrad.html), that opens from disk.
add_executable(seqgrad_web web/main.cpp)
target_link_libraries(seqgrad_web PRIVATE seqgrad_web_api seqgrad_runtime seqgrad_flags)
set_target_properties(seqgrad_web PROPERTIES OUTPUT_NAME seqgrad-engine SUFFIX .js
                                             RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
target_link_options(seqgrad_web PRIVATE
  --no-entry -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=2GB -sENVIRONMENT=worker,node
  -sEXPORTED_FUNCTIONS=_seqgrad_call -sEXPORTED_RUNTIME_METHODS=ccall
  "SHELL:--embed-file ${PROJECT_SOURCE_DIR}/data/toylang.txt@/data/toylang.txt")
set_property(TARGET seqgrad_web APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/data/toylang.txt)

set(_web_sources ${PROJECT_SOURCE_DIR}/src/web/page.html ${PROJECT_SOURCE_DIR}/src/web/page.js
                 ${PROJECT_SOURCE_DIR}/src/web/worker.js)
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/seqgrad.html
  COMMAND ${CMAKE_COMMAND} -DSOURCE=${PROJECT_SOURCE_DIR}/src/web -DENGINE=$<TARGET_FILE:seqgrad_web>
          -DOUT=${PROJECT_BINARY_DIR}/seqgrad.html -P ${PROJECT_SOURCE_DIR}/cmake/web_page.cmake
  DEPENDS seqgrad_web ${_web_sources} ${PROJECT_SOURCE_DIR}/cmake/web_page.cmake
  COMMENT "Writing the page seqgrad.html")
add_custom_target(seqgrad_page ALL DEPENDS ${PROJECT_BINARY_DIR}/seqgrad.html)
