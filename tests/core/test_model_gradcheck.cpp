// A finite-difference check of whole tiny models, every parameter, in float64.
#include "seqgrad_catch.hpp"

#include "autograd/gradcheck.h"
#include "src/nn/model.h"

using seqgrad::nn::ModelConfig;

namespace {
ag::GradcheckResult check_model(ModelConfig c) {
  c.vocab = 5;
  c.out_dim = 5;
  c.d_model = c.kind == "transformer" ? 8 : 4;
  c.max_len = 4;
  auto model = seqgrad::nn::make_model(c, 3);
  const seqgrad::nn::SequenceInput in{2, 4, {1, 4, 0, 2, 3, 3, 1, 0}, {}};
  // The function reads the model's parameters, which gradcheck nudges in place.
  return ag::gradcheck([&](const std::vector<ag::Tensor>&) { return model->forward(in).logits; }, model->parameters());
}
}  // namespace

TEST_CASE("a whole tiny RNN, LSTM and GRU pass gradcheck", "[gradcheck][models]") {
  for (const char* kind : {"rnn", "lstm", "gru"}) {
    ModelConfig c;
    c.kind = kind;
    c.layers = 2;
    const ag::GradcheckResult r = check_model(c);
    INFO(kind << ": max rel error " << r.max_rel_error << " over " << r.checked);
    CHECK(r.checked > 50);
    CHECK(r.passed);
  }
}

TEST_CASE("a whole tiny Transformer passes gradcheck, in each variant", "[gradcheck][models]") {
  struct Variant {
    const char* pos;
    bool pre_ln, ffn;
    const char* activation;
  };
  for (const Variant& v : {Variant{"sinusoidal", false, true, "relu"}, Variant{"learned", true, true, "gelu"},
                           Variant{"rope", false, false, "relu"}, Variant{"none", true, true, "relu"}}) {
    ModelConfig c;
    c.kind = "transformer";
    c.heads = 2;
    c.layers = 2;
    c.pos = seqgrad::nn::choices::parse_positional_encoding(v.pos);
    c.pre_ln = v.pre_ln;
    c.ffn = v.ffn;
    c.activation = seqgrad::nn::choices::parse_activation(v.activation);
    const ag::GradcheckResult r = check_model(c);
    INFO(v.pos << (v.pre_ln ? " pre-LN" : " post-LN") << ": max rel error " << r.max_rel_error << " over "
               << r.checked);
    CHECK(r.checked > 500);
    CHECK(r.passed);
  }
}
