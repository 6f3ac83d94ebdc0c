// The fast backend's offer to the core (autograd/backend.h): its ops and its
// memory. Whoever starts the program (src/runtime/) calls install once; the
// meters and the thread count are set and read there directly.
#include "autograd/fast/install.h"

#include <cstddef>

#include "autograd/backend.h"
#include "autograd/fast/fast.h"
#include "autograd/fast/fastmath.h"
#include "autograd/fast/ops.h"

namespace ag::inline AG_PRECISION::fast {

namespace {

// Element-wise exp, tanh and sigmoid through fastmath.h's vector forms.
void exp_array(const Scalar* x, Scalar* y, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) y[i] = exp(x[i]);
}
void tanh_array(const Scalar* x, Scalar* y, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) y[i] = tanh(x[i]);
}
void sigmoid_array(const Scalar* x, Scalar* y, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) y[i] = sigmoid(x[i]);
}

const Backend kBackend{
    .name = "fast",
    .exp = exp_array,
    .tanh = tanh_array,
    .sigmoid = sigmoid_array,
    .matmul = matmul_op,
    .linear = linear_op,
    .feed_forward = feed_forward_op,
    .softmax = softmax_op,
    .log_softmax = log_softmax_op,
    .layer_norm = layer_norm_op,
    .attention = attention_op,
    .rnn_tanh = rnn_tanh_op,
    .lstm = lstm_op,
    .gru = gru_op,
    .cross_entropy_forward = cross_entropy_forward,
    .take = pool_take,
    .recycle = pool_recycle,
    .next_step = pool_next_step,
    .release = pool_release,
    .bytes = pool_bytes,
};

}  // namespace

}  // namespace ag::inline AG_PRECISION::fast

namespace ag {
#ifdef SEQGRAD_F64
void install_fast_f64() {
#else
void install_fast_f32() {
#endif
  offer_backend(fast::kBackend);
}
}  // namespace ag
