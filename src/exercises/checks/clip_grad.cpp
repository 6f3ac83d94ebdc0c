// Checks of `clip-grad`: clipping by the global norm against the engine's
// nn::clip_grad_norm (src/nn/optim.cpp), on lists of gradients of several
// sizes and scales, above and under the limit, and all zero.
#include <algorithm>
#include <cmath>

#include "src/exercises/check.h"
#include "src/exercises/exercise.h"
#include "src/nn/optim.h"

using namespace seqgrad::exercises;
namespace nn = seqgrad::nn;

namespace {

using Grads = std::vector<std::vector<Scalar>>;

Grads random_grads(const std::vector<int>& sizes, ag::Rng& rng, Scalar scale) {
  Grads g;
  for (int n : sizes) g.push_back(n ? random_tensor({n}, rng, scale).data() : std::vector<Scalar>{});
  return g;
}

// The engine's clipping, on leaves that hold copies of the gradients.
std::pair<Grads, double> engine(const Grads& grads, double max_norm) {
  std::vector<Tensor> params;
  for (const auto& g : grads) {
    Tensor p({static_cast<int>(g.size())}, std::vector<Scalar>(g.size(), 0), true);
    p.grad() = g;
    params.push_back(p);
  }
  const double norm = nn::clip_grad_norm(params, max_norm);
  Grads out;
  for (const Tensor& p : params) out.push_back(p.grad());
  return {out, norm};
}

double sum_of_squares(const std::vector<Scalar>& g) {
  double s = 0;
  for (Scalar x : g) s += double(x) * double(x);
  return s;
}

// What the usual mistakes give: each gradient clipped by its own norm, each
// value clamped to [-max, max], every list scaled even under the limit, the
// factor upside down, the squares' sum taken for the norm.
Grads per_tensor(Grads g, double max_norm) {
  for (auto& v : g) {
    const double n = std::sqrt(sum_of_squares(v));
    if (n > max_norm)
      for (Scalar& x : v) x = static_cast<Scalar>(x * max_norm / n);
  }
  return g;
}
Grads by_value(Grads g, double max_norm) {
  for (auto& v : g)
    for (Scalar& x : v) x = static_cast<Scalar>(std::clamp(double(x), -max_norm, max_norm));
  return g;
}
Grads scaled(Grads g, double factor) {
  for (auto& v : g)
    for (Scalar& x : v) x = static_cast<Scalar>(x * factor);
  return g;
}

std::vector<Scalar> flat(const Grads& g) {
  std::vector<Scalar> out;
  for (const auto& v : g) out.insert(out.end(), v.begin(), v.end());
  return out;
}

double sum_of_norms(const Grads& grads) {
  double s = 0;
  for (const auto& g : grads) s += std::sqrt(sum_of_squares(g));
  return s;
}

// The norm the student returned for `grads` (before clipping) against `norm`, the engine's; the usual wrong ones
// named: the norm after clipping, the squares' sum, the last gradient's norm alone (a total overwritten in the loop),
// the gradients' norms added up.
void expect_norm(const Checker& c, const Grads& grads, double max_norm, double norm, double returned) {
  expect_close(c, c.tr("returned_norm"), {1}, {static_cast<Scalar>(norm)}, {static_cast<Scalar>(returned)}, 1e-12,
               c.tr("hint.norm"),
               {{{static_cast<Scalar>(std::min(norm, max_norm))}, c.tr("hint.returned_after")},
                {{static_cast<Scalar>(norm * norm)}, c.tr("hint.no_sqrt")},
                {{static_cast<Scalar>(std::sqrt(sum_of_squares(grads.back())))}, c.tr("hint.per_tensor")},
                {{static_cast<Scalar>(sum_of_norms(grads))}, c.tr("hint.sum_of_norms")}});
}

// The student's clipping of `grads` against the engine's: the norm returned, then every gradient.
void expect_clipped(const Checker& c, const Grads& grads, double max_norm) {
  const auto [expected, norm] = engine(grads, max_norm);
  Grads got = grads;
  expect_norm(c, grads, max_norm, norm, exercise::clip_grad_norm(got, max_norm));
  if (got.size() != grads.size())
    throw CheckFailure{c.shared("check.size_detail", c.tr("gradients"), grads.size(), got.size()),
                       c.tr("hint.in_place")};
  for (std::size_t i = 0; i < grads.size(); ++i)
    expect_shape(c, c.tr("gradients"), {static_cast<int>(grads[i].size())}, {static_cast<int>(got[i].size())});
  const double total = norm * norm;
  expect_close(c, c.tr("gradients"), {static_cast<int>(flat(expected).size())}, flat(expected), flat(got), 1e-12,
               c.tr("hint.scale"),
               {{flat(grads), c.tr("hint.unchanged")},  // first: clamping that changes nothing must not be named
                {flat(per_tensor(grads, max_norm)), c.tr("hint.per_tensor")},
                {flat(by_value(grads, max_norm)), c.tr("hint.by_value")},
                {flat(scaled(grads, max_norm / norm)), c.tr("hint.always")},
                {flat(scaled(grads, norm > max_norm ? norm / max_norm : 1.0)), c.tr("hint.inverted")},
                {flat(scaled(grads, total > max_norm ? max_norm / total : 1.0)), c.tr("hint.no_sqrt")}});
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "clip-grad");
  ag::Rng rng(1731);
  // Three gradients of norms about 1.7, 0.6 and 3: together about 3.5.
  const Grads three = random_grads({9, 1, 30}, rng, 1);
  c.run("norm", [&] {
    // The norm over all the gradients together, returned before clipping.
    Grads g = three;
    expect_norm(c, three, 1.0, engine(three, 1.0).second, exercise::clip_grad_norm(g, 1.0));
  });
  // At 0.5, values of the gradients lie past the limit: clamping each value (a slip) then changes some of them.
  c.run("over-limit", [&] { expect_clipped(c, three, 0.5); });
  c.run("under-limit", [&] { expect_clipped(c, three, 10.0); });
  c.run("zero", [&] {
    Grads zero{std::vector<Scalar>(4, 0), std::vector<Scalar>(3, 0)};
    const double returned = exercise::clip_grad_norm(zero, 1.0);
    expect_close(c, c.tr("returned_norm"), {1}, {0}, {static_cast<Scalar>(returned)}, 1e-12, c.tr("hint.zero"));
    expect_close(c, c.tr("gradients"), {7}, std::vector<Scalar>(7, 0), flat(zero), 1e-12, c.tr("hint.zero"));
  });
  c.run("other-limits", [&] {
    // Other limits and scales, one gradient alone, an empty one in a list, the norm just over the limit.
    expect_clipped(c, random_grads({12}, rng, 5), 0.25);
    expect_clipped(c, random_grads({5, 0, 17, 2}, rng, 1e-3), 1e-4);
    expect_clipped(c, random_grads({64, 64}, rng, 100), 3e3);
    const Grads g = random_grads({6, 6}, rng, 1);
    double total = sum_of_squares(g[0]) + sum_of_squares(g[1]);
    expect_clipped(c, g, std::sqrt(total) * (1 - 1e-9));
  });
  return c.finish();
}
