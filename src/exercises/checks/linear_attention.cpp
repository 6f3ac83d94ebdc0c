// Checks of `linear-attention`: the student's recurrent form of causal linear attention (the state update, the
// read-out, the loop over positions) against seqgrad's parallel form (src/nn/transformer.cpp: linear_attention,
// every row at once), values and gradients; and that the student's loop is a recurrence, whose path from the first
// key grows with T, not the parallel form again.
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"
#include "src/nn/transformer.h"

using namespace seqgrad::exercises;
namespace nn = seqgrad::nn;

namespace {

constexpr Scalar kEps = 1e-6;  // seqgrad's normaliser: phi(q)^T z + 1e-6

Scalar phi(Scalar x) { return x > 0 ? x + 1 : std::exp(x); }

// Which keys position t reads: its own and those before (causal, the right one), those before alone (the state
// updated after the read-out), all of them (the loop's order broken: every read-out after every update), or its own
// and those after (the loop run backwards).
enum class Order { causal, before, all, after };
bool reads(Order order, int t, int j, int T) {
  switch (order) {
    case Order::causal:
      return j <= t;
    case Order::before:
      return j < t;
    case Order::all:
      return j < T;
    case Order::after:
      return j >= t;
  }
  return false;
}

// Linear attention in plain loops, with its key order as given: out_t = sum_j w_tj v_j / (sum_j w_tj + 1e-6),
// w_tj = phi(q_t).phi(k_j); a position that reads no key gives 0 (0 / 1e-6).
// times: how many times each position went into the state (2 for an update called twice a position).
std::vector<Scalar> loops(const Tensor& q, const Tensor& k, const Tensor& v, Order order, int times = 1) {
  const int B = q.size(0), T = q.size(1), D = q.size(2), E = v.size(2);
  std::vector<Scalar> out(static_cast<std::size_t>(B) * T * E);
  auto at = [](const Tensor& x, int b, int t, int i) {
    return x.data()[static_cast<std::size_t>((b * x.size(1) + t) * x.size(2) + i)];
  };
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      Scalar total = 0;
      std::vector<Scalar> sum(static_cast<std::size_t>(E));
      for (int j = 0; j < T; ++j) {
        if (!reads(order, t, j, T)) continue;
        Scalar w = 0;
        for (int d = 0; d < D; ++d) w += phi(at(q, b, t, d)) * phi(at(k, b, j, d));
        total += times * w;
        for (int e = 0; e < E; ++e) sum[static_cast<std::size_t>(e)] += times * w * at(v, b, j, e);
      }
      for (int e = 0; e < E; ++e)
        out[static_cast<std::size_t>((b * T + t) * E + e)] = sum[static_cast<std::size_t>(e)] / (total + kEps);
    }
  return out;
}

std::vector<Mistake> order_mistakes(const Checker& c, const Tensor& q, const Tensor& k, const Tensor& v) {
  // Every position starting from an empty state: out_t is phi(q_t).phi(k_t) v_t / (phi(q_t).phi(k_t) + 1e-6).
  const int B = q.size(0), T = q.size(1), D = q.size(2), E = v.size(2);
  std::vector<Scalar> alone(static_cast<std::size_t>(B) * T * E);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      Scalar w = 0;
      for (int d = 0; d < D; ++d)
        w += phi(q.data()[static_cast<std::size_t>((b * T + t) * D + d)]) *
             phi(k.data()[static_cast<std::size_t>((b * T + t) * D + d)]);
      for (int e = 0; e < E; ++e) {
        const std::size_t i = static_cast<std::size_t>((b * T + t) * E + e);
        alone[i] = w * v.data()[i] / (w + kEps);
      }
    }
  std::vector<Mistake> m{{loops(q, k, v, Order::before), c.tr("hint.read_first")},
                         {loops(q, k, v, Order::all), c.tr("hint.not_causal")},
                         {loops(q, k, v, Order::after), c.tr("hint.backwards")},
                         {alone, c.tr("hint.not_carried")},
                         {loops(k, k, v, Order::causal), c.tr("hint.read_with_k")},
                         {loops(k, q, v, Order::causal), c.tr("hint.q_k_swapped")},
                         {loops(q, k, v, Order::causal, 2), c.tr("hint.twice")}};
  if (D == E) m.push_back({loops(q, k, k, Order::causal), c.tr("hint.k_for_v")});
  return m;
}

// The parallel form: seqgrad's, one head, causal.
Tensor parallel(const std::vector<Tensor>& x) { return nn::linear_attention(x[0], x[1], x[2], 1, true); }
Tensor student(const std::vector<Tensor>& x) { return exercise::linear_attention(x[0], x[1], x[2]); }

void expect_sequence(Checker& c, int B, int T, int D, int E, ag::Rng& rng, const std::string& hint) {
  const std::vector<Tensor> x{random_tensor({B, T, D}, rng, 1.5), random_tensor({B, T, D}, rng, 1.5),
                              random_tensor({B, T, E}, rng)};
  c.watch({"q", "k", "v"}, x);
  ag::NoGrad no_grad;
  const Tensor got = student(x);
  expect_shape(c, c.shared("check.output"), {B, T, E}, got.shape());
  expect_close(c, c.shared("check.output"), {B, T, E}, parallel(x).data(), got.data(), 1e-10, hint,
               order_mistakes(c, x[0], x[1], x[2]));
}

// A state as a sequence leaves it: S = sum_j phi(k_j) v_j^T, z = sum_j phi(k_j) over `n` random positions.
exercise::LinearState random_state(int B, int D, int E, int n, ag::Rng& rng) {
  std::vector<Scalar> S(static_cast<std::size_t>(B) * D * E), z(static_cast<std::size_t>(B) * D);
  for (int j = 0; j < n; ++j) {
    const Tensor k = random_tensor({B, D}, rng, 1.5), v = random_tensor({B, E}, rng);
    for (int b = 0; b < B; ++b)
      for (int d = 0; d < D; ++d) {
        const Scalar fk = phi(k.data()[static_cast<std::size_t>(b * D + d)]);
        z[static_cast<std::size_t>(b * D + d)] += fk;
        for (int e = 0; e < E; ++e)
          S[static_cast<std::size_t>((b * D + d) * E + e)] += fk * v.data()[static_cast<std::size_t>(b * E + e)];
      }
  }
  return {Tensor({B, D, E}, S, true), Tensor({B, D}, z, true)};
}

// S + a b^T for each sequence, a (B, D) through `f`, b (B, E) through `g`; keep: S's old values kept or not.
std::vector<Scalar> plus_outer(const Tensor& S, const Tensor& a, const Tensor& b, Scalar (*f)(Scalar),
                               Scalar (*g)(Scalar), bool keep) {
  const int B = a.size(0), D = a.size(1), E = b.size(1);
  std::vector<Scalar> out = keep ? S.data() : std::vector<Scalar>(S.numel());
  for (int n = 0; n < B; ++n)
    for (int d = 0; d < D; ++d)
      for (int e = 0; e < E; ++e)
        out[static_cast<std::size_t>((n * D + d) * E + e)] +=
            f(a.data()[static_cast<std::size_t>(n * D + d)]) * g(b.data()[static_cast<std::size_t>(n * E + e)]);
  return out;
}
// z + f(k), or f(k) alone
std::vector<Scalar> plus(const Tensor& z, const Tensor& k, Scalar (*f)(Scalar), bool keep) {
  std::vector<Scalar> out = keep ? z.data() : std::vector<Scalar>(z.numel());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] += f(k.data()[i]);
  return out;
}
Scalar same(Scalar x) { return x; }

// phi(q)^T S / (norm), with phi or not on q, the normaliser phi(q)^T z + eps, phi(q)^T z alone, sum(z) + eps, or 1.
enum class Norm { right, no_eps, sum_z, none };
std::vector<Scalar> read(const exercise::LinearState& s, const Tensor& q, Scalar (*f)(Scalar), Norm norm) {
  const int B = q.size(0), D = q.size(1), E = s.S.size(2);
  std::vector<Scalar> out(static_cast<std::size_t>(B) * E);
  for (int b = 0; b < B; ++b) {
    Scalar total = 0, sum_z = 0;
    for (int d = 0; d < D; ++d) {
      total += f(q.data()[static_cast<std::size_t>(b * D + d)]) * s.z.data()[static_cast<std::size_t>(b * D + d)];
      sum_z += s.z.data()[static_cast<std::size_t>(b * D + d)];
    }
    const Scalar divide_by = norm == Norm::right    ? total + kEps
                             : norm == Norm::no_eps ? total
                             : norm == Norm::sum_z  ? sum_z + kEps
                                                    : 1;
    for (int e = 0; e < E; ++e) {
      Scalar sum = 0;
      for (int d = 0; d < D; ++d)
        sum += f(q.data()[static_cast<std::size_t>(b * D + d)]) *
               s.S.data()[static_cast<std::size_t>((b * D + d) * E + e)];
      out[static_cast<std::size_t>(b * E + e)] = sum / divide_by;
    }
  }
  return out;
}

// The longest path, in ops, from node `from` down to node `to` through the parents (-1 when `to` is not reached).
int longest_path(const ag::Node* from, const ag::Node* to, std::map<const ag::Node*, int>& memo) {
  if (from == to) return 0;
  if (const auto it = memo.find(from); it != memo.end()) return it->second;
  int best = -1;
  for (const auto& p : from->parents)
    if (const int below = longest_path(p.get(), to, memo); below >= 0) best = std::max(best, below + 1);
  return memo[from] = best;
}

// The shortest path, in ops, from `from` down to `to` (-1 when `to` is not reached).
int shortest_path(const ag::Node* from, const ag::Node* to) {
  std::map<const ag::Node*, int> depth{{from, 0}};
  std::vector<const ag::Node*> level{from};
  while (!level.empty()) {
    std::vector<const ag::Node*> next;
    for (const ag::Node* n : level) {
      if (n == to) return depth[n];
      for (const auto& p : n->parents)
        if (depth.emplace(p.get(), depth[n] + 1).second) next.push_back(p.get());
    }
    level = std::move(next);
  }
  return -1;
}

// How many nodes the graph below `out` has.
std::size_t graph_size(const ag::Node* out) {
  std::set<const ag::Node*> seen{out};
  std::vector<const ag::Node*> todo{out};
  while (!todo.empty()) {
    const ag::Node* n = todo.back();
    todo.pop_back();
    for (const auto& p : n->parents)
      if (seen.insert(p.get()).second) todo.push_back(p.get());
  }
  return seen.size();
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "linear-attention");
  ag::Rng rng(1718);
  c.run("feature-map", [&] {
    // Inputs far below and above 0 beside ordinary ones: phi is e^x below 0 and x + 1 above.
    Tensor x = random_tensor({3, 8}, rng, 3);
    const Scalar far[] = {-1000, -700, -40, -1, -1e-3, 1e-3, 1, 40, 1000};
    for (std::size_t i = 0; i < std::size(far); ++i) x.data()[i] = far[i];
    c.watch("x", x);
    const Tensor got = [&] {
      ag::NoGrad no_grad;
      return exercise::phi(x);
    }();
    expect_shape(c, c.shared("check.output"), x.shape(), got.shape());
    std::vector<Scalar> relu_one(x.numel()), elu(x.numel());
    for (std::size_t i = 0; i < x.numel(); ++i) {
      relu_one[i] = x.data()[i] > 0 ? x.data()[i] + 1 : 1;
      elu[i] = phi(x.data()[i]) - 1;
    }
    const std::vector<Scalar> expected = nn::elu_plus_one(x).data();
    expect_close(c, c.shared("check.output"), x.shape(), expected, got.data(), 1e-12, c.tr("hint.phi"),
                 {{relu_one, c.tr("hint.phi_relu")}, {elu, c.tr("hint.phi_no_one")}});
    // Below 0, to the last digit however small (e^-40 is 4e-18, under any absolute tolerance): phi(x) / e^x is 1.
    std::vector<Scalar> ratio;
    for (std::size_t i = 0; i < x.numel(); ++i)
      if (x.data()[i] < 0 && expected[i] > 0) ratio.push_back(got.data()[i] / expected[i]);
    expect_close(c, c.tr("what.ratio"), {static_cast<int>(ratio.size())}, std::vector<Scalar>(ratio.size(), 1), ratio,
                 1e-12, c.tr("hint.phi"));
    // Its gradient too, 1 above 0 and e^x below, at the same inputs: an exp that overflows where its value is not
    // used still gives inf * 0 = NaN in the backward.
    const TensorFn mine = [](const std::vector<Tensor>& in) { return exercise::phi(in[0]); };
    const TensorFn engine = [](const std::vector<Tensor>& in) { return nn::elu_plus_one(in[0]); };
    const std::vector<Scalar> w = output_weights(engine, {x}, rng);
    expect_same_gradients(c, {"x"}, {x}, gradients(engine, {x}, w), gradients(mine, {x}, w), 1e-12,
                          c.tr("hint.phi_gradient"));
  });
  c.run("update", [&] {
    // D and E differ, so that an outer product the wrong way round has the wrong shape; then other sizes
    for (const auto& [B, D, E] : {std::tuple{2, 3, 5}, std::tuple{1, 4, 2}}) {
      const exercise::LinearState before = random_state(B, D, E, 3, rng);
      const Tensor k = random_tensor({B, D}, rng, 1.5), v = random_tensor({B, E}, rng);
      c.watch({"state.S", "state.z", "k_t", "v_t"}, {before.S, before.z, k, v});
      ag::NoGrad no_grad;
      const exercise::LinearState after = exercise::linear_update(before, k, v);
      expect_shape(c, "S", {B, D, E}, after.S.shape());
      expect_shape(c, "z", {B, D}, after.z.shape());
      expect_close(c, "S", {B, D, E}, plus_outer(before.S, k, v, phi, same, true), after.S.data(), 1e-10,
                   c.tr("hint.update_S"),
                   {{plus_outer(before.S, k, v, phi, phi, true), c.tr("hint.phi_v")},
                    {plus_outer(before.S, k, v, same, same, true), c.tr("hint.no_phi_k")},
                    {plus_outer(before.S, k, v, phi, same, false), c.tr("hint.forgets")}});
      expect_close(c, "z", {B, D}, plus(before.z, k, phi, true), after.z.data(), 1e-10, c.tr("hint.update_z"),
                   {{plus(before.z, k, same, true), c.tr("hint.no_phi_k")},
                    {plus(before.z, k, phi, false), c.tr("hint.forgets")}});
    }
  });
  c.run("read-out", [&] {
    for (const auto& [B, D, E] : {std::tuple{3, 4, 2}, std::tuple{2, 2, 5}}) {
      const exercise::LinearState state = random_state(B, D, E, 4, rng);
      const Tensor q = random_tensor({B, D}, rng, 1.5);
      c.watch({"state.S", "state.z", "q_t"}, {state.S, state.z, q});
      ag::NoGrad no_grad;
      const Tensor got = exercise::linear_read(state, q);
      expect_shape(c, c.shared("check.output"), {B, E}, got.shape());
      expect_close(c, c.shared("check.output"), {B, E}, read(state, q, phi, Norm::right), got.data(), 1e-10,
                   c.tr("hint.read"),
                   {{read(state, q, phi, Norm::none), c.tr("hint.no_normaliser")},
                    {read(state, q, same, Norm::right), c.tr("hint.no_phi_q")},
                    {read(state, q, phi, Norm::sum_z), c.tr("hint.sum_z")},
                    {read(state, q, phi, Norm::no_eps), c.tr("hint.eps")}});
    }
  });
  c.run("sequence", [&] {
    // twice, on other values of the same shape: each call starts from an empty state
    expect_sequence(c, 2, 6, 4, 4, rng, c.tr("hint.sequence"));
    expect_sequence(c, 2, 6, 4, 4, rng, c.tr("hint.sequence_again"));
  });
  c.run("shapes", [&] {
    // One position; values narrower and wider than the keys; one sequence and three.
    expect_sequence(c, 1, 1, 2, 3, rng, c.tr("hint.shapes"));
    expect_sequence(c, 3, 5, 3, 1, rng, c.tr("hint.shapes"));
    expect_sequence(c, 2, 7, 2, 5, rng, c.tr("hint.shapes"));
  });
  c.run("gradients", [&] {
    // 5 positions, then 24: longer than a truncation of backpropagation a student might try
    for (const int T : {5, 24}) {
      const std::vector<Tensor> x{random_tensor({2, T, 3}, rng, 1.5), random_tensor({2, T, 3}, rng, 1.5),
                                  random_tensor({2, T, 4}, rng)};
      const std::vector<Scalar> w = output_weights(parallel, x, rng);
      const std::vector<std::string> names{"q", "k", "v"};
      std::vector<std::vector<Mistake>> cut;  // an input cut from the graph: no gradient reaches it
      for (std::size_t i = 0; i < x.size(); ++i)
        cut.push_back({{std::vector<Scalar>(x[i].numel()), c.tr("hint.cut_" + names[i])}});
      expect_same_gradients(c, names, x, gradients(parallel, x, w), gradients(student, x, w), 1e-9,
                            c.tr("hint.gradients"), cut);
    }
  });
  c.run("recurrence", [&] {
    // Each key its own leaf, stacked into k: a recurrence's longest path from the first key to the output grows by at
    // least one op (the state's addition) a position, its shortest path from the last key does not (that key is read
    // in one step), and its graph grows by the same number of nodes a position (constant work a step). The parallel
    // form fails the first; a chain of no-ops on the whole k fails the second; a state rebuilt from zero at each
    // position (T^2 work) fails the third.
    int first[2] = {0, 0}, last[2] = {0, 0};
    std::size_t nodes[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      const int T = 4 << i;  // 4, 8, 16
      std::vector<Tensor> keys;
      for (int t = 0; t < T; ++t) keys.push_back(random_tensor({1, 2}, rng));
      const std::vector<Tensor> x{random_tensor({1, T, 2}, rng), ag::stack(keys, 1), random_tensor({1, T, 2}, rng)};
      const Tensor out = student(x);
      std::map<const ag::Node*, int> memo;
      if (i < 2) {
        first[i] = longest_path(out.node(), keys.front().node(), memo);
        last[i] = shortest_path(out.node(), keys.back().node());
      }
      nodes[i] = graph_size(out.node());
    }
    if (first[1] - first[0] < 4)
      throw CheckFailure{c.shared("linear-attention.recurrence_detail", first[0], first[1]), c.tr("hint.recurrence")};
    if (last[1] > last[0])
      throw CheckFailure{c.shared("linear-attention.last_key_detail", last[0], last[1]), c.tr("hint.last_key")};
    if (nodes[2] - nodes[1] > 2 * (nodes[1] - nodes[0]) + 2)
      throw CheckFailure{c.shared("linear-attention.nodes_detail", nodes[0], nodes[1], nodes[2]), c.tr("hint.nodes")};
  });
  return c.finish();
}
