// The fast backend's offer to the core (autograd/backend.h): its kernels, its
// meters and its threads, in the core's tables. Whoever starts the program
// (src/runtime/) calls install() once.
#include "autograd/fast/install.h"

#include <cstddef>
#include <memory>

#include "autograd/backend.h"
#include "autograd/fast/fast.h"
#include "autograd/fast/fastmath.h"
#include "autograd/fast/kernels.h"
#include "autograd/fast/parallel.h"

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

// The recurrent kernels keep their time-major copies (fast.h) for the backward.
Saved rnn_forward_saved(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b,
                        Scalar* out, int B, int T, int I, int H) {
  auto saved = std::make_shared<RnnSaved>();
  rnn_forward(x, h0, w_x, w_h, b, out, *saved, B, T, I, H);
  return saved;
}
void rnn_backward_saved(const Saved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                        GradTarget dh0, GradTarget dw_x, GradTarget dw_h, GradTarget db, int B, int T, int I, int H) {
  rnn_backward(*static_cast<const RnnSaved*>(saved.get()), w_x, w_h, dout, dx, dh0, dw_x, dw_h, db, B, T, I, H);
}
Saved lstm_forward_saved(const Scalar* x, const Scalar* h0, const Scalar* c0, const Scalar* w_x, const Scalar* w_h,
                         const Scalar* b, Scalar* out, int B, int T, int I, int H) {
  auto saved = std::make_shared<GatedSaved>();
  lstm_forward(x, h0, c0, w_x, w_h, b, out, *saved, B, T, I, H);
  return saved;
}
void lstm_backward_saved(const Saved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                         GradTarget dh0, GradTarget dc0, GradTarget dw_x, GradTarget dw_h, GradTarget db, int B, int T,
                         int I, int H) {
  lstm_backward(*static_cast<const GatedSaved*>(saved.get()), w_x, w_h, dout, dx, dh0, dc0, dw_x, dw_h, db, B, T, I, H);
}
Saved gru_forward_saved(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
                        const Scalar* b_h, Scalar* out, int B, int T, int I, int H) {
  auto saved = std::make_shared<GatedSaved>();
  gru_forward(x, h0, w_x, w_h, b_x, b_h, out, *saved, B, T, I, H);
  return saved;
}
void gru_backward_saved(const Saved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                        GradTarget dh0, GradTarget dw_x, GradTarget dw_h, GradTarget db_x, GradTarget db_h, int B,
                        int T, int I, int H) {
  gru_backward(*static_cast<const GatedSaved*>(saved.get()), w_x, w_h, dout, dx, dh0, dw_x, dw_h, db_x, db_h, B, T, I,
               H);
}

const KernelTable kKernels{
    .name = "fast",
    .exp = exp_array,
    .tanh = tanh_array,
    .sigmoid = sigmoid_array,
    .matmul_forward = matmul_forward,
    .matmul_backward = matmul_backward,
    .linear_forward = linear_forward,
    .linear_backward = linear_backward,
    .feed_forward_forward = feed_forward_forward,
    .feed_forward_backward = feed_forward_backward,
    .softmax_forward = softmax_forward,
    .softmax_backward = softmax_backward,
    .log_softmax_forward = log_softmax_forward,
    .log_softmax_backward = log_softmax_backward,
    .cross_entropy_forward = cross_entropy_forward,
    .layer_norm_forward = layer_norm_forward,
    .layer_norm_backward = layer_norm_backward,
    .attention_forward = attention_forward,
    .attention_backward = attention_backward,
    .rnn_forward = rnn_forward_saved,
    .rnn_backward = rnn_backward_saved,
    .lstm_forward = lstm_forward_saved,
    .lstm_backward = lstm_backward_saved,
    .gru_forward = gru_forward_saved,
    .gru_backward = gru_backward_saved,
};

const MeterTable kMeters{
    .matmul_flops = kernels::flops_so_far,
    .matmul_kernel = kernels::kernel_name,
    .fma_loop_flops = kernels::fma_loop,
    .set_matmul_timing = kernels::set_matmul_timing,
    .matmul_thread_seconds = kernels::matmul_thread_seconds,
    .set_shape_timing = kernels::set_shape_timing,
    .product_shapes = kernels::product_shapes,
    .clear_product_shapes = kernels::clear_product_shapes,
};

const MemoryTable kMemory{
    .take = pool_take,
    .recycle = pool_recycle,
    .next_step = pool_next_step,
    .release = pool_release,
    .bytes = pool_bytes,
};

const ThreadTable kThreads{
    .set_threads = set_pool_threads,
    .threads = pool_threads,
    .pieces = parallel_pieces,
    .parallel_for = parallel_for,
};

}  // namespace

}  // namespace ag::inline AG_PRECISION::fast

namespace ag {
#ifdef SEQGRAD_F64
void install_fast_f64() {
#else
void install_fast_f32() {
#endif
  offer_kernels(fast::kKernels, fast::kMeters, fast::kMemory);
  offer_threads(fast::kThreads);
}
}  // namespace ag
