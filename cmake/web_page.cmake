# cmake -DSOURCE=src/web -DENGINE=seqgrad-engine.js -DOUT=seqgrad.html -P web_page.cmake
# One self-contained page: page.html with the engine and the worker's script
# put into it as text (the page starts its worker from them), and its own script.
cmake_minimum_required(VERSION 3.22)
file(READ ${SOURCE}/page.html page)
file(READ ${SOURCE}/page.js page_js)
file(READ ${SOURCE}/worker.js worker_js)
file(READ ${ENGINE} engine_js)
# Inside a script element, "</script" would end it early and "<!--" changes how
# the rest is read: neither may appear in what goes there.
foreach(part engine_js worker_js page_js)
  foreach(bad "</script" "<!--")
    string(FIND "${${part}}" "${bad}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${part} holds '${bad}', which a script element cannot hold")
    endif()
  endforeach()
endforeach()
string(REPLACE "/*@ENGINE@*/" "${engine_js}" page "${page}")
string(REPLACE "/*@WORKER@*/" "${worker_js}" page "${page}")
string(REPLACE "/*@PAGE@*/" "${page_js}" page "${page}")
file(WRITE ${OUT} "${page}")
