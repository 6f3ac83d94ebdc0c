// Checks of `bptt-by-hand`: the student's backpropagation through time, done
// by hand, against the gradients autograd keeps for each hidden state h_t.
#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

// One RNN and a loss L = sum_t sum(h_t * direct_t), so that the gradient
// reaching h_t from its own output is direct_t; `total` is dL/dh_t as autograd
// computes it, through every later step.
struct Case {
  int B, T, H;
  std::vector<Scalar> hs, direct, W_h, total;
};

Case make_case(int B, int T, int H, ag::Rng& rng) {
  const int I = 3;
  const Tensor W_x = random_tensor({I, H}, rng, Scalar(0.8)), W_h = random_tensor({H, H}, rng, Scalar(0.8)),
               b = random_tensor({H}, rng, Scalar(0.2)), x = random_tensor({B, T, I}, rng);
  Tensor h = Tensor::zeros({B, H});
  Tensor loss = Tensor::scalar(0);
  const Tensor direct = random_tensor({B, T, H}, rng);
  std::vector<Tensor> hs;
  for (int t = 0; t < T; ++t) {
    const Tensor x_t = ag::reshape(ag::slice(x, 1, t, t + 1), {B, I});
    h = ag::tanh(ag::matmul(x_t, W_x) + ag::matmul(h, W_h) + b);
    h.retain_grad();
    hs.push_back(h);
    loss = loss + ag::sum(h * ag::reshape(ag::slice(direct, 1, t, t + 1), {B, H}));
  }
  loss.backward();
  Case k{B, T, H, ag::stack(hs, 1).data(), direct.data(), W_h.data(), {}};
  std::vector<Tensor> grads;
  for (const Tensor& ht : hs) grads.push_back(Tensor(ht.shape(), ht.grad()));
  k.total = ag::stack(grads, 1).data();
  return k;
}

// The usual slips, computed the way the student would: without the tanh
// factor, with W_h where W_h^T belongs, with the tanh factor of h_t where it is h_{t+1}'s, nothing carried back
// (g_t = direct_t), or direct_{t+1} carried back where g_{t+1} belongs (one step's reach, not the whole future's).
enum class Slip { no_tanh, not_transposed, wrong_step, no_carry, direct_only };
std::vector<Scalar> with_slip(const Case& k, Slip slip) {
  const int B = k.B, T = k.T, H = k.H;
  auto at = [&](int b, int t, int j) { return static_cast<std::size_t>((b * T + t) * H + j); };
  std::vector<Scalar> g = k.direct;
  if (slip == Slip::no_carry) return g;
  for (int t = T - 2; t >= 0; --t)
    for (int b = 0; b < B; ++b) {
      const int from = slip == Slip::wrong_step ? t : t + 1;
      std::vector<Scalar> a(static_cast<std::size_t>(H));
      for (int j = 0; j < H; ++j) {
        const Scalar h = k.hs[at(b, from, j)];
        const Scalar from_later = slip == Slip::direct_only ? k.direct[at(b, t + 1, j)] : g[at(b, t + 1, j)];
        a[static_cast<std::size_t>(j)] = from_later * (slip == Slip::no_tanh ? 1 : 1 - h * h);
      }
      for (int i = 0; i < H; ++i)
        for (int j = 0; j < H; ++j) {
          const Scalar w = slip == Slip::not_transposed ? k.W_h[static_cast<std::size_t>(j * H + i)]
                                                        : k.W_h[static_cast<std::size_t>(i * H + j)];
          g[at(b, t, i)] += a[static_cast<std::size_t>(j)] * w;
        }
    }
  return g;
}

void expect_case(const Checker& c, const Case& k, const std::string& hint) {
  const std::vector<Scalar> got = exercise::bptt(k.hs, k.direct, k.W_h, k.B, k.T, k.H);
  expect_close(c, "dL/dh", {k.B, k.T, k.H}, k.total, got, 1e-10, hint,
               {{with_slip(k, Slip::no_tanh), c.tr("hint.no_tanh")},
                {with_slip(k, Slip::not_transposed), c.tr("hint.not_transposed")},
                {with_slip(k, Slip::wrong_step), c.tr("hint.wrong_step")},
                {with_slip(k, Slip::no_carry), c.tr("hint.no_carry")},
                {with_slip(k, Slip::direct_only), c.tr("hint.direct_only")}});
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "bptt-by-hand");
  ag::Rng rng(1705);
  c.run("last-step", [&] { expect_case(c, make_case(2, 1, 3, rng), c.tr("hint.last_step")); });
  c.run("one-step-back", [&] { expect_case(c, make_case(1, 2, 3, rng), c.tr("hint.one_step")); });
  c.run("sequence", [&] { expect_case(c, make_case(3, 8, 4, rng), c.tr("hint.sequence")); });
  c.run("long-sequence", [&] { expect_case(c, make_case(2, 40, 6, rng), c.tr("hint.sequence")); });
  return c.finish();
}
