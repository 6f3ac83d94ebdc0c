#include "src/nn/recurrent.h"

namespace seqgrad::nn {

namespace {
// A (in + hidden) x (gates * hidden) pair of weights: W_x drawn with the
// default scheme, W_h one (H, H) block per gate with the recurrent scheme.
ag::Tensor recurrent_weight(int hidden, int gates, Init init, ag::Rng& rng) {
  if (gates == 1) return init_matrix(hidden, hidden, init, rng);
  std::vector<ag::Tensor> blocks;
  for (int g = 0; g < gates; ++g) blocks.push_back(init_matrix(hidden, hidden, init, rng));
  return ag::concat(blocks, 1);
}
}  // namespace

RecurrentState RecurrentCell::initial(int B) const { return {ag::Tensor::zeros({B, hidden_}), {}}; }

RNNCell::RNNCell(int in, int hidden, Init recurrent_init, ag::Rng& rng) : RecurrentCell(hidden) {
  W_x = add_parameter("W_x", init_matrix(in, hidden, Init::uniform, rng));
  W_h = add_parameter("W_h", recurrent_weight(hidden, 1, recurrent_init, rng));
  b = add_parameter("b", init_vector(hidden, Init::uniform, hidden, rng));
}

RecurrentState RNNCell::step(const ag::Tensor& x, const RecurrentState& s) const {
  // x: (B, in), h: (B, H) -> (B, H)
  return {ag::tanh(ag::matmul(x, W_x) + ag::matmul(s.h, W_h) + b), {}};
}

ag::Tensor RNNCell::sequence(const ag::Tensor& x) const {
  return ag::rnn_tanh(x, ag::Tensor::zeros({x.size(0), hidden_}), W_x, W_h, b);
}

LSTMCell::LSTMCell(int in, int hidden, Init recurrent_init, ag::Rng& rng) : RecurrentCell(hidden) {
  W_x = add_parameter("W_x", init_matrix(in, 4 * hidden, Init::uniform, rng));
  W_h = add_parameter("W_h", recurrent_weight(hidden, 4, recurrent_init, rng));
  ag::Tensor bias = init_vector(4 * hidden, Init::uniform, hidden, rng);
  for (int j = hidden; j < 2 * hidden; ++j) bias.data()[static_cast<std::size_t>(j)] = 1;  // forget gate
  b = add_parameter("b", bias);
}

RecurrentState LSTMCell::initial(int B) const {
  return {ag::Tensor::zeros({B, hidden_}), ag::Tensor::zeros({B, hidden_})};
}

RecurrentState LSTMCell::step(const ag::Tensor& x, const RecurrentState& s) const {
  // x: (B, in), h, c: (B, H); gates: (B, 4H) = [i | f | g | o]
  const int H = hidden_;
  ag::Tensor gates = ag::matmul(x, W_x) + ag::matmul(s.h, W_h) + b;
  ag::Tensor i = ag::sigmoid(ag::slice(gates, 1, 0, H));
  ag::Tensor f = ag::sigmoid(ag::slice(gates, 1, H, 2 * H));
  ag::Tensor g = ag::tanh(ag::slice(gates, 1, 2 * H, 3 * H));
  ag::Tensor o = ag::sigmoid(ag::slice(gates, 1, 3 * H, 4 * H));
  ag::Tensor c = f * s.c + i * g;
  return {o * ag::tanh(c), c};
}

ag::Tensor LSTMCell::sequence(const ag::Tensor& x) const {
  const RecurrentState zero = initial(x.size(0));
  return ag::lstm(x, zero.h, zero.c, W_x, W_h, b);
}

GRUCell::GRUCell(int in, int hidden, Init recurrent_init, ag::Rng& rng) : RecurrentCell(hidden) {
  W_x = add_parameter("W_x", init_matrix(in, 3 * hidden, Init::uniform, rng));
  W_h = add_parameter("W_h", recurrent_weight(hidden, 3, recurrent_init, rng));
  b_x = add_parameter("b_x", init_vector(3 * hidden, Init::uniform, hidden, rng));
  b_h = add_parameter("b_h", init_vector(3 * hidden, Init::uniform, hidden, rng));
}

RecurrentState GRUCell::step(const ag::Tensor& x, const RecurrentState& s) const {
  // x: (B, in), h: (B, H); both projections (B, 3H) = [r | z | n]
  const int H = hidden_;
  ag::Tensor gx = ag::matmul(x, W_x) + b_x;
  ag::Tensor gh = ag::matmul(s.h, W_h) + b_h;
  ag::Tensor r = ag::sigmoid(ag::slice(gx, 1, 0, H) + ag::slice(gh, 1, 0, H));
  ag::Tensor z = ag::sigmoid(ag::slice(gx, 1, H, 2 * H) + ag::slice(gh, 1, H, 2 * H));
  ag::Tensor n = ag::tanh(ag::slice(gx, 1, 2 * H, 3 * H) + r * ag::slice(gh, 1, 2 * H, 3 * H));
  // h_t = (1 - z) n + z h = n + z (h - n)
  return {n + z * (s.h - n), {}};
}

ag::Tensor GRUCell::sequence(const ag::Tensor& x) const {
  return ag::gru(x, ag::Tensor::zeros({x.size(0), hidden_}), W_x, W_h, b_x, b_h);
}

RecurrentModel::RecurrentModel(const ModelConfig& config, std::uint64_t seed) : SequenceModel(config) {
  ag::Rng rng(seed);
  const int H = config.d_model;
  const Init embed_init = config.embed_init == "auto" ? Init::normal : parse_init(config.embed_init);
  const Init recurrent_init = parse_init(config.init);
  input_ = std::make_unique<InputLayer>(config, H, embed_init, rng);
  add_module("input", *input_);
  for (int l = 0; l < config.layers; ++l) {
    if (config.kind == "rnn") cells_.push_back(std::make_unique<RNNCell>(H, H, recurrent_init, rng));
    if (config.kind == "lstm") cells_.push_back(std::make_unique<LSTMCell>(H, H, recurrent_init, rng));
    if (config.kind == "gru") cells_.push_back(std::make_unique<GRUCell>(H, H, recurrent_init, rng));
    add_module("layers." + std::to_string(l), *cells_.back());
  }
  head_ = std::make_unique<Linear>(H, config.out_dim, rng);
  add_module("head", *head_);
}

ForwardOutput RecurrentModel::forward(const SequenceInput& in, const ForwardOptions& options) const {
  check_input(config_, in);
  ForwardOutput out;
  const Capture& capture = options.capture;
  out.inputs = input_->forward(in, capture.positions, out.positions);  // (B, T, H)
  if (!capture.hidden && !capture.positions) {                         // the plain path: one op per layer
    ag::Tensor x = out.inputs;
    for (std::size_t l = 0; l < cells_.size(); ++l) {
      x = cells_[l]->sequence(x);  // (B, T, H)
      if (options.training && config_.dropout > 0 && l + 1 < cells_.size()) {
        x = ag::dropout(x, static_cast<ag::Scalar>(config_.dropout), *options.rng, true);
      }
    }
    out.logits = head_->forward(x);
    return out;
  }
  if (capture.hidden) out.hidden.resize(cells_.size());
  std::vector<RecurrentState> state;
  for (const auto& cell : cells_) state.push_back(cell->initial(in.B));
  std::vector<ag::Tensor> top;  // the last layer's h_t, (B, H) each
  for (int t = 0; t < in.T; ++t) {
    // The one sequential dependency of the chapter: step t needs step t - 1.
    ag::Tensor x = capture.positions ? out.positions[static_cast<std::size_t>(t)] : ag::select(out.inputs, 1, t);
    for (std::size_t l = 0; l < cells_.size(); ++l) {
      state[l] = cells_[l]->step(x, state[l]);
      if (capture.hidden) out.hidden[l].push_back(state[l].h);
      x = state[l].h;
      if (options.training && config_.dropout > 0 && l + 1 < cells_.size()) {
        x = ag::dropout(x, static_cast<ag::Scalar>(config_.dropout), *options.rng, true);
      }
    }
    top.push_back(x);
  }
  if (capture.positions) {
    for (const ag::Tensor& h : top) out.outputs.push_back(head_->forward(h));  // (B, H) -> (B, out_dim) each
    out.logits = ag::stack(out.outputs, 1);
  } else {
    out.logits = head_->forward(ag::stack(top, 1));  // (B, T, H) -> (B, T, out_dim)
  }
  return out;
}

}  // namespace seqgrad::nn
