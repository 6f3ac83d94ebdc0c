// The fast backend's ops (the Backend table of autograd/backend.h): each the
// core's op of the same name as one graph node, its forward and backward
// through the kernels of fast.h. The core has checked the arguments before it
// calls these. Where the core composes an op from smaller ones (the FFN,
// attention, the recurrent cells), the version here is one node with a
// hand-written backward, and the tests check the two against each other.
#include "autograd/fast/ops.h"

#include <memory>
#include <vector>

#include "autograd/fast/fast.h"
#include "autograd/fast/parallel.h"

namespace ag::inline AG_PRECISION::fast {

namespace {
// x viewed as (rows, n) with n its last dimension.
std::size_t rows_of(const Tensor& x) {
  const auto n = static_cast<std::size_t>(x.shape().back());
  return n ? x.numel() / n : 0;
}

// x's shape with its last dimension n.
Shape with_last(const Shape& x, int n) {
  Shape shape(x.begin(), x.end() - 1);
  shape.push_back(n);
  return shape;
}

GradTarget target_of(Node* n) { return n ? grad_target(*n) : GradTarget{}; }
}  // namespace

Tensor matmul_op(const Tensor& a, const Tensor& b) {
  const Shape &sa = a.shape(), &sb = b.shape();
  const int K = sa.back(), N = sb.back();
  const bool shared = sb.size() == 2;  // a weight: every leading dim of a folded into its rows
  const int M = shared ? static_cast<int>(numel(Shape(sa.begin(), sa.end() - 1))) : sa[sa.size() - 2];
  const int batch = shared ? 1 : static_cast<int>(numel(Shape(sa.begin(), sa.end() - 2)));
  const std::size_t a_step = static_cast<std::size_t>(M) * K, b_step = static_cast<std::size_t>(K) * N,
                    c_step = static_cast<std::size_t>(M) * N;
  Tensor out = Tensor::make_result("matmul", with_last(sa, N), {&a, &b}, Fill::uninitialized);
  // The batch (heads, sequences) may be shared by the threads; each product runs on one.
  const Scalar *pa = a.data().data(), *pb = b.data().data();
  Scalar* pc = out.data().data();
  parallel_for(batch, [&](int begin, int end) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i)
      matmul_forward(pa + i * a_step, pb + i * b_step, pc + i * c_step, M, K, N);
  });
  if (out.records()) {
    out.set_backward([an = a.node(), bn = b.node(), on = out.node(), batch, M, K, N, a_step, b_step, c_step] {
      const Scalar *pa = an->data.data(), *pb = bn->data.data(), *dc = on->grad.data();
      const GradTarget da = grad_target(*an), db = grad_target(*bn);
      parallel_for(batch, [&](int begin, int end) {
        for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
          const GradTarget da_i{da.data ? da.data + i * a_step : nullptr, da.add},
              db_i{db.data ? db.data + i * b_step : nullptr, db.add};
          matmul_backward(pa + i * a_step, pb + i * b_step, dc + i * c_step, da_i, db_i, M, K, N);
        }
      });
    });
  }
  return out;
}

Tensor linear_op(const Tensor& x, const Tensor& w, const Tensor& b) {
  const int K = w.size(0), N = w.size(1), M = static_cast<int>(x.numel() / static_cast<std::size_t>(K));
  std::vector<const Tensor*> parents{&x, &w};
  if (b) parents.push_back(&b);
  Tensor out = Tensor::make_result("linear", with_last(x.shape(), N), parents, Fill::uninitialized);
  linear_forward(x.data().data(), w.data().data(), b ? b.data().data() : nullptr, out.data().data(), M, K, N);
  if (out.records()) {
    out.set_backward([xn = x.node(), wn = w.node(), bn = b ? b.node() : nullptr, on = out.node(), M, K, N] {
      linear_backward(xn->data.data(), wn->data.data(), on->grad.data(), grad_target(*xn), grad_target(*wn),
                      target_of(bn), M, K, N);
    });
  }
  return out;
}

// One node that applies the ReLU and its derivative inside the products, so
// that the (..., F) hidden activations, the widest arrays of a Transformer
// block, are written and read once a pass instead of three times.
Tensor feed_forward_op(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
  const int C = w1.size(0), F = w1.size(1), N = w2.size(1);
  const int M = static_cast<int>(x.numel() / static_cast<std::size_t>(C));
  std::vector<const Tensor*> parents{&x, &w1, &w2};
  if (b1) parents.push_back(&b1);
  if (b2) parents.push_back(&b2);
  Tensor out = Tensor::make_result("feed_forward", with_last(x.shape(), N), parents, Fill::uninitialized);
  // hidden = max(0, x w1 + b1), kept for backward (its own buffer, not a node)
  std::shared_ptr<std::vector<Scalar>> hidden = take_scratch(static_cast<std::size_t>(M) * F);
  feed_forward_forward(x.data().data(), w1.data().data(), b1 ? b1.data().data() : nullptr, w2.data().data(),
                       b2 ? b2.data().data() : nullptr, hidden->data(), out.data().data(), M, C, F, N);
  if (out.records()) {
    out.set_backward([xn = x.node(), w1n = w1.node(), w2n = w2.node(), b1n = b1 ? b1.node() : nullptr,
                      b2n = b2 ? b2.node() : nullptr, on = out.node(), hidden, M, C, F, N] {
      feed_forward_backward(xn->data.data(), w1n->data.data(), w2n->data.data(), hidden->data(), on->grad.data(),
                            grad_target(*xn), grad_target(*w1n), target_of(b1n), grad_target(*w2n), target_of(b2n), M,
                            C, F, N);
    });
  }
  return out;
}

Tensor softmax_op(const Tensor& x) {
  const std::size_t rows = rows_of(x), V = static_cast<std::size_t>(x.shape().back());
  Tensor out = Tensor::make_result("softmax", x.shape(), {&x}, Fill::uninitialized);
  softmax_forward(x.data().data(), out.data().data(), rows, V);
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), rows, V] {
      softmax_backward(on->data.data(), on->grad.data(), grad_target(*xn), rows, V);
    });
  }
  return out;
}

Tensor log_softmax_op(const Tensor& x) {
  const std::size_t rows = rows_of(x), V = static_cast<std::size_t>(x.shape().back());
  Tensor out = Tensor::make_result("log_softmax", x.shape(), {&x}, Fill::uninitialized);
  log_softmax_forward(x.data().data(), out.data().data(), rows, V);
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), rows, V] {
      log_softmax_backward(on->data.data(), on->grad.data(), grad_into(*xn), rows, V);
    });
  }
  return out;
}

Tensor layer_norm_op(const Tensor& x, const Tensor& gamma, const Tensor& beta, Scalar eps) {
  const std::size_t rows = rows_of(x), C = static_cast<std::size_t>(x.shape().back());
  Tensor out = Tensor::make_result("layer_norm", x.shape(), {&x, &gamma, &beta}, Fill::uninitialized);
  std::vector<Scalar> mean(rows), rstd(rows);  // what backward needs: each row's mean and 1/std
  layer_norm_forward(x.data().data(), gamma.data().data(), beta.data().data(), out.data().data(), mean.data(),
                     rstd.data(), rows, C, eps);
  if (out.records()) {
    out.set_backward([xn = x.node(), gn = gamma.node(), bn = beta.node(), on = out.node(), mean = std::move(mean),
                      rstd = std::move(rstd), rows, C] {
      layer_norm_backward(xn->data.data(), gn->data.data(), mean.data(), rstd.data(), on->grad.data(), grad_target(*xn),
                          grad_target(*gn), grad_target(*bn), rows, C);
    });
  }
  return out;
}

// Attention as one node, keeping only the weights for its backward.
Tensor attention_op(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool causal, Scalar scale,
                    Tensor* weights) {
  const int B = q.size(0), T = q.size(1), C = q.size(2);
  Tensor out = Tensor::make_result("attention", q.shape(), {&q, &k, &v}, Fill::uninitialized);
  // The weights of every (sequence, head), (B, heads, T, T): what backward reuses.
  // A pool buffer, not zeroed: the kernel writes only the entries its backward
  // reads unless they are handed out (the sanitizer suite fills unwritten
  // buffers with NaN to check that nothing else is read).
  std::shared_ptr<std::vector<Scalar>> probs = take_scratch(static_cast<std::size_t>(B) * heads * T * T);
  attention_forward(q.data().data(), k.data().data(), v.data().data(), out.data().data(), probs->data(), B, T, C, heads,
                    causal, scale, /*whole_weights=*/weights != nullptr);
  if (weights) *weights = Tensor({B, heads, T, T}, *probs);
  if (out.records()) {
    out.set_backward(
        [qn = q.node(), kn = k.node(), vn = v.node(), on = out.node(), probs, B, T, C, heads, causal, scale] {
          attention_backward(qn->data.data(), kn->data.data(), vn->data.data(), probs->data(), on->grad.data(),
                             grad_target(*qn), grad_target(*kn), grad_target(*vn), B, T, C, heads, causal, scale);
        });
  }
  return out;
}

// The recurrent cells, a whole sequence as one node with BPTT written by hand;
// the forward keeps its time-major copies (fast.h) for the backward.
Tensor rnn_tanh_op(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b) {
  const int B = x.size(0), T = x.size(1), I = x.size(2), H = w_h.size(0);
  Tensor out = Tensor::make_result("rnn_tanh", {B, T, H}, {&x, &h0, &w_x, &w_h, &b}, Fill::uninitialized);
  auto saved = std::make_shared<RnnSaved>();
  rnn_forward(x.data().data(), h0.data().data(), w_x.data().data(), w_h.data().data(), b.data().data(),
              out.data().data(), *saved, B, T, I, H);
  if (out.records()) {
    out.set_backward([xn = x.node(), h0n = h0.node(), wxn = w_x.node(), whn = w_h.node(), bn = b.node(),
                      on = out.node(), saved, B, T, I, H] {
      rnn_backward(*saved, wxn->data.data(), whn->data.data(), on->grad.data(), grad_target(*xn), grad_target(*h0n),
                   grad_target(*wxn), grad_target(*whn), grad_target(*bn), B, T, I, H);
    });
  }
  return out;
}

Tensor lstm_op(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_x, const Tensor& w_h,
               const Tensor& b) {
  const int B = x.size(0), T = x.size(1), I = x.size(2), H = w_h.size(0);
  Tensor out = Tensor::make_result("lstm", {B, T, H}, {&x, &h0, &c0, &w_x, &w_h, &b}, Fill::uninitialized);
  auto saved = std::make_shared<GatedSaved>();
  lstm_forward(x.data().data(), h0.data().data(), c0.data().data(), w_x.data().data(), w_h.data().data(),
               b.data().data(), out.data().data(), *saved, B, T, I, H);
  if (out.records()) {
    out.set_backward([xn = x.node(), h0n = h0.node(), c0n = c0.node(), wxn = w_x.node(), whn = w_h.node(),
                      bn = b.node(), on = out.node(), saved, B, T, I, H] {
      lstm_backward(*saved, wxn->data.data(), whn->data.data(), on->grad.data(), grad_target(*xn), grad_target(*h0n),
                    grad_target(*c0n), grad_target(*wxn), grad_target(*whn), grad_target(*bn), B, T, I, H);
    });
  }
  return out;
}

Tensor gru_op(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b_x,
              const Tensor& b_h) {
  const int B = x.size(0), T = x.size(1), I = x.size(2), H = w_h.size(0);
  Tensor out = Tensor::make_result("gru", {B, T, H}, {&x, &h0, &w_x, &w_h, &b_x, &b_h}, Fill::uninitialized);
  auto saved = std::make_shared<GatedSaved>();
  gru_forward(x.data().data(), h0.data().data(), w_x.data().data(), w_h.data().data(), b_x.data().data(),
              b_h.data().data(), out.data().data(), *saved, B, T, I, H);
  if (out.records()) {
    out.set_backward([xn = x.node(), h0n = h0.node(), wxn = w_x.node(), whn = w_h.node(), bxn = b_x.node(),
                      bhn = b_h.node(), on = out.node(), saved, B, T, I, H] {
      gru_backward(*saved, wxn->data.data(), whn->data.data(), on->grad.data(), grad_target(*xn), grad_target(*h0n),
                   grad_target(*wxn), grad_target(*whn), grad_target(*bxn), grad_target(*bhn), B, T, I, H);
    });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION::fast
