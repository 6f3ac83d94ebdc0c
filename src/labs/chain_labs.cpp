// Labs on the chain: the RNN's two walls and the path length of the paper's Table 1.
#include <fmt/core.h>

#include "src/inspect/grads.h"
#include "src/inspect/paths.h"
#include "src/labs/registry.h"
#include "src/train/config.h"

namespace seqgrad::labs {

namespace {

nn::ModelConfig small(const std::string& kind, int max_len) {
  nn::ModelConfig c;
  c.kind = kind;
  c.vocab = c.out_dim = 17;
  c.d_model = 64;
  c.layers = nn::default_layers(kind);
  c.max_len = max_len;
  return c;
}

// A chain's label ("this model", "radius 0.5", from inspect::jacobian_chains) in `lang`.
std::string chain_label(const std::string& label, text::Lang lang) {
  if (label == "this model") return std::string(text::tr("labs.two-walls.this_model", lang));
  if (label.starts_with("radius ")) return text::trf("labs.two-walls.radius", lang, label.substr(7));
  return label;
}

LabResult two_walls() {
  LabResult r;
  const auto task = tasks::make_task({"recall", 64, "", ""});
  const std::uint64_t seed = trial_seeds().front();  // the RNN's weights and its inputs, drawn at random
  const tasks::Batch batch = task->eval_batches(8, 8, 1 + seed).front();
  const auto rnn = nn::make_model(small("rnn", 65), seed);
  // Wall 1: the gradient to x_{t-k} is a product of k Jacobians.
  const auto chains = inspect::jacobian_chains(*rnn, batch, {0.5, 1.0, 1.5});
  for (const auto& ch : chains) {
    nlohmann::ordered_json c = {{"label", ch.label},
                                {"spectral_radius", ch.spectral_radius},
                                {"spectral_norm", ch.spectral_norm},
                                {"k1", ch.norm[0]},
                                {"k4", ch.norm[3]},
                                {"k16", ch.norm[15]},
                                {"k63", ch.norm[62]}};
    r.figures["chains"].push_back(c);
    r.line_each([&](text::Lang lang) {
      return text::trf("labs.two-walls.chain", lang, chain_label(ch.label, lang), ch.spectral_radius, ch.spectral_norm,
                       ch.norm[0], ch.norm[3], ch.norm[15], ch.norm[62]);
    });
  }
  r.line("labs.two-walls.rho_sigma");
  // Wall 2: the steps that must run one after another.
  const auto rnn_paths = inspect::measure_paths(*rnn, 64);
  const auto attention_paths = inspect::measure_paths(*nn::make_model(small("transformer", 65), 0), 64);
  const auto rnn_short = inspect::measure_paths(*rnn, 32);
  r.figures["sequential_ops_rnn"] = {rnn_short.sequential_ops, rnn_paths.sequential_ops};
  r.figures["sequential_ops_attention"] = attention_paths.sequential_ops;
  r.line("labs.two-walls.sequential", rnn_short.sequential_ops, rnn_paths.sequential_ops,
         attention_paths.sequential_ops);
  return r;
}

// Below radius one (the chain of radius 0.5) the product vanishes; above it (1.5), it grows at first (until tanh
// saturates); and the RNN's sequential work doubles with T while attention's stays.
void judge_two_walls(LabResult& r) {
  const auto& f = r.figures;
  const auto& half = f["chains"][1];
  const auto& big = f["chains"][3];
  const double vanish = half["k63"].get<double>() / half["k1"].get<double>(), explode = big["k4"];
  r.require("labs.two-walls.if.vanish", vanish, Rel::lt, 1e-6, vanish);
  r.require("labs.two-walls.if.explode", explode, Rel::gt, 1, explode);
  const int rnn_short = f["sequential_ops_rnn"][0], rnn_long = f["sequential_ops_rnn"][1],
            attention = f["sequential_ops_attention"];
  const double doubling = static_cast<double>(rnn_long) / rnn_short;
  r.require("labs.two-walls.if.rnn_doubles", doubling, Rel::gt, 1.9, doubling);
  r.require("labs.two-walls.if.attention_short", attention, Rel::lt, rnn_short, attention, rnn_short);
}

LabResult path_length() {
  LabResult r;
  for (const char* kind : {"rnn", "lstm", "transformer"}) {
    const auto model = nn::make_model(small(kind, 64), 0);
    std::vector<int> lens{8, 16, 32, 64}, paths;
    for (int len : lens) paths.push_back(inspect::measure_paths(*model, len).max_path());
    r.figures[kind] = {{"len", lens}, {"path_from_first", paths}};
    std::string row;
    for (std::size_t i = 0; i < lens.size(); ++i) row += fmt::format("  T={}: {}", lens[i], paths[i]);
    r.line("labs.path-length.row", kind, row);
  }
  return r;
}

void judge_path_length(LabResult& r) {
  for (const char* kind : {"rnn", "lstm", "transformer"}) {
    const auto paths = r.figures[kind]["path_from_first"].get<std::vector<double>>();
    const int first = static_cast<int>(paths.front()), last = static_cast<int>(paths.back()), growth = last - first;
    if (std::string(kind) == "transformer") {
      r.require("labs.path-length.if.flat", growth, Rel::eq, 0, first, last);
    } else {  // at least one op per step: from T = 8 to 64, 56 more
      r.require("labs.path-length.if.grows", growth, Rel::ge, 56, kind, growth);
    }
  }
}

}  // namespace

void add_chain_labs(std::vector<Lab>& labs) {
  labs.push_back(judged(seeded(make_lab("two-walls", two_walls), {0}), judge_two_walls));
  labs.push_back(judged(make_lab("path-length", path_length), judge_path_length));
}

}  // namespace seqgrad::labs
