// Matrix products, the way they are written on paper: one sum per element.
#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION::reference {

namespace {
std::size_t index(int row, int col, int width) {
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(width) + static_cast<std::size_t>(col);
}
}  // namespace

// a (M, K) @ b (K, N) -> c (M, N): c[i, j] = sum_k a[i, k] b[k, j]
void matmul_forward(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      Scalar sum = 0;
      for (int k = 0; k < K; ++k) sum += a[index(i, k, K)] * b[index(k, j, N)];
      c[index(i, j, N)] = sum;
    }
  }
}

// in the forward pass this was: c = a @ b, so now we have:
//   da[i, k] = sum_j dc[i, j] b[k, j]   (dc @ b^T)
//   db[k, j] = sum_i a[i, k] dc[i, j]   (a^T @ dc)
void matmul_backward(const Scalar* a, const Scalar* b, const Scalar* dc, Scalar* da, Scalar* db, int M, int K, int N) {
  if (da) {
    for (int i = 0; i < M; ++i) {
      for (int k = 0; k < K; ++k) {
        Scalar sum = 0;
        for (int j = 0; j < N; ++j) sum += dc[index(i, j, N)] * b[index(k, j, N)];
        da[index(i, k, K)] = sum;
      }
    }
  }
  if (db) {
    for (int k = 0; k < K; ++k) {
      for (int j = 0; j < N; ++j) {
        Scalar sum = 0;
        for (int i = 0; i < M; ++i) sum += a[index(i, k, K)] * dc[index(i, j, N)];
        db[index(k, j, N)] = sum;
      }
    }
  }
}

// y = x @ w + bias
void linear_forward(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N) {
  matmul_forward(x, w, y, M, K, N);
  if (bias)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) y[index(i, j, N)] += bias[j];
}

// db[j] = sum_i dy[i, j]: a bias is added to every row, so its gradient is the sum over rows
void column_sums(const Scalar* dy, Scalar* db, int M, int N) {
  for (int j = 0; j < N; ++j) {
    Scalar sum = 0;
    for (int i = 0; i < M; ++i) sum += dy[index(i, j, N)];
    db[j] = sum;
  }
}

// in the forward pass this was: y = x @ w + bias, so now we have:
//   dx = dy @ w^T,  dw = x^T @ dy,  dbias = the column sums of dy
void linear_backward(const Scalar* x, const Scalar* w, const Scalar* dy, Scalar* dx, Scalar* dw, Scalar* dbias, int M,
                     int K, int N) {
  matmul_backward(x, w, dy, dx, dw, M, K, N);
  if (dbias) column_sums(dy, dbias, M, N);
}

}  // namespace ag::inline AG_PRECISION::reference
