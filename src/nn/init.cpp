#include "src/nn/init.h"

#include <cmath>
#include <stdexcept>

#include "src/text/catalogue.h"

namespace seqgrad::nn {

Init parse_init(const std::string& name) {
  if (name == "uniform") return Init::uniform;
  if (name == "xavier") return Init::xavier;
  if (name == "orthogonal") return Init::orthogonal;
  if (name == "identity") return Init::identity;
  if (name == "normal") return Init::normal;
  if (name == "zeros") return Init::zeros;
  throw std::invalid_argument(text::msg("nn.unknown_init", name));
}

std::string to_string(Init init) {
  switch (init) {
    case Init::uniform:
      return "uniform";
    case Init::xavier:
      return "xavier";
    case Init::orthogonal:
      return "orthogonal";
    case Init::identity:
      return "identity";
    case Init::normal:
      return "normal";
    case Init::zeros:
      return "zeros";
  }
  return "?";
}

namespace {
// Gram-Schmidt on the rows (or columns, whichever are fewer) of a Gaussian
// matrix: the result has orthonormal rows or columns.
std::vector<double> orthogonal(int rows, int cols, ag::Rng& rng) {
  const bool by_rows = rows <= cols;
  const int n = by_rows ? rows : cols, len = by_rows ? cols : rows;
  std::vector<double> v(static_cast<std::size_t>(n) * len);
  for (int i = 0; i < n; ++i) {
    double* vi = v.data() + static_cast<std::size_t>(i) * len;
    double norm = 0;
    while (norm < 1e-6) {  // redraw in the (measure-zero) case of a dependent vector
      for (int k = 0; k < len; ++k) vi[k] = rng.normal();
      for (int j = 0; j < i; ++j) {
        const double* vj = v.data() + static_cast<std::size_t>(j) * len;
        double dot = 0;
        for (int k = 0; k < len; ++k) dot += vi[k] * vj[k];
        for (int k = 0; k < len; ++k) vi[k] -= dot * vj[k];
      }
      norm = 0;
      for (int k = 0; k < len; ++k) norm += vi[k] * vi[k];
      norm = std::sqrt(norm);
    }
    for (int k = 0; k < len; ++k) vi[k] /= norm;
  }
  std::vector<double> out(static_cast<std::size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      out[static_cast<std::size_t>(r) * cols + c] =
          by_rows ? v[static_cast<std::size_t>(r) * cols + c] : v[static_cast<std::size_t>(c) * rows + r];
  return out;
}

double draw(Init init, int fan_in, int fan_out, ag::Rng& rng) {
  switch (init) {
    case Init::uniform: {
      const double a = 1 / std::sqrt(static_cast<double>(std::max(fan_in, 1)));
      return rng.uniform(-a, a);
    }
    case Init::xavier: {
      const double a = std::sqrt(6.0 / (fan_in + fan_out));
      return rng.uniform(-a, a);
    }
    case Init::normal:
      return rng.normal();
    default:
      return 0;
  }
}
}  // namespace

ag::Tensor init_matrix(int rows, int cols, Init init, ag::Rng& rng) {
  if (rows <= 0 || cols <= 0) throw std::invalid_argument("init_matrix: sizes must be positive");
  std::vector<ag::Scalar> data(static_cast<std::size_t>(rows) * cols, 0);
  if (init == Init::orthogonal) {
    const std::vector<double> q = orthogonal(rows, cols, rng);
    for (std::size_t i = 0; i < q.size(); ++i) data[i] = static_cast<ag::Scalar>(q[i]);
  } else if (init == Init::identity) {
    if (rows != cols) throw std::invalid_argument("init_matrix: identity init needs a square matrix");
    for (int i = 0; i < rows; ++i) data[static_cast<std::size_t>(i) * cols + i] = 1;
  } else {
    for (auto& v : data) v = static_cast<ag::Scalar>(draw(init, rows, cols, rng));
  }
  return ag::Tensor({rows, cols}, std::move(data));
}

ag::Tensor init_vector(int n, Init init, int fan_in, ag::Rng& rng) {
  if (n <= 0) throw std::invalid_argument("init_vector: size must be positive");
  std::vector<ag::Scalar> data(static_cast<std::size_t>(n), 0);
  if (init == Init::uniform || init == Init::normal) {
    for (auto& v : data) v = static_cast<ag::Scalar>(draw(init, fan_in, n, rng));
  }
  return ag::Tensor({n}, std::move(data));
}

}  // namespace seqgrad::nn
