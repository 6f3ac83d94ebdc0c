// Checks of `sinusoidal`: the student's positional-encoding table against the
// built-in one (src/nn/transformer.cpp), and the property the paper chose it
// for: PE(pos + k) is a fixed rotation M_k of PE(pos), the same for every pos.
#include <cmath>

#include "src/exercises/check.h"
#include "src/exercises/exercise.h"
#include "src/nn/transformer.h"

using namespace seqgrad::exercises;

namespace {

// The table with a slip: the exponent i/C with i the channel (not 2i/C),
// sin and cos swapped, positions counted from 1, the sines in the first half
// of the channels and the cosines in the second, or the angle multiplied by
// 10000^(2i/C) instead of divided, or the cosine of a pair at the next channel's frequency, (2i+1)/C.
enum class Slip { channel_exponent, swapped, from_one, halves, multiplied, own_frequency };
std::vector<Scalar> slipped(int T, int C, Slip slip) {
  std::vector<Scalar> pe(static_cast<std::size_t>(T) * C);
  for (int pos = 0; pos < T; ++pos)
    for (int i = 0; 2 * i < C; ++i) {
      const double exponent = slip == Slip::channel_exponent ? double(i) / C : 2.0 * i / C;
      const double scale = std::pow(10000.0, slip == Slip::multiplied ? -exponent : exponent);
      const double angle = (slip == Slip::from_one ? pos + 1 : pos) / scale;
      const double odd_angle = slip == Slip::own_frequency ? pos / std::pow(10000.0, (2.0 * i + 1) / C) : angle;
      const double s = std::sin(angle), co = std::cos(odd_angle);
      const int first = slip == Slip::halves ? i : 2 * i, second = slip == Slip::halves ? C / 2 + i : 2 * i + 1;
      pe[static_cast<std::size_t>(pos * C + first)] = slip == Slip::swapped ? co : s;
      pe[static_cast<std::size_t>(pos * C + second)] = slip == Slip::swapped ? s : co;
    }
  return pe;
}

void expect_table(const Checker& c, int T, int C) {
  const Tensor got = exercise::sinusoidal(T, C);
  expect_shape(c, "PE", {T, C}, got.shape());
  expect_close(c, "PE", {T, C}, seqgrad::nn::sinusoidal_encoding(T, C).data(), got.data(), 1e-12, c.tr("hint.values"),
               {{slipped(T, C, Slip::channel_exponent), c.tr("hint.exponent")},
                {slipped(T, C, Slip::swapped), c.tr("hint.swapped")},
                {slipped(T, C, Slip::from_one), c.tr("hint.from_one")},
                {slipped(T, C, Slip::halves), c.tr("hint.halves")},
                {slipped(T, C, Slip::multiplied), c.tr("hint.multiplied")},
                {slipped(T, C, Slip::own_frequency), c.tr("hint.own_frequency")}});
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "sinusoidal");
  c.run("values", [&] { expect_table(c, 6, 8); });
  c.run("edges", [&] {
    expect_table(c, 1, 2);     // position 0 only: sin 0 = 0, cos 0 = 1
    expect_table(c, 100, 64);  // the slowest wavelengths, up to 10000 * 2 pi
  });
  c.run("shift", [&] {
    // For each pair (2i, 2i+1), M_k is the rotation by k w_i, w_i = 10000^(-2i/C):
    // [sin(a + b), cos(a + b)] = [[cos b, sin b], [-sin b, cos b]] [sin a, cos a].
    const int T = 40, C = 16, k = 7;
    const Tensor pe = exercise::sinusoidal(T, C);
    std::vector<Scalar> expected, got;
    for (int pos = 0; pos + k < T; ++pos)
      for (int i = 0; 2 * i < C; ++i) {
        const double b = k / std::pow(10000.0, 2.0 * i / C);
        const Scalar s = pe.data()[static_cast<std::size_t>(pos * C + 2 * i)];
        const Scalar co = pe.data()[static_cast<std::size_t>(pos * C + 2 * i + 1)];
        expected.push_back(static_cast<Scalar>(std::cos(b) * s + std::sin(b) * co));
        expected.push_back(static_cast<Scalar>(-std::sin(b) * s + std::cos(b) * co));
        got.push_back(pe.data()[static_cast<std::size_t>((pos + k) * C + 2 * i)]);
        got.push_back(pe.data()[static_cast<std::size_t>((pos + k) * C + 2 * i + 1)]);
      }
    expect_close(c, "PE(pos + 7)", {T - k, C}, expected, got, 1e-9, c.tr("hint.shift"));
  });
  return c.finish();
}
