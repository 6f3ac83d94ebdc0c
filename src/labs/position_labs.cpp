// Labs on positions: the sinusoidal encoding's shift matrices and why adding
// it does not drown the meaning, and the rotary encoding's relative distances.
#include <fmt/core.h>
#include <cmath>
#include <numbers>

#include "autograd/ops.h"
#include "src/labs/registry.h"
#include "src/nn/transformer.h"

namespace seqgrad::labs {

namespace {

LabResult pe_shift() {
  LabResult r;
  constexpr int C = 64, T = 128;
  const ag::Tensor pe = nn::sinusoidal_encoding(T, C);  // the model's own table
  auto at = [&](int pos, int c) { return static_cast<double>(pe.data()[static_cast<std::size_t>(pos * C + c)]); };
  bool holds = true;
  for (int k : {1, 5, 20}) {
    // M_k rotates each (sin, cos) pair by k w_i; it is built from w_i alone, never from pos.
    double worst = 0;
    for (int pos = 0; pos + k < T; ++pos) {
      for (int i = 0; 2 * i < C; ++i) {
        const double w = 1 / std::pow(10000.0, 2.0 * i / C), ck = std::cos(k * w), sk = std::sin(k * w);
        const double s = at(pos, 2 * i), c = at(pos, 2 * i + 1);
        worst = std::max({worst, std::abs(s * ck + c * sk - at(pos + k, 2 * i)),
                          std::abs(c * ck - s * sk - at(pos + k, 2 * i + 1))});
      }
    }
    r.figures["k"].push_back(k);
    r.figures["max_error"].push_back(worst);
    r.lines.push_back(
        fmt::format("PE(pos + {:>2}) = M_{} PE(pos) for every pos < {}: largest error {:.1e}", k, k, T - k, worst));
    holds = holds && worst < 1e-4;
  }
  // Random directions in d dimensions are nearly orthogonal: mean |cos| ~ sqrt(2 / (pi d)).
  ag::Rng rng(4);
  for (int d : {2, 8, 32, 128, 512}) {
    constexpr int kPairs = 2000;
    double total = 0;
    for (int p = 0; p < kPairs; ++p) {
      double dot = 0, na = 0, nb = 0;
      for (int i = 0; i < d; ++i) {
        const double a = rng.normal(), b = rng.normal();
        dot += a * b, na += a * a, nb += b * b;
      }
      total += std::abs(dot) / std::sqrt(na * nb);
    }
    const double mean = total / kPairs, theory = std::sqrt(2 / (std::numbers::pi * d));
    r.figures["d"].push_back(d);
    r.figures["mean_abs_cos"].push_back(mean);
    r.figures["sqrt_2_over_pi_d"].push_back(theory);
    r.lines.push_back(
        fmt::format("d = {:>3}: mean |cos| of random pairs {:.3f} (sqrt(2/(pi d)) = {:.3f})", d, mean, theory));
    if (d >= 32) holds = holds && std::abs(mean / theory - 1) < 0.1;
  }
  r.holds = holds;
  return r;
}

LabResult rope() {
  LabResult r;
  constexpr int D = 16, T = 40, gap = 3;
  ag::Rng rng(8);
  std::vector<ag::Scalar> q(D), k(D);
  for (auto& x : q) x = static_cast<ag::Scalar>(rng.normal());
  for (auto& x : k) x = static_cast<ag::Scalar>(rng.normal());
  // q at position i and k at position i + gap, for every i: rotate, then dot.
  auto dot_at = [&](int i, int j) {
    std::vector<ag::Scalar> qs(static_cast<std::size_t>(T) * D, 0), ks(static_cast<std::size_t>(T) * D, 0);
    std::copy(q.begin(), q.end(), qs.begin() + i * D);
    std::copy(k.begin(), k.end(), ks.begin() + j * D);
    const ag::Tensor rq = ag::rotary(ag::Tensor({T, D}, qs)), rk = ag::rotary(ag::Tensor({T, D}, ks));
    double d = 0;
    for (int c = 0; c < D; ++c)
      d += double(rq.data()[static_cast<std::size_t>(i * D + c)]) * rk.data()[static_cast<std::size_t>(j * D + c)];
    return d;
  };
  double lo = 1e300, hi = -1e300;
  for (int i = 0; i + gap < T; ++i) {
    const double d = dot_at(i, i + gap);
    lo = std::min(lo, d), hi = std::max(hi, d);
  }
  const double other = dot_at(0, 10);
  r.figures = {{"gap", gap}, {"min_dot", lo}, {"max_dot", hi}, {"spread", hi - lo}, {"dot_at_gap_10", other}};
  r.lines.push_back(
      fmt::format("q.k with k {} positions after q, over {} shifts: from {:.6f} to {:.6f} (spread {:.1e})", gap,
                  T - gap, lo, hi, hi - lo));
  r.lines.push_back(
      fmt::format("the same q and k 10 positions apart: {:.6f}: the dot product does change with the distance", other));
  r.holds = hi - lo < 1e-4 * std::max(1.0, std::abs(hi)) && std::abs(other - hi) > 1e-3;
  return r;
}

}  // namespace

void add_position_labs(std::vector<Lab>& labs) {
  labs.push_back(make_lab("pe-shift", pe_shift));
  labs.push_back(make_lab("rope", rope));
}

}  // namespace seqgrad::labs
