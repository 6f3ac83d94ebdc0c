// The fast path's row kernels (rows.cpp): softmax and layer norm with each
// row's sums in eight lanes, and a bias's gradient. The plain versions are the
// core's (autograd/ops_nn.cpp); norms.cpp, matrix.cpp and attention.cpp call these.
#pragma once

#include <cstddef>

#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION::detail {

// y[r, :] = softmax(x[r, :]) for rows of V values (y may be x), with the row
// maximum subtracted so that exp never overflows; a -inf gives weight exactly 0.
void softmax_rows(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V);
// One row of it, of scale * x: y[0, V) = softmax(scale * x[0, V)) (y may be x).
void softmax_row(const Scalar* x, Scalar* y, std::size_t V, Scalar scale);
// The same for eight causal rows at once, rows ld apart: row r (of i, ..., i + 7,
// i a multiple of 8) is softmax_row over its keys [0, i + r], and zeros on
// to i + 8. The same bits as row by row; eight rows side by side give the
// processor eight independent chains instead of one (attention's rows are short).
void softmax_causal_rows8(const Scalar* x, Scalar* y, std::size_t ld, std::size_t i, Scalar scale);
// Its backward: dx = y * (g - sum(g * y)) * scale for one row of V, written
// (`write`) or added; dx may be g.
void softmax_backward_row(const Scalar* y, const Scalar* g, Scalar* dx, std::size_t V, Scalar scale, bool write);

// Layer norm of rows of C values (see layer_norm in ops_nn.cpp): y = (x - mean)
// * rstd * gamma + beta, each row's mean and rstd = 1 / sqrt(biased variance +
// eps) kept for backward. A row's sums run in 8 lanes (element c in lane c % 8,
// the ragged end in lane 0), added up in lane order; when C is a whole number
// of lanes, eight rows go side by side, each pass over all eight before the
// next, so that their chains (a sum, a square root, a division) overlap.
void layer_norm_rows(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mean, Scalar* rstd,
                     std::size_t rows, std::size_t C, Scalar eps);
// Its backward, for rows of g = dL/dy: dgamma += g * xhat and dbeta += g, row
// after row (either may be null), and dx = rstd * (dxhat - mean(dxhat) - xhat
// * mean(dxhat * xhat)) with dxhat = g * gamma, written (`write`) or added (dx may be null).
void layer_norm_backward_rows(const Scalar* x, const Scalar* g, const Scalar* gamma, const Scalar* mean,
                              const Scalar* rstd, Scalar* dgamma, Scalar* dbeta, Scalar* dx, bool write,
                              std::size_t rows, std::size_t C);

// db (N) += the column sums of dy (M, N): a bias's gradient.
void add_column_sums(const Scalar* dy, Scalar* db, int M, int N);

}  // namespace ag::inline AG_PRECISION::detail
