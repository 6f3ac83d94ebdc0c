// The recurrent contenders: the chapter's vanilla (Elman) RNN and the two gated
// fixes it names, LSTM and GRU. Each cell runs one time step at a time, so
// that every hidden state h_t is a graph node whose gradient can be inspected,
// or, when nothing inside is looked at, a whole sequence as one fused op.
//
// Row-vector convention: h_t = tanh(x_t W_x + h_{t-1} W_h + b), with W_h (H, H);
// the chapter's W_h h_{t-1} is the same map with W_h transposed.
#pragma once

#include <memory>
#include <vector>

#include "src/nn/model.h"

namespace seqgrad::nn {

// What a cell carries from one step to the next: h, and for the LSTM the cell c.
struct RecurrentState {
  ag::Tensor h, c;  // (B, H)
};

class RecurrentCell : public Module {
 public:
  virtual RecurrentState step(const ag::Tensor& x, const RecurrentState& state) const = 0;  // x (B, in)
  virtual RecurrentState initial(int B) const;
  // Every step over x (B, T, in) from the initial state -> h_t as (B, T, H): the
  // same values as T calls of step, as one fused op (no node per step to inspect).
  virtual ag::Tensor sequence(const ag::Tensor& x) const = 0;
  int hidden() const { return hidden_; }

 protected:
  explicit RecurrentCell(int hidden) : hidden_(hidden) {}
  int hidden_;
};

// h_t = tanh(x_t W_x + h_{t-1} W_h + b)
class RNNCell : public RecurrentCell {
 public:
  RNNCell(int in, int hidden, Init recurrent_init, ag::Rng& rng);
  RecurrentState step(const ag::Tensor& x, const RecurrentState& state) const override;
  ag::Tensor sequence(const ag::Tensor& x) const override;
  ag::Tensor W_x, W_h, b;
};

// gates = x W_x + h W_h + b, split as input i, forget f, candidate g, output o:
// c_t = f * c_{t-1} + i * g,  h_t = o * tanh(c_t). The forget bias starts at 1
// so that the cell begins by keeping its memory.
class LSTMCell : public RecurrentCell {
 public:
  LSTMCell(int in, int hidden, Init recurrent_init, ag::Rng& rng);
  RecurrentState step(const ag::Tensor& x, const RecurrentState& state) const override;
  ag::Tensor sequence(const ag::Tensor& x) const override;
  RecurrentState initial(int B) const override;
  ag::Tensor W_x, W_h, b;
};

// r = sigma(x W_xr + h W_hr + b_r), z = sigma(x W_xz + h W_hz + b_z),
// n = tanh(x W_xn + b_xn + r * (h W_hn + b_hn)), h_t = (1 - z) * n + z * h_{t-1}.
class GRUCell : public RecurrentCell {
 public:
  GRUCell(int in, int hidden, Init recurrent_init, ag::Rng& rng);
  RecurrentState step(const ag::Tensor& x, const RecurrentState& state) const override;
  ag::Tensor sequence(const ag::Tensor& x) const override;
  ag::Tensor W_x, W_h, b_x, b_h;
};

// Input layer, `layers` stacked cells, and a Linear head on the top layer's h_t.
class RecurrentModel : public SequenceModel {
 public:
  RecurrentModel(const ModelConfig& config, std::uint64_t seed);
  ForwardOutput forward(const SequenceInput& input, const ForwardOptions& options = {}) const override;
  const RecurrentCell& cell(int layer) const { return *cells_[static_cast<std::size_t>(layer)]; }

 private:
  std::unique_ptr<InputLayer> input_;
  std::vector<std::unique_ptr<RecurrentCell>> cells_;
  std::unique_ptr<Linear> head_;
};

}  // namespace seqgrad::nn
