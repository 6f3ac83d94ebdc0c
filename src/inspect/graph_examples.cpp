#include "src/inspect/graph_examples.h"

#include <cmath>

#include "autograd/ops.h"

namespace seqgrad {

namespace {
constexpr int kInput = 2;   // width of each input vector x_t
constexpr int kHidden = 3;  // width of the hidden state / of q, k, v

ag::Tensor random_tensor(ag::Shape shape, ag::Rng& rng, bool requires_grad, const std::string& label) {
  std::vector<ag::Scalar> data(ag::numel(shape));
  for (auto& v : data) v = static_cast<ag::Scalar>(rng.normal() * 0.5);
  ag::Tensor t(std::move(shape), std::move(data), requires_grad);
  t.set_label(label);
  return t;
}

void check_steps(const char* what, int steps) {
  if (steps < 1 || steps > 16) {
    throw ag::ValueError(std::string(what) + ": steps must be between 1 and 16 (a drawing, not a model), got " +
                         std::to_string(steps));
  }
}
}  // namespace

ag::Tensor tiny_rnn_graph(int steps, std::uint64_t seed) {
  check_steps("tiny_rnn_graph", steps);
  ag::Rng rng(seed);
  ag::Tensor W_h = random_tensor({kHidden, kHidden}, rng, true, "W_h");
  ag::Tensor W_x = random_tensor({kInput, kHidden}, rng, true, "W_x");
  ag::Tensor b = random_tensor({kHidden}, rng, true, "b");
  ag::Tensor h = ag::Tensor::zeros({1, kHidden}).set_label("h_0");
  for (int t = 1; t <= steps; ++t) {
    // x_t asks for a gradient too: dL/dx_t is the signal the chapter follows back in time.
    ag::Tensor x = random_tensor({1, kInput}, rng, true, "x_" + std::to_string(t));
    // h_t = tanh(h_{t-1} W_h + x_t W_x + b), in the row-vector convention
    h = ag::tanh(ag::matmul(h, W_h) + ag::matmul(x, W_x) + b);
    h.set_label("h_" + std::to_string(t));
    h.retain_grad();  // so that the drawing shows |dL/dh_t| shrinking (or growing) step by step
  }
  ag::Tensor loss = ag::sum(h).set_label("loss");
  loss.backward();
  return loss;
}

ag::Tensor tiny_attention_graph(int steps, std::uint64_t seed) {
  check_steps("tiny_attention_graph", steps);
  ag::Rng rng(seed);
  ag::Tensor X = random_tensor({steps, kHidden}, rng, true, "X");
  ag::Tensor W_q = random_tensor({kHidden, kHidden}, rng, true, "W_q");
  ag::Tensor W_k = random_tensor({kHidden, kHidden}, rng, true, "W_k");
  ag::Tensor W_v = random_tensor({kHidden, kHidden}, rng, true, "W_v");
  ag::Tensor Q = ag::matmul(X, W_q).set_label("Q");
  ag::Tensor K = ag::matmul(X, W_k).set_label("K");
  ag::Tensor V = ag::matmul(X, W_v).set_label("V");
  const auto scale = static_cast<ag::Scalar>(1 / std::sqrt(static_cast<double>(kHidden)));
  ag::Tensor scores = (ag::matmul(Q, ag::transpose(K)) * scale).set_label("scores");
  ag::Tensor weights = ag::softmax(scores).set_label("attn_weights");
  ag::Tensor out = ag::matmul(weights, V).set_label("out");
  for (ag::Tensor* t : {&Q, &K, &V, &scores, &weights, &out}) t->retain_grad();
  ag::Tensor loss = ag::sum(ag::select(out, 0, steps - 1)).set_label("loss");
  loss.backward();
  return loss;
}

}  // namespace seqgrad
