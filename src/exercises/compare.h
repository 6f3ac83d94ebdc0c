// How a result is compared with what was expected, and how a difference is
// told: the same code in the checks' program (which stops a check at its
// first difference) and in seqgrad, whose verdict is the one that counts: it
// compares the values the student's program recorded with those the reference
// solution's run recorded (runner.cpp), so nothing the student's program
// prints or claims can pass a check.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/text/catalogue.h"

namespace seqgrad::exercises {

// A way a result may be wrong in a known way: the values the mistake gives, and the hint that names it.
struct KnownMistake {
  std::span<const double> values;
  std::string hint;
};

struct Difference {
  std::string detail;  // what was expected, what came, where
  std::string hint;    // the usual mistake behind it
};

inline bool close_to(double expected, double got, double tol) {
  return std::abs(got - expected) <= tol * (1 + std::abs(expected));  // NaN is never close
}

inline bool all_close_to(std::span<const double> a, std::span<const double> b, double tol) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!close_to(a[i], b[i], tol)) return false;
  return true;
}

// "[1, 0, 3]": where the flat index `flat` is in `shape`.
inline std::string index_text(const std::vector<int>& shape, std::size_t flat) {
  std::vector<std::size_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    const auto n = static_cast<std::size_t>(std::max(shape[d], 1));
    index[d] = flat % n;
    flat /= n;
  }
  std::string s = "[";
  for (std::size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

// "(2, 3)", as ag::to_string writes a shape.
inline std::string shape_text(const std::vector<int>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

// A shape other than the one expected, told; nothing when they are the same.
inline std::optional<Difference> compare_shapes(text::Lang lang, std::string_view what,
                                                const std::vector<int>& expected, const std::vector<int>& got) {
  if (expected == got) return std::nullopt;
  return Difference{text::trf("check.shape_detail", lang, what, shape_text(expected), shape_text(got)),
                    std::string(text::tr("check.shape_hint", lang))};
}

// The first element of `got` further than tol * (1 + |expected|) from `expected`, told; nothing when all are close.
// The hint is that of the first mistake in `mistakes` whose values `got` matches, else `hint`.
inline std::optional<Difference> compare_values(text::Lang lang, std::string_view what, const std::vector<int>& shape,
                                                std::span<const double> expected, std::span<const double> got,
                                                double tol, const std::string& hint,
                                                const std::vector<KnownMistake>& mistakes) {
  if (got.size() != expected.size())
    return Difference{text::trf("check.size_detail", lang, what, expected.size(), got.size()),
                      std::string(text::tr("check.shape_hint", lang))};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (close_to(expected[i], got[i], tol)) continue;
    std::string why = hint;
    // NaN where the answer is finite, and the poison's own: a buffer read before it was written (the student's
    // program runs with SEQGRAD_POISON_BUFFERS=1, so an unfilled buffer is a positive quiet NaN, not zero by
    // luck, and arithmetic passes it on; x86's inf - inf and inf / inf give a negative one, an overflow).
    if (std::isnan(got[i]) && !std::signbit(got[i]) && std::isfinite(expected[i]))
      why = text::tr("check.unfilled_hint", lang);
    for (const KnownMistake& m : mistakes)
      if (all_close_to(m.values, got, tol)) {
        why = m.hint;
        break;
      }
    double worst = 0;
    for (std::size_t j = 0; j < expected.size(); ++j) {
      const double d = std::abs(got[j] - expected[j]);
      worst = std::isnan(d) || std::isnan(worst) ? std::numeric_limits<double>::quiet_NaN() : std::max(worst, d);
    }
    const auto number = [](double v) { return fmt::format("{:.9g}", v); };
    return Difference{text::trf("check.value_detail", lang, what, index_text(shape, i), number(expected[i]),
                                number(got[i]), number(worst), tol),
                      why};
  }
  return std::nullopt;
}

}  // namespace seqgrad::exercises
