#include "src/nn/model.h"

#include <climits>
#include <stdexcept>

#include "src/nn/recurrent.h"
#include "src/nn/transformer.h"
#include "src/text/catalogue.h"

namespace seqgrad::nn {

namespace {
[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }
}  // namespace

void ModelConfig::validate() const {
  choices::check("model", kind, choices::kinds);
  if ((vocab > 0) == (features > 0)) bad(text::msg("nn.tokens_or_features"));
  if (vocab < 0 || features < 0) bad(text::msg("nn.vocab_features_negative"));
  if (out_dim <= 0) bad(text::msg("nn.positive_got", "out_dim", out_dim));
  if (d_model <= 0) bad(text::msg("nn.positive_got", "d_model", d_model));
  if (layers <= 0) bad(text::msg("nn.positive_got", "layers", layers));
  if (d_model > kMaxDModel) bad(text::msg("nn.at_most_got", "d_model", kMaxDModel, d_model));
  if (layers > kMaxLayers) bad(text::msg("nn.at_most_got", "layers", kMaxLayers, layers));
  if (max_len < 0) bad(text::msg("nn.not_negative", "max_len"));
  if (!(dropout >= 0 && dropout < 1)) bad(text::msg("nn.dropout_range", std::to_string(dropout)));
  choices::check("embed init", embed_init, choices::embed_inits);
  if (recurrent()) {
    choices::check("init", init, choices::recurrent_inits);
    return;
  }
  if (heads <= 0) bad(text::msg("nn.positive_got", "heads", heads));
  if (heads > kMaxHeads) bad(text::msg("nn.at_most_got", "heads", kMaxHeads, heads));
  if (d_model % heads != 0) bad(text::msg("nn.heads_divide", d_model, heads));
  if (ffn_mult <= 0) bad(text::msg("nn.positive_got", "ffn_mult", ffn_mult));
  if (ffn_mult > kMaxFfnMult) bad(text::msg("nn.at_most_got", "ffn_mult", kMaxFfnMult, ffn_mult));
  if (pos == choices::PositionalEncoding::learned && max_len <= 0) bad(text::msg("nn.learned_needs_max_len"));
  if (pos == choices::PositionalEncoding::rope && (d_model / heads) % 2 != 0)
    bad(text::msg("nn.rope_even", d_model / heads));
  if (tie_kv && value_proj) bad(text::msg("nn.tie_kv_value_proj"));
  if (attention == choices::Attention::linear && !scale_attention) bad(text::msg("nn.linear_no_scale"));
  if (pos == choices::PositionalEncoding::sinusoidal && d_model % 2 != 0) bad(text::msg("nn.sinusoidal_even", d_model));
}

void to_json(nlohmann::json& j, const ModelConfig& c) {
  j = {{"kind", c.kind},
       {"vocab", c.vocab},
       {"features", c.features},
       {"out_dim", c.out_dim},
       {"d_model", c.d_model},
       {"layers", c.layers},
       {"init", c.init},
       {"embed_init", c.embed_init},
       {"heads", c.heads},
       {"ffn_mult", c.ffn_mult},
       {"ffn", c.ffn},
       {"activation", choices::to_string(c.activation)},
       {"pos", choices::to_string(c.pos)},
       {"attention", choices::to_string(c.attention)},
       {"pre_ln", c.pre_ln},
       {"causal", c.causal},
       {"scale_attention", c.scale_attention},
       {"tie_qk", c.tie_qk},
       {"value_proj", c.value_proj},
       {"tie_kv", c.tie_kv},
       {"max_len", c.max_len},
       {"dropout", c.dropout}};
}

int json_int(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_integer()) bad(text::msg("nn.json_not_whole", key, v.dump()));
  const bool in_range = v.is_number_unsigned() ? v.get<std::uint64_t>() <= INT_MAX
                                               : v.get<std::int64_t>() >= INT_MIN && v.get<std::int64_t>() <= INT_MAX;
  if (!in_range) bad(text::msg("nn.json_out_of_range", key, v.dump()));
  return v.get<int>();
}

void from_json(const nlohmann::json& j, ModelConfig& c) {
  c.kind = j.at("kind").get<std::string>();
  c.vocab = json_int(j, "vocab");
  c.features = json_int(j, "features");
  c.out_dim = json_int(j, "out_dim");
  c.d_model = json_int(j, "d_model");
  c.layers = json_int(j, "layers");
  c.init = j.at("init").get<std::string>();
  c.embed_init = j.at("embed_init").get<std::string>();
  c.heads = json_int(j, "heads");
  c.ffn_mult = json_int(j, "ffn_mult");
  c.ffn = j.at("ffn").get<bool>();
  c.activation = choices::parse_activation(j.at("activation").get<std::string>());
  c.pos = choices::parse_positional_encoding(j.at("pos").get<std::string>());
  c.pre_ln = j.at("pre_ln").get<bool>();
  c.causal = j.at("causal").get<bool>();
  c.scale_attention = j.at("scale_attention").get<bool>();
  // Absent from the checkpoints written before they existed: the paper's attention.
  c.tie_qk = j.contains("tie_qk") ? j.at("tie_qk").get<bool>() : false;
  c.value_proj = j.contains("value_proj") ? j.at("value_proj").get<bool>() : true;
  c.tie_kv = j.contains("tie_kv") ? j.at("tie_kv").get<bool>() : false;
  c.attention = j.contains("attention") ? choices::parse_attention(j.at("attention").get<std::string>())
                                        : choices::Attention::softmax;
  c.max_len = json_int(j, "max_len");
  c.dropout = j.at("dropout").get<double>();
}

InputLayer::InputLayer(const ModelConfig& config, int width, Init embed_init, ag::Rng& rng)
    : features_(config.features) {
  if (config.vocab > 0) {
    embed_ = std::make_unique<Embedding>(config.vocab, width, rng, embed_init);
    add_module("embed", *embed_);
  } else {
    project_ = std::make_unique<Linear>(config.features, width, rng);
    add_module("project", *project_);
  }
}

ag::Tensor InputLayer::forward(const SequenceInput& in, bool split, std::vector<ag::Tensor>& positions) const {
  // One x_t per position, built from column t of the batch, then stacked: the
  // same values as the whole-batch path, but each x_t is a node of its own.
  auto column = [&](int t) {
    if (embed_) {
      std::vector<int> ids(static_cast<std::size_t>(in.B));
      for (int b = 0; b < in.B; ++b)
        ids[static_cast<std::size_t>(b)] = in.tokens[static_cast<std::size_t>(b * in.T + t)];
      return embed_->forward(ids, {in.B});
    }
    std::vector<ag::Scalar> f(static_cast<std::size_t>(in.B * features_));
    for (int b = 0; b < in.B; ++b)
      for (int k = 0; k < features_; ++k)
        f[static_cast<std::size_t>(b * features_ + k)] =
            in.features[static_cast<std::size_t>((b * in.T + t) * features_ + k)];
    return project_->forward(ag::Tensor({in.B, features_}, std::move(f)));
  };
  if (split) {
    positions.clear();
    for (int t = 0; t < in.T; ++t) positions.push_back(column(t));
    return ag::stack(positions, 1);
  }
  if (embed_) return embed_->forward(in.tokens, {in.B, in.T});
  std::vector<ag::Scalar> f(in.features.begin(), in.features.end());
  return project_->forward(ag::Tensor({in.B, in.T, features_}, std::move(f)));
}

void check_input(const ModelConfig& config, const SequenceInput& in) {
  if (in.B <= 0 || in.T <= 0) bad(text::msg("nn.batch_empty", in.B, in.T));
  if (config.max_len > 0 && in.T > config.max_len) {
    bad(text::msg("nn.beyond_max_len", in.T, config.max_len));
  }
  if (config.vocab > 0) {
    if (in.tokens.size() != static_cast<std::size_t>(in.B) * in.T) bad(text::msg("nn.wrong_token_count"));
    for (int id : in.tokens) {
      if (id < 0 || id >= config.vocab) {
        bad(text::msg("nn.token_outside", id, config.vocab));
      }
    }
  } else if (in.features.size() != static_cast<std::size_t>(in.B) * in.T * config.features) {
    bad(text::msg("nn.wrong_feature_count"));
  }
}

double count_parameters(const ModelConfig& c) {
  const double d = c.d_model, out = c.out_dim;
  double n = c.vocab > 0 ? c.vocab * d : c.features * d + d;  // input: Embedding, or Linear with its bias
  n += d * out + out;                                         // head
  if (c.recurrent()) {
    const double gates = c.kind == "lstm" ? 4 : c.kind == "gru" ? 3 : 1;
    const double biases = c.kind == "gru" ? 2 : 1;  // the GRU keeps b_x and b_h apart
    return n + c.layers * (2 * gates * d * d + biases * gates * d);
  }
  const double wide = static_cast<double>(c.ffn_mult) * d;
  const double projections = 4 - (c.tie_qk ? 1 : 0) - (c.value_proj ? 0 : 1);  // W_Q, W_K, W_V, W_O
  const double block = projections * (d * d + d) + 2 * d + (c.ffn ? 2 * d * wide + wide + d + 2 * d : 0);
  if (c.pos == choices::PositionalEncoding::learned) n += c.max_len * d;
  return n + c.layers * block + (c.pre_ln ? 2 * d : 0);
}

double estimate_training_bytes(const ModelConfig& c, int B, int T) {
  const double scalar = sizeof(ag::Scalar), bt = static_cast<double>(B) * T, d = c.d_model;
  // Weights and gradients, and the optimiser's two float64 moments.
  const double state = count_parameters(c) * (2 * scalar + 16);
  double kept = bt * (d + c.out_dim) * 4;  // embeddings, logits, their gradients
  if (c.recurrent()) {
    // The vanilla RNN is one fused op per layer; a gated cell keeps each gate, its activation and its gradient.
    const double gates = c.kind == "lstm" ? 4 : c.kind == "gru" ? 3 : 0;
    kept += c.layers * bt * d * (gates > 0 ? 7 * (gates + 1) : 6);
  } else {
    const double wide = c.ffn ? static_cast<double>(c.ffn_mult) * d : 0;
    // The fused softmax attention keeps its weights once; linear attention, built from ops, keeps its scores
    // before and after the mask, and their gradients.
    const double maps = c.attention == choices::Attention::linear ? 4 : 1;
    kept += c.layers * (bt * d * 16 + bt * wide * 3 + maps * B * c.heads * static_cast<double>(T) * T);
  }
  return 64e6 + state + kept * scalar;  // 64 MB: the program, its libraries, the buffer pool's slack
}

std::unique_ptr<SequenceModel> make_model(const ModelConfig& config, std::uint64_t seed) {
  config.validate();
  if (config.recurrent()) return std::make_unique<RecurrentModel>(config, seed);
  return std::make_unique<Transformer>(config, seed);
}

}  // namespace seqgrad::nn
