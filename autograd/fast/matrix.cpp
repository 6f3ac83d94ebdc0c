// The fast products (see fast.h): the register-tiled kernels of kernels.h,
// with the bias and the ReLU applied as each tile is written.
#include <algorithm>
#include <memory>

#include "autograd/fast/fast.h"
#include "autograd/fast/kernels.h"
#include "autograd/fast/rows.h"

namespace ag::inline AG_PRECISION::fast {

namespace {
// The FFN's backward works on blocks of this many rows (see feed_forward_backward).
constexpr int kBlockRows = 256;
}  // namespace

void matmul_forward(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  kernels::matmul_acc(a, b, c, M, K, N, /*overwrite=*/true);
}

void matmul_backward(const Scalar* a, const Scalar* b, const Scalar* dc, GradTarget da, GradTarget db, int M, int K,
                     int N) {
  if (da.data) kernels::matmul_nt_acc(dc, b, da.data, M, N, K, /*overwrite=*/!da.add);  // dc @ b^T
  if (db.data) kernels::matmul_tn_acc(a, dc, db.data, K, M, N, /*overwrite=*/!db.add);  // a^T @ dc
}

void linear_forward(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N, bool relu) {
  kernels::linear_forward(x, w, bias, y, M, K, N, relu);
}

void column_sums(const Scalar* dy, GradTarget db, int M, int N) {
  if (db.data) detail::add_column_sums(dy, sum_into(db, static_cast<std::size_t>(N)), M, N);
}

void linear_backward(const Scalar* x, const Scalar* w, const Scalar* dy, GradTarget dx, GradTarget dw, GradTarget dbias,
                     int M, int K, int N) {
  matmul_backward(x, w, dy, dx, dw, M, K, N);
  column_sums(dy, dbias, M, N);
}

// The first product applies the ReLU as it writes the hidden layer.
void feed_forward_forward(const Scalar* x, const Scalar* w1, const Scalar* b1, const Scalar* w2, const Scalar* b2,
                          Scalar* hidden, Scalar* y, int M, int C, int F, int N) {
  kernels::linear_forward(x, w1, b1, hidden, M, C, F, /*relu=*/true);
  kernels::linear_forward(hidden, w2, b2, y, M, F, N);
}

// The product that makes dhidden applies ReLU's derivative as it writes
// (gated by the hidden layer), and the rows go in blocks of kBlockRows, so
// that a block's dhidden (rows, F) is made, used three times (dw1, db1, dx)
// and dropped while it is still in the cache. dw1 adds the blocks' products
// one after the other, so its rounding differs from one product over all rows.
void feed_forward_backward(const Scalar* x, const Scalar* w1, const Scalar* w2, const Scalar* hidden, const Scalar* dy,
                           GradTarget dx, GradTarget dw1, GradTarget db1, GradTarget dw2, GradTarget db2, int M, int C,
                           int F, int N) {
  if (dw2.data) kernels::matmul_tn_acc(hidden, dy, dw2.data, F, M, N, /*overwrite=*/!dw2.add);
  column_sums(dy, db2, M, N);
  if (!dw1.data && !dx.data && !db1.data) return;
  Scalar* db1_sum = sum_into(db1, static_cast<std::size_t>(F));  // the blocks' column sums add up in it
  const int block = std::min(M, kBlockRows);
  std::shared_ptr<std::vector<Scalar>> dhidden = take_scratch(static_cast<std::size_t>(block) * F);
  Scalar* dh = dhidden->data();
  // w2^T and w1^T, made once for all the blocks, and the kernel's copy of
  // their panels too (each block's product copied them again: 2 MiB a block,
  // 16 MiB a layer of the wide workload)
  std::shared_ptr<std::vector<Scalar>> w2t = take_scratch(static_cast<std::size_t>(N) * F), w1t;
  thread_local kernels::PackedPanels w2t_panels, w1t_panels;
  kernels::transpose(w2, N, w2t->data(), F, N);
  kernels::pack_panels(w2t->data(), F, N, F, w2t_panels);
  if (dx.data) {
    w1t = take_scratch(static_cast<std::size_t>(F) * C);
    kernels::transpose(w1, F, w1t->data(), C, F);
    kernels::pack_panels(w1t->data(), C, F, C, w1t_panels);
  }
  for (int r0 = 0; r0 < M; r0 += block) {
    const int rows = std::min(block, M - r0);
    const auto rows_of = [r0](const Scalar* p, int width) { return p + static_cast<std::size_t>(r0) * width; };
    kernels::matmul_strided_acc({rows_of(dy, N), N, 1}, {w2t->data(), F, false, w2t_panels.panels}, {dh, F, true}, rows,
                                N, F, /*gate=*/rows_of(hidden, F));
    if (dw1.data) kernels::matmul_tn_acc(rows_of(x, C), dh, dw1.data, C, rows, F, /*overwrite=*/!dw1.add && r0 == 0);
    if (db1_sum) detail::add_column_sums(dh, db1_sum, rows, F);
    if (dx.data) {
      kernels::matmul_strided_acc({dh, F, 1}, {w1t->data(), C, false, w1t_panels.panels},
                                  {dx.data + static_cast<std::size_t>(r0) * C, C, !dx.add}, rows, F, C);
    }
  }
}

}  // namespace ag::inline AG_PRECISION::fast
