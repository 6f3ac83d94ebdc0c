// A wrong solution of `linear-attention`: each position read with its key instead of its query
// expect: sequence linear-attention.hint.read_with_k
#include "src/exercises/exercise.h"

namespace exercise {

// elu(x) + 1: x + 1 above 0, e^x below, never 0 (so the normaliser is never 0 either)
Tensor phi(const Tensor& x) { return ag::relu(x) + ag::exp(-ag::relu(-x)); }

LinearState linear_update(const LinearState& state, const Tensor& k_t, const Tensor& v_t) {
  const int B = k_t.size(0), D = k_t.size(1), E = v_t.size(1);
  const Tensor fk = phi(k_t);
  // phi(k_t) v_t^T for each sequence: a column (D, 1) times a row (1, E)
  const Tensor outer = ag::matmul(ag::reshape(fk, {B, D, 1}), ag::reshape(v_t, {B, 1, E}));
  // new tensors: the state before stays as it was (its nodes are in the graph)
  return {state.S + outer, state.z + fk};
}

Tensor linear_read(const LinearState& state, const Tensor& q_t) {
  const int B = q_t.size(0), D = q_t.size(1), E = state.S.size(2);
  const Tensor fq = ag::reshape(phi(q_t), {B, 1, D});                    // a row per sequence
  const Tensor numerator = ag::matmul(fq, state.S);                      // phi(q_t)^T S, (B, 1, E)
  const Tensor total = ag::matmul(fq, ag::reshape(state.z, {B, D, 1}));  // phi(q_t)^T z, (B, 1, 1)
  const Tensor ones({1, E}, std::vector<Scalar>(static_cast<std::size_t>(E), 1));
  // the total copied to each of the E columns (@ ones), so that it divides the whole row
  return ag::reshape(numerator / (ag::matmul(total, ones) + Scalar(1e-6)), {B, E});
}

Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int B = q.size(0), T = q.size(1), D = q.size(2), E = v.size(2);
  LinearState state{Tensor::zeros({B, D, E}), Tensor::zeros({B, D})};
  std::vector<Tensor> out;
  for (int t = 0; t < T; ++t) {
    state = linear_update(state, ag::select(k, 1, t), ag::select(v, 1, t));  // position t joins the state first,
    out.push_back(linear_read(state, ag::select(k, 1, t)));                  // then query t reads it
  }
  return ag::stack(out, 1);
}

}  // namespace exercise
