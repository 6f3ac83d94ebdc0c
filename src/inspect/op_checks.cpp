// Every op, checked against central differences on random inputs. Built into
// the float64 engine only (see op_checks.h).
#include "src/inspect/op_checks.h"

#include "autograd/gradcheck.h"
#include "autograd/ops.h"

namespace ag {

namespace {

// Where an input's random values are drawn: some ops have no derivative (relu
// at 0) or no value (log at 0) at some points, which +-eps must not straddle.
enum class Domain { any, positive, away_from_zero };

struct Input {
  Shape shape;
  Domain domain = Domain::any;
};

struct Case {
  std::string op;
  std::vector<Input> inputs;
  TensorFn f;
};

Tensor random_input(const Input& in, Rng& rng) {
  std::vector<Scalar> data(numel(in.shape));
  for (Scalar& v : data) {
    double x = rng.normal();
    if (in.domain == Domain::positive) x = 0.5 + std::abs(x);
    if (in.domain == Domain::away_from_zero) x = (x < 0 ? -0.2 : 0.2) + x;
    v = x;
  }
  return Tensor(in.shape, std::move(data), true);
}

std::string describe(const std::vector<Input>& inputs) {
  std::string s;
  for (const Input& in : inputs) s += (s.empty() ? "" : ", ") + to_string(in.shape);
  return s;
}

std::vector<Case> all_cases() {
  using V = const std::vector<Tensor>&;
  const Domain pos = Domain::positive, nz = Domain::away_from_zero;
  return {
      {"add", {{{3, 4}}, {{3, 4}}}, [](V x) { return add(x[0], x[1]); }},
      {"add (bias)", {{{2, 3, 4}}, {{4}}}, [](V x) { return add(x[0], x[1]); }},
      {"add (trailing, left)", {{{3, 4}}, {{2, 3, 4}}}, [](V x) { return add(x[0], x[1]); }},
      {"add (scalar tensor)", {{{2, 3}}, {{}}}, [](V x) { return add(x[0], x[1]); }},
      {"sub (bias)", {{{2, 3, 4}}, {{3, 4}}}, [](V x) { return sub(x[0], x[1]); }},
      {"mul", {{{3, 4}}, {{3, 4}}}, [](V x) { return mul(x[0], x[1]); }},
      {"mul (bias)", {{{2, 3, 4}}, {{4}}}, [](V x) { return mul(x[0], x[1]); }},
      {"div", {{{3, 4}}, {{3, 4}, nz}}, [](V x) { return div(x[0], x[1]); }},
      {"div (bias)", {{{2, 3, 4}}, {{4}, nz}}, [](V x) { return div(x[0], x[1]); }},
      {"neg", {{{3, 4}}}, [](V x) { return neg(x[0]); }},
      {"add_scalar", {{{3, 4}}}, [](V x) { return add(x[0], 2.5); }},
      {"mul_scalar", {{{3, 4}}}, [](V x) { return mul(x[0], -1.5); }},
      {"pow", {{{3, 4}, pos}}, [](V x) { return pow(x[0], 1.7); }},
      {"exp", {{{3, 4}}}, [](V x) { return exp(x[0]); }},
      {"log", {{{3, 4}, pos}}, [](V x) { return log(x[0]); }},
      {"tanh", {{{3, 4}}}, [](V x) { return tanh(x[0]); }},
      {"sigmoid", {{{3, 4}}}, [](V x) { return sigmoid(x[0]); }},
      {"relu", {{{3, 4}, nz}}, [](V x) { return relu(x[0]); }},
      {"gelu", {{{3, 4}}}, [](V x) { return gelu(x[0]); }},
      {"reshape",
       {{{2, 3, 4}}},
       [](V x) {
         return reshape(x[0], {4, -1});
       }},
      {"transpose", {{{2, 3, 4}}}, [](V x) { return transpose(x[0]); }},
      {"slice", {{{2, 5, 3}}}, [](V x) { return slice(x[0], 1, 1, 4); }},
      {"select", {{{2, 5, 3}}}, [](V x) { return select(x[0], -2, 3); }},
      {"concat",
       {{{2, 3}}, {{2, 4}}},
       [](V x) {
         return concat({x[0], x[1]}, 1);
       }},
      {"stack",
       {{{2, 3}}, {{2, 3}}, {{2, 3}}},
       [](V x) {
         return stack({x[0], x[1], x[2]}, 1);
       }},
      {"sum", {{{3, 4}}}, [](V x) { return sum(x[0]); }},
      {"sum (axis)", {{{2, 3, 4}}}, [](V x) { return sum(x[0], 1); }},
      {"mean", {{{3, 4}}}, [](V x) { return mean(x[0]); }},
      {"mean (axis)", {{{2, 3, 4}}}, [](V x) { return mean(x[0], -1); }},
      {"matmul", {{{3, 4}}, {{4, 5}}}, [](V x) { return matmul(x[0], x[1]); }},
      {"matmul (shared weight)", {{{2, 3, 4}}, {{4, 5}}}, [](V x) { return matmul(x[0], x[1]); }},
      {"linear", {{{2, 3, 4}}, {{4, 5}}, {{5}}}, [](V x) { return linear(x[0], x[1], x[2]); }},
      {"linear (no bias)", {{{3, 4}}, {{4, 5}}}, [](V x) { return linear(x[0], x[1], Tensor()); }},
      {"feed_forward",
       {{{2, 3, 4}}, {{4, 6}}, {{6}}, {{6, 5}}, {{5}}},
       [](V x) { return feed_forward(x[0], x[1], x[2], x[3], x[4]); }},
      {"feed_forward (no biases)",
       {{{3, 4}}, {{4, 6}}, {{6, 5}}},
       [](V x) { return feed_forward(x[0], x[1], Tensor(), x[2], Tensor()); }},
      {"matmul (batched)", {{{2, 3, 4}}, {{2, 4, 5}}}, [](V x) { return matmul(x[0], x[1]); }},
      {"softmax", {{{3, 5}}}, [](V x) { return softmax(x[0]); }},
      {"log_softmax", {{{3, 5}}}, [](V x) { return log_softmax(x[0]); }},
      {"cross_entropy",
       {{{2, 3, 5}}},
       [](V x) {
         return cross_entropy(x[0], {4, 0, -100, 2, 2, 1});
       }},  // one row ignored
      {"mse", {{{3, 4}}, {{3, 4}}}, [](V x) { return mse(x[0], x[1]); }},
      {"embedding",
       {{{6, 3}}},
       [](V x) {
         return embedding(x[0], {1, 5, 1, 0}, {2, 2});
       }},  // row 1 used twice
      {"masked_fill (causal)",
       {{{2, 4, 4}}},
       [](V x) {
         return masked_fill(x[0], causal_mask(4), {4, 4}, -1e9);
       }},
      {"layer_norm", {{{2, 3, 5}}, {{5}}, {{5}}}, [](V x) { return layer_norm(x[0], x[1], x[2]); }},
      {"rotary", {{{2, 5, 6}}}, [](V x) { return rotary(x[0], 100); }},
      {"rotary (per head)", {{{2, 5, 8}}}, [](V x) { return rotary(x[0], 100, 4); }},
      {"attention (causal, 2 heads)",
       {{{2, 4, 6}}, {{2, 4, 6}}, {{2, 4, 6}}},
       [](V x) { return attention(x[0], x[1], x[2], 2, true, 0.5); }},
      {"attention (full, 3 heads)",
       {{{2, 3, 6}}, {{2, 3, 6}}, {{2, 3, 6}}},
       [](V x) { return attention(x[0], x[1], x[2], 3, false, 0.7); }},
      // 70 queries: causal attention works in blocks of 32 queries (ops_attention.cpp), so three of them
      {"attention (causal, 70 steps)",
       {{{1, 70, 4}}, {{1, 70, 4}}, {{1, 70, 4}}},
       [](V x) { return attention(x[0], x[1], x[2], 2, true, 0.5); }},
      // B 2, T 5, I 3, H 4: x, h0, W_x, W_h, b
      {"rnn_tanh",
       {{{2, 5, 3}}, {{2, 4}}, {{3, 4}}, {{4, 4}}, {{4}}},
       [](V x) { return rnn_tanh(x[0], x[1], x[2] * 0.5, x[3] * 0.5, x[4]); }},
      // B 2, T 5, I 3, H 4: x, h0, c0, W_x, W_h, b (the LSTM's 4 gates)
      {"lstm",
       {{{2, 5, 3}}, {{2, 4}}, {{2, 4}}, {{3, 16}}, {{4, 16}}, {{16}}},
       [](V x) { return lstm(x[0], x[1], x[2], x[3] * 0.5, x[4] * 0.5, x[5]); }},
      // x, h0, W_x, W_h, b_x, b_h (the GRU's 3 gates)
      {"gru",
       {{{2, 5, 3}}, {{2, 4}}, {{3, 12}}, {{4, 12}}, {{12}}, {{12}}},
       [](V x) { return gru(x[0], x[1], x[2] * 0.5, x[3] * 0.5, x[4], x[5]); }},
      {"dropout",
       {{{4, 5}}},
       [](V x) {
         Rng rng(7);  // the same mask on every evaluation
         return dropout(x[0], 0.3, rng, true);
       }},
  };
}

}  // namespace

OpCheckReport check_all_ops(std::uint64_t seed) {
  GradcheckOptions options;
  options.seed = seed + 1;
  OpCheckReport report{options.eps, options.tolerance, {}};
  Rng rng(seed);
  for (const Case& c : all_cases()) {
    std::vector<Tensor> inputs;
    for (const Input& in : c.inputs) inputs.push_back(random_input(in, rng));
    const GradcheckResult r = gradcheck(c.f, inputs, options);
    report.ops.push_back({c.op, describe(c.inputs), r.checked, r.max_abs_error, r.max_rel_error, r.passed});
  }
  return report;
}

}  // namespace ag
