// The browser bench's one entry point: the page's worker sends a request as
// JSON and gets the answer as JSON, with progress posted on the way. Plain C++
// (no emscripten here), so it is built and tested natively like the rest;
// src/web/main.cpp only hands it strings.
//
// Requests ({"cmd": ...}):
//   hello                  the models, tasks and labs, and the page's words in English and Korean
//   train  model task len steps seed d_model lang
//                          trains a fresh model as `seqgrad train` would (same defaults, same seed, same
//                          batches); posts "progress" (loss and accuracy charts) and "grads" (the gradient
//                          reaching each position, before and during training); answers with the held-out
//                          figures, examples, attention maps (Transformer) and the model's path lengths
//   paths  lang            path lengths of a small model of each kind at T = 8..64, as a chart
//   lab    name lang       runs one lab: claim, figures, lines, verdict
//   bench  workload steps  times a standard workload (docs/workloads.md) on one thread
// A bad request throws std::invalid_argument with a one-line message.
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

namespace seqgrad::web {

using Post = std::function<void(const nlohmann::json&)>;

nlohmann::json handle(const nlohmann::json& request, const Post& post);

// handle() for a request in text: the answer's text, or {"error": message}
// for a bad request or a failure (what the page shows in one line).
std::string handle_text(const std::string& request, const Post& post);

}  // namespace seqgrad::web
