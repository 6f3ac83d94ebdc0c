#include "autograd/fast/rows.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "autograd/fast/fastmath.h"
#include "autograd/fast/parallel.h"

namespace ag::inline AG_PRECISION::detail {

namespace {

// The softmax rows below handle element j in lane j % kLanes: each pass keeps
// kLanes partial results (maxima, sums) side by side, one AVX2 register of
// floats, and combines them as a tree at the end. Not 16 lanes: a row's ragged
// end is padded to a whole group, and most attention rows are short and have one.
constexpr std::size_t kLanes = 8;

// lane[0] op lane[1] op ... op lane[kLanes - 1], combined as a tree (3 steps, not a chain of 7).
template <class Op>
Scalar combine(Scalar* lane, Op op) {
  for (std::size_t w = kLanes / 2; w > 0; w /= 2)
    for (std::size_t l = 0; l < w; ++l) lane[l] = op(lane[l], lane[l + w]);
  return lane[0];
}

}  // namespace

void softmax_row(const Scalar* x, Scalar* y, std::size_t V, Scalar scale) {
  // The ragged end of the row is one more group of lanes in a local array,
  // padded with -inf (weight 0), so that no element takes a scalar path.
  const std::size_t full = V - V % kLanes, rest = V - full;
  Scalar tail[kLanes], lane[kLanes];
#pragma omp simd
  for (std::size_t l = 0; l < kLanes; ++l) {
    tail[l] = l < rest ? x[full + l] * scale : -std::numeric_limits<Scalar>::infinity();
    lane[l] = tail[l];
  }
  for (std::size_t j = 0; j < full; j += kLanes) {
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) {
      y[j + l] = x[j + l] * scale;
      lane[l] = std::max(lane[l], y[j + l]);
    }
  }
  const Scalar mx = combine(lane, [](Scalar a, Scalar b) { return std::max(a, b); });
#pragma omp simd
  for (std::size_t l = 0; l < kLanes; ++l) {
    tail[l] = fast::exp_nonpositive(tail[l] - mx);
    lane[l] = tail[l];
  }
  for (std::size_t j = 0; j < full; j += kLanes) {
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) {
      y[j + l] = fast::exp_nonpositive(y[j + l] - mx);
      lane[l] += y[j + l];
    }
  }
  const Scalar inv = 1 / combine(lane, std::plus<>());
#pragma omp simd
  for (std::size_t j = 0; j < full; ++j) y[j] *= inv;
  for (std::size_t l = 0; l < rest; ++l) y[full + l] = tail[l] * inv;
}

void softmax_causal_rows8(const Scalar* x, Scalar* y, std::size_t ld, std::size_t i, Scalar scale) {
  // Each pass of softmax_row, over the eight rows before the next pass. The
  // group of keys [i, i + 8) is the diagonal: rows 0-6 see part of it (their
  // ragged end, padded with -inf, as in softmax_row), row 7 all of it (for it a
  // whole group, summed last, as in softmax_row).
  constexpr std::size_t R = kLanes, last = R - 1;
  Scalar lane[R][kLanes], diag[R][kLanes], mx[R], inv[R];
  for (std::size_t r = 0; r < R; ++r) {
    const Scalar* xr = x + r * ld;
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) {
      diag[r][l] = l <= r ? xr[i + l] * scale : -std::numeric_limits<Scalar>::infinity();
      lane[r][l] = diag[r][l];
    }
  }
  for (std::size_t j = 0; j < i; j += kLanes) {
    for (std::size_t r = 0; r < R; ++r) {
#pragma omp simd
      for (std::size_t l = 0; l < kLanes; ++l) {
        y[r * ld + j + l] = x[r * ld + j + l] * scale;
        lane[r][l] = std::max(lane[r][l], y[r * ld + j + l]);
      }
    }
  }
  for (std::size_t r = 0; r < R; ++r) mx[r] = combine(lane[r], [](Scalar a, Scalar b) { return std::max(a, b); });
  for (std::size_t r = 0; r < R; ++r) {
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) {
      diag[r][l] = fast::exp_nonpositive(diag[r][l] - mx[r]);
      lane[r][l] = r == last ? Scalar(0) : diag[r][l];  // row 7's ragged end is empty: exp(-inf)
    }
  }
  for (std::size_t j = 0; j < i; j += kLanes) {
    for (std::size_t r = 0; r < R; ++r) {
#pragma omp simd
      for (std::size_t l = 0; l < kLanes; ++l) {
        y[r * ld + j + l] = fast::exp_nonpositive(y[r * ld + j + l] - mx[r]);
        lane[r][l] += y[r * ld + j + l];
      }
    }
  }
#pragma omp simd
  for (std::size_t l = 0; l < kLanes; ++l) lane[last][l] += diag[last][l];
  for (std::size_t r = 0; r < R; ++r) inv[r] = 1 / combine(lane[r], std::plus<>());
  for (std::size_t r = 0; r < R; ++r) {
    Scalar* yr = y + r * ld;
#pragma omp simd
    for (std::size_t j = 0; j < i; ++j) yr[j] *= inv[r];
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) yr[i + l] = diag[r][l] * inv[r];  // 0 after the row's own key
  }
}

void softmax_backward_row(const Scalar* y, const Scalar* g, Scalar* dx, std::size_t V, Scalar scale, bool write) {
  // sum_j g_j y_j, element j in lane j % kLanes, as in softmax_row
  const std::size_t full = V - V % kLanes, rest = V - full;
  Scalar lane[kLanes];
#pragma omp simd
  for (std::size_t l = 0; l < kLanes; ++l) lane[l] = l < rest ? g[full + l] * y[full + l] : Scalar(0);
  for (std::size_t j = 0; j < full; j += kLanes) {
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) lane[l] += g[j + l] * y[j + l];
  }
  const Scalar dot = combine(lane, std::plus<>());
  if (write) {
#pragma omp simd
    for (std::size_t j = 0; j < V; ++j) dx[j] = y[j] * (g[j] - dot) * scale;
  } else {
#pragma omp simd
    for (std::size_t j = 0; j < V; ++j) dx[j] += y[j] * (g[j] - dot) * scale;
  }
}

void softmax_rows(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) softmax_row(x + r * V, y + r * V, V, 1);
}

namespace {

// lane[0] + lane[1] + ... + lane[kLanes - 1], in that order, from zero.
Scalar in_order(const Scalar* lane) {
  Scalar s = 0;
  for (std::size_t l = 0; l < kLanes; ++l) s += lane[l];
  return s;
}

// lane[r][l] += term(r, c) for each of R rows of C values: c in lane c % kLanes
// up to the last whole group of lanes, the ragged end in lane 0.
template <std::size_t R, class Term>
void add_in_lanes(Scalar (&lane)[R][kLanes], std::size_t C, Term term) {
  const std::size_t full = C - C % kLanes;
  for (std::size_t c = 0; c < full; c += kLanes) {
    for (std::size_t r = 0; r < R; ++r) {
#pragma omp simd
      for (std::size_t l = 0; l < kLanes; ++l) lane[r][l] += term(r, c + l);
    }
  }
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t c = full; c < C; ++c) lane[r][0] += term(r, c);
}

// Layer norm of R rows side by side (R = 8, or 1 for the rows left over).
template <std::size_t R>
void layer_norm_group(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mu, Scalar* rs,
                      std::size_t C, Scalar eps) {
  const auto n = static_cast<Scalar>(C);
  Scalar lane[R][kLanes] = {};
  add_in_lanes(lane, C, [&](std::size_t r, std::size_t c) { return x[r * C + c]; });
  for (std::size_t r = 0; r < R; ++r) mu[r] = in_order(lane[r]) / n;
  Scalar square[R][kLanes] = {};
  add_in_lanes(square, C,
               [&](std::size_t r, std::size_t c) { return (x[r * C + c] - mu[r]) * (x[r * C + c] - mu[r]); });
  for (std::size_t r = 0; r < R; ++r)
    rs[r] = 1 / std::sqrt(in_order(square[r]) / n + eps);  // the biased variance, as the paper's LayerNorm
  for (std::size_t r = 0; r < R; ++r) {
    const Scalar* xr = x + r * C;
    Scalar* yr = y + r * C;
#pragma omp simd
    for (std::size_t c = 0; c < C; ++c) yr[c] = (xr[c] - mu[r]) * rs[r] * gamma[c] + beta[c];
  }
}

// Its backward for R rows side by side, dx only (dgamma and dbeta: gamma_beta_rows); xhat: room for R rows of C.
template <std::size_t R>
void layer_norm_backward_group(const Scalar* x, const Scalar* g, const Scalar* gamma, const Scalar* mu,
                               const Scalar* rs, Scalar* dx, bool write, std::size_t C, Scalar* xhat) {
  for (std::size_t r = 0; r < R; ++r) {  // xhat, recomputed from x: cheaper than keeping it
    const Scalar* xr = x + r * C;
    Scalar* xh = xhat + r * C;
#pragma omp simd
    for (std::size_t c = 0; c < C; ++c) xh[c] = (xr[c] - mu[r]) * rs[r];
  }
  const std::size_t full = C - C % kLanes;
  const auto n = static_cast<Scalar>(C);
  Scalar sum[R][kLanes] = {}, dot[R][kLanes] = {};  // of dxhat, and of dxhat * xhat
  for (std::size_t c = 0; c < full; c += kLanes) {
    for (std::size_t r = 0; r < R; ++r) {
#pragma omp simd
      for (std::size_t l = 0; l < kLanes; ++l) {
        const Scalar dxhat = g[r * C + c + l] * gamma[c + l];
        sum[r][l] += dxhat;
        dot[r][l] += dxhat * xhat[r * C + c + l];
      }
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    for (std::size_t c = full; c < C; ++c) {
      const Scalar dxhat = g[r * C + c] * gamma[c];
      sum[r][0] += dxhat;
      dot[r][0] += dxhat * xhat[r * C + c];
    }
    const Scalar mean_dxhat = in_order(sum[r]) / n, mean_dxhat_xhat = in_order(dot[r]) / n;
    const Scalar *gr = g + r * C, *xh = xhat + r * C;
    Scalar* dr = dx + r * C;
#pragma omp simd
    for (std::size_t c = 0; c < C; ++c) {
      const Scalar v = rs[r] * (gr[c] * gamma[c] - mean_dxhat - xh[c] * mean_dxhat_xhat);
      dr[c] = write ? v : dr[c] + v;
    }
  }
}

// A matrix's rows (or columns) go to the threads in pieces once it has 64 Ki values (parallel_pieces). Each row's
// values, and each column's sum over the rows in order, come out the same whichever thread makes them.
constexpr std::size_t kColumnPiece = 64;        // columns a piece: whole vectors, and a few pieces a thread at 256
constexpr std::size_t kNarrowColumnPiece = 16;  // columns a piece of fewer than 128

// A matrix's rows [0, rows) cut at multiples of kLanes; its columns [0, N) in pieces of kColumnPiece.
void by_rows(std::size_t rows, std::size_t C, const std::function<void(std::size_t, std::size_t)>& fn) {
  parallel_pieces(rows, kLanes, rows * C, fn);
}
void by_columns(std::size_t rows, std::size_t N, const std::function<void(std::size_t, std::size_t)>& fn) {
  // Narrow matrices in pieces of one 512-bit vector (a d_model of 64 was one
  // piece, on the calling thread alone: dgamma and dbeta were 1% of a
  // two-thread transformer step's samples, with the other thread waiting).
  parallel_pieces(N, N >= 2 * kColumnPiece ? kColumnPiece : kNarrowColumnPiece, rows * N, fn);
}

// Columns [c0, c1) of R rows (row stride C) of g added into dgamma (times xhat) and dbeta, the rows one after the
// other, all R in registers before they go back to memory (row by row, each row waited for the last one's store;
// R a constant: with a run-time count the loop stayed scalar).
template <std::size_t R>
void gamma_beta_rows(const Scalar* x, const Scalar* g, const Scalar* mu, const Scalar* rs, Scalar* dgamma,
                     Scalar* dbeta, std::size_t C, std::size_t c0, std::size_t c1) {
  if (dgamma) {
#pragma omp simd
    for (std::size_t c = c0; c < c1; ++c) {
      Scalar acc = dgamma[c];
      for (std::size_t r = 0; r < R; ++r) acc += g[r * C + c] * ((x[r * C + c] - mu[r]) * rs[r]);
      dgamma[c] = acc;
    }
  }
  if (dbeta) {
#pragma omp simd
    for (std::size_t c = c0; c < c1; ++c) {
      Scalar acc = dbeta[c];
      for (std::size_t r = 0; r < R; ++r) acc += g[r * C + c];
      dbeta[c] = acc;
    }
  }
}

// db[c0, c1) += rows 0, 1, ..., R - 1 of dy (row stride N), added one after the other, in registers until the last.
template <int R>
void add_rows(const Scalar* dy, Scalar* db, std::size_t N, std::size_t c0, std::size_t c1) {
#pragma omp simd
  for (std::size_t j = c0; j < c1; ++j) {
    Scalar acc = db[j];
    for (int r = 0; r < R; ++r) acc += dy[static_cast<std::size_t>(r) * N + j];
    db[j] = acc;
  }
}

}  // namespace

void layer_norm_rows(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mean, Scalar* rstd,
                     std::size_t rows, std::size_t C, Scalar eps) {
  by_rows(rows, C, [&](std::size_t r, std::size_t end) {
    if (C % kLanes == 0) {
      for (; r + kLanes <= end; r += kLanes)
        layer_norm_group<kLanes>(x + r * C, gamma, beta, y + r * C, mean + r, rstd + r, C, eps);
    }
    for (; r < end; ++r) layer_norm_group<1>(x + r * C, gamma, beta, y + r * C, mean + r, rstd + r, C, eps);
  });
}

// dgamma and dbeta are sums over the rows, so they go by columns; dx goes by rows.
void layer_norm_backward_rows(const Scalar* x, const Scalar* g, const Scalar* gamma, const Scalar* mean,
                              const Scalar* rstd, Scalar* dgamma, Scalar* dbeta, Scalar* dx, bool write,
                              std::size_t rows, std::size_t C) {
  if (dgamma || dbeta)
    by_columns(rows, C, [&](std::size_t c0, std::size_t c1) {
      std::size_t r = 0;
      for (; r + kLanes <= rows; r += kLanes)
        gamma_beta_rows<kLanes>(x + r * C, g + r * C, mean + r, rstd + r, dgamma, dbeta, C, c0, c1);
      for (; r < rows; ++r) gamma_beta_rows<1>(x + r * C, g + r * C, mean + r, rstd + r, dgamma, dbeta, C, c0, c1);
    });
  if (!dx) return;
  by_rows(rows, C, [&](std::size_t r, std::size_t end) {
    thread_local std::vector<Scalar> xhat;
    xhat.resize(kLanes * C);
    if (C % kLanes == 0) {
      for (; r + kLanes <= end; r += kLanes)
        layer_norm_backward_group<kLanes>(x + r * C, g + r * C, gamma, mean + r, rstd + r, dx + r * C, write, C,
                                          xhat.data());
    }
    for (; r < end; ++r)
      layer_norm_backward_group<1>(x + r * C, g + r * C, gamma, mean + r, rstd + r, dx + r * C, write, C, xhat.data());
  });
}

void add_column_sums(const Scalar* dy, Scalar* db, int M, int N) {
  // The rows one after the other, as row by row, but eight at a time in
  // registers before db goes back to memory: row by row, each row's loads of
  // db waited for the last row's stores.
  const auto n = static_cast<std::size_t>(N);
  by_columns(static_cast<std::size_t>(M), n, [&](std::size_t c0, std::size_t c1) {
    int r = 0;
    for (; r + 8 <= M; r += 8) add_rows<8>(dy + r * n, db, n, c0, c1);
    for (; r < M; ++r) add_rows<1>(dy + r * n, db, n, c0, c1);
  });
}

}  // namespace ag::inline AG_PRECISION::detail
