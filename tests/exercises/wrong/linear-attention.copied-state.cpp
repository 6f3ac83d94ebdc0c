// A wrong solution of `linear-attention`: the state updated in plain loops on copied numbers, outside the graph
// expect: gradients linear-attention.hint.cut_k
#include "src/exercises/exercise.h"

namespace exercise {

// elu(x) + 1: x + 1 above 0, e^x below, never 0 (so the normaliser is never 0 either)
Tensor phi(const Tensor& x) { return ag::relu(x) + ag::exp(-ag::relu(-x)); }

LinearState linear_update(const LinearState& state, const Tensor& k_t, const Tensor& v_t) {
  const int B = k_t.size(0), D = k_t.size(1), E = v_t.size(1);
  const Tensor fk = phi(k_t);
  LinearState next{Tensor(state.S.shape(), state.S.data()), Tensor(state.z.shape(), state.z.data())};
  for (int b = 0; b < B; ++b)
    for (int d = 0; d < D; ++d) {
      const Scalar f = fk.data()[static_cast<std::size_t>(b * D + d)];
      next.z.data()[static_cast<std::size_t>(b * D + d)] += f;
      for (int e = 0; e < E; ++e)
        next.S.data()[static_cast<std::size_t>((b * D + d) * E + e)] +=
            f * v_t.data()[static_cast<std::size_t>(b * E + e)];
    }
  return next;
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
    out.push_back(linear_read(state, ag::select(q, 1, t)));                  // then query t reads it
  }
  return ag::stack(out, 1);
}

}  // namespace exercise
