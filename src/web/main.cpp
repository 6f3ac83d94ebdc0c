// The browser bench's WebAssembly module: one exported function, called by the
// page's worker (src/web/worker.js) with a request in JSON; progress goes back
// through Module.onPost. Everything else is src/web/api.cpp.
#include <emscripten.h>

#include <string>

#include "src/runtime/runtime.h"
#include "src/web/api.h"

// Hands a JSON text to the worker's script, which forwards it to the page.
EM_JS(void, seqgrad_post_text, (const char* json), { Module["onPost"](UTF8ToString(json)); });

extern "C" EMSCRIPTEN_KEEPALIVE const char* seqgrad_call(const char* request) {
  static const bool started = (seqgrad::runtime::start(), true);  // the engine's backend, once
  (void)started;
  static std::string answer;  // valid until the next call, which is all ccall needs
  answer = seqgrad::web::handle_text(request, [](const nlohmann::json& message) {
    seqgrad_post_text(message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  });
  return answer.c_str();
}
