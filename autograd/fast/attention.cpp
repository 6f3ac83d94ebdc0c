// Fast multi-head attention (see fast.h): each head's products read and write
// its columns of the (B, T, C) arrays in place (strided matmuls), causal
// attention skips the masked future block by block, softmax runs eight rows
// at a time, and the next head's operands are fetched while this one runs.
#include <algorithm>
#include <initializer_list>
#include <vector>

#include "autograd/fast/fast.h"
#include "autograd/fast/kernels.h"
#include "autograd/fast/parallel.h"
#include "autograd/fast/rows.h"

namespace ag::inline AG_PRECISION::fast {

namespace {

// Causal attention works on blocks of kRows queries: the queries [i0, i1) see
// only the keys [0, i1), so the score, weight and gradient products skip the
// masked upper triangle block by block (about half of the work at long T).
constexpr int kRows = 32;

// The layout both passes walk: head h of sequence b in a (B, T, C) array is
// T rows of D values, C apart; the (T, T) weights of (b, h) are block bh = b heads + h.
struct Layout {
  int B, T, C, heads, D;
  bool causal;
  int block() const { return causal ? kRows : T; }
  int keys_seen(int i_end) const { return causal ? i_end : T; }  // keys the queries before i_end may see
  template <class P>
  P* head(P* x, int bh) const {
    return x + static_cast<long>(bh / heads) * T * C + static_cast<long>(bh % heads) * D;
  }
  // Asks for head bh's rows of these (B, T, C) arrays and its (T, T) weights w,
  // ahead of the loop that works on it, so they arrive while the one before runs.
  void prefetch_head(int bh, std::initializer_list<const Scalar*> arrays, const Scalar* w, bool write_w) const {
    for (const Scalar* x : arrays) kernels::prefetch(head(x, bh), C, T, D);
    kernels::prefetch(w, T, T, T, write_w);
  }
};

}  // namespace

void attention_forward(const Scalar* q, const Scalar* k, const Scalar* v, Scalar* out, Scalar* weights, int B, int T,
                       int C, int heads, bool causal, Scalar scale, bool whole_weights) {
  const Layout L{B, T, C, heads, C / heads, causal};
  const int D = L.D, block = L.block();
  const std::size_t TT = static_cast<std::size_t>(T) * T;
  parallel_for(B * heads, [&](int begin, int end) {
    thread_local std::vector<Scalar> kt;  // this head's keys transposed, (D, T): the score products read it row-major
    kt.resize(static_cast<std::size_t>(D) * T);
    for (int bh = begin; bh < end; ++bh) {
      const Scalar *qh = L.head(q, bh), *kh = L.head(k, bh), *vh = L.head(v, bh);
      kernels::transpose(kh, C, kt.data(), T, D);
      Scalar* w = weights + static_cast<std::size_t>(bh) * TT;  // (T, T): query i, key j
      if (bh + 1 < end) L.prefetch_head(bh + 1, {q, k, v}, w + TT, /*write_w=*/true);
      for (int i0 = 0; i0 < T; i0 += block) {
        const int i1 = std::min(T, i0 + block), n = L.keys_seen(i1);
        Scalar* wb = w + static_cast<std::size_t>(i0) * T;
        // scores = q k^T, for these queries and the keys they may see
        kernels::matmul_strided_acc({qh + static_cast<long>(i0) * C, C, 1}, {kt.data(), T, false}, {wb, T, true},
                                    i1 - i0, D, n);
        // Softmax of each row over the keys it may see; the keys after a
        // query's own are the future, weight exactly 0.
        for (int i = i0; i < i1;) {
          Scalar* row = w + static_cast<std::size_t>(i) * T;
          // the future: the block's products read the row up to n, the copy handed out all of it
          const int to = whole_weights ? T : n;
          if (causal && i % 8 == 0 && i + 8 <= i1) {  // eight rows at a time, each written to i + 8
            detail::softmax_causal_rows8(row, row, static_cast<std::size_t>(T), static_cast<std::size_t>(i), scale);
            for (int r = 0; r < 8; ++r)
              std::fill(row + static_cast<std::size_t>(r) * T + i + 8, row + static_cast<std::size_t>(r) * T + to,
                        Scalar(0));
            i += 8;
            continue;
          }
          const int seen = causal ? i + 1 : T;
          detail::softmax_row(row, row, static_cast<std::size_t>(seen), scale);
          std::fill(row + seen, row + to, Scalar(0));
          ++i;
        }
        // out = weights v, written straight into this head's columns of the output
        kernels::matmul_strided_acc({wb, T, 1}, {vh, C, false}, {L.head(out, bh) + static_cast<long>(i0) * C, C, true},
                                    i1 - i0, n, D);
      }
    }
  });
}

// Causal: the weights and dS are zero above the diagonal, so the keys [j0, j1)
// get contributions from the queries [j0, T) only.
void attention_backward(const Scalar* q, const Scalar* k, const Scalar* v, const Scalar* weights, const Scalar* dout,
                        GradTarget dq, GradTarget dk, GradTarget dv, int B, int T, int C, int heads, bool causal,
                        Scalar scale) {
  const Layout L{B, T, C, heads, C / heads, causal};
  const int D = L.D, block = L.block();
  const std::size_t TT = static_cast<std::size_t>(T) * T;
  parallel_for(B * heads, [&](int begin, int end) {
    thread_local std::vector<Scalar> ds, vt;
    ds.resize(TT);
    vt.resize(static_cast<std::size_t>(D) * T);
    for (int bh = begin; bh < end; ++bh) {
      const Scalar* w = weights + static_cast<std::size_t>(bh) * TT;
      const Scalar *dout_h = L.head(dout, bh), *qh = L.head(q, bh), *kh = L.head(k, bh), *vh = L.head(v, bh);
      if (bh + 1 < end) L.prefetch_head(bh + 1, {dout, q, k, v}, w + TT, /*write_w=*/false);
      if (dv.data) {  // dv = W^T dO
        for (int j0 = 0; j0 < T; j0 += block) {
          const int j1 = std::min(T, j0 + block), from = causal ? j0 : 0;
          kernels::matmul_strided_acc(
              {w + static_cast<std::size_t>(from) * T + j0, 1, T}, {dout_h + static_cast<long>(from) * C, C, false},
              {L.head(dv.data, bh) + static_cast<long>(j0) * C, C, !dv.add}, j1 - j0, T - from, D);
        }
      }
      if (!dq.data && !dk.data) continue;
      kernels::transpose(vh, C, vt.data(), T, D);
      for (int i0 = 0; i0 < T; i0 += block) {  // dS, block by block of queries
        const int i1 = std::min(T, i0 + block), n = L.keys_seen(i1);
        Scalar* ds_block = ds.data() + static_cast<std::size_t>(i0) * T;
        // dW = dO v^T
        kernels::matmul_strided_acc({dout_h + static_cast<long>(i0) * C, C, 1}, {vt.data(), T, false},
                                    {ds_block, T, true}, i1 - i0, D, n);
        for (int i = i0; i < i1;
             ++i) {  // in place: dW becomes dS = W * (dW - rowsum(dW * W)) * scale (zero where W is)
          Scalar* g = ds.data() + static_cast<std::size_t>(i) * T;
          detail::softmax_backward_row(w + static_cast<std::size_t>(i) * T, g, g, static_cast<std::size_t>(n), scale,
                                       /*write=*/true);
        }
        if (dq.data) {  // dq = dS k
          kernels::matmul_strided_acc({ds_block, T, 1}, {kh, C, false},
                                      {L.head(dq.data, bh) + static_cast<long>(i0) * C, C, !dq.add}, i1 - i0, n, D);
        }
      }
      if (dk.data) {  // dk = dS^T q
        for (int j0 = 0; j0 < T; j0 += block) {
          const int j1 = std::min(T, j0 + block), from = causal ? j0 : 0;
          kernels::matmul_strided_acc(
              {ds.data() + static_cast<std::size_t>(from) * T + j0, 1, T}, {qh + static_cast<long>(from) * C, C, false},
              {L.head(dk.data, bh) + static_cast<long>(j0) * C, C, !dk.add}, j1 - j0, T - from, D);
        }
      }
    }
  });
}

}  // namespace ag::inline AG_PRECISION::fast
