// Wrong arguments throw with a message that names the op and what was expected.
#include "autograd/ops.h"
#include "test_util.h"

using ag::Tensor;

namespace {
Tensor ones(ag::Shape shape) { return Tensor::full(std::move(shape), 1); }
}  // namespace

TEST_CASE("matmul names both shapes when they do not fit", "[errors]") {
  CHECK_THROWS_WITH(ag::matmul(ones({2, 3}), ones({4, 5})),
                    "matmul: shapes (2, 3) and (4, 5) do not match: inner dimensions 3 and 4 differ");
  CHECK_THROWS_WITH(
      ag::matmul(ones({2, 3, 4}), ones({3, 4, 5})),
      "matmul: shapes (2, 3, 4) and (3, 4, 5) do not match: batched matmul needs equal leading dimensions");
  CHECK_THROWS_WITH(ag::matmul(ones({3}), ones({3, 2})),
                    "matmul: shapes (3) and (3, 2) need at least 2 dimensions each");
  CHECK_THROWS_AS(ag::matmul(ones({2, 3}), ones({4, 5})), ag::ShapeError);
}

TEST_CASE("shape ops say what range or size was expected", "[errors]") {
  CHECK_THROWS_WITH(ag::reshape(ones({2, 3}), {4, 2}),
                    "reshape: shapes (2, 3) and (4, 2) hold different numbers of elements");
  CHECK_THROWS_WITH(ag::reshape(ones({2, 3}), {-1, 4}), Catch::Contains("cannot be inferred"));
  CHECK_THROWS_WITH(ag::transpose(ones({3})), "transpose: needs at least 2 dimensions, got shape (3)");
  CHECK_THROWS_WITH(ag::slice(ones({2, 3}), 1, 2, 5),
                    "slice: range [2, 5) is not within [0, 3] along axis 1 of shape (2, 3)");
  CHECK_THROWS_WITH(ag::select(ones({2, 3}), 0, 2),
                    "select: index 2 is out of range [0, 2) along axis 0 of shape (2, 3)");
  CHECK_THROWS_WITH(ag::sum(ones({2, 3}), 2), "sum_axis: axis 2 is out of range for a tensor of 2 dimensions");
  CHECK_THROWS_WITH(ag::concat({ones({2, 3}), ones({3, 3})}, 1),
                    "concat: shapes (2, 3) and (3, 3) differ outside the concatenation axis 1");
  CHECK_THROWS_WITH(ag::stack({ones({2}), ones({3})}, 0), "stack: shapes (2) and (3) differ: stack needs equal shapes");
  CHECK_THROWS_WITH(ag::concat({}, 0), "concat: needs at least one tensor");
}

TEST_CASE("neural-network ops check classes, ids, and parameter shapes", "[errors]") {
  CHECK_THROWS_WITH(ag::cross_entropy(ones({2, 3}), {0}),
                    "cross_entropy: logits of shape (2, 3) have 2 rows, but 1 targets were given");
  CHECK_THROWS_WITH(ag::cross_entropy(ones({2, 3}), {0, 3}), "cross_entropy: target 3 is outside the 3 classes");
  CHECK_THROWS_WITH(ag::embedding(ones({4, 2}), {1, 4}, {2}), "embedding: token id 4 is outside the vocabulary [0, 4)");
  CHECK_THROWS_WITH(ag::embedding(ones({4, 2}), {1, 2}, {3}), "embedding: ids_shape (3) holds 3 ids, but 2 were given");
  CHECK_THROWS_WITH(ag::layer_norm(ones({2, 3}), ones({4}), ones({3})),
                    "layer_norm: shapes (2, 3) and (4) do not match: gamma must be (C)");
  CHECK_THROWS_WITH(ag::mse(ones({2}), ones({3})), "mse: shapes (2) and (3) differ: mse needs equal shapes");
  CHECK_THROWS_WITH(ag::masked_fill(ones({2, 2}), {0, 1, 0}, {3}, 0),
                    Catch::StartsWith("masked_fill: shapes (2, 2) and (3)"));
  ag::Rng rng(1);
  CHECK_THROWS_WITH(ag::dropout(ones({2}), 1, rng, true), Catch::StartsWith("dropout: p must be in [0, 1)"));
  CHECK_THROWS_WITH(ag::causal_mask(-1), "causal_mask: negative length -1");
}

TEST_CASE("the fused LSTM and GRU name the shape that does not fit", "[errors]") {
  // x (B 2, T 3, I 5), H 4: the LSTM's weights are (5, 16) and (4, 16), the GRU's (5, 12) and (4, 12).
  CHECK_THROWS_WITH(ag::lstm(ones({2, 3, 5}), ones({2, 4}), ones({2, 4}), ones({5, 12}), ones({4, 16}), ones({16})),
                    "lstm: shapes (5, 12) and (4, 16) do not match: W_x must be (I, 4H) and W_h (H, 4H), with I = "
                    "x.size(2) = 5");
  CHECK_THROWS_WITH(ag::lstm(ones({2, 3, 5}), ones({2, 4}), ones({3, 4}), ones({5, 16}), ones({4, 16}), ones({16})),
                    "lstm: shapes (3, 4) and (2, 3, 5) do not match: the initial state must be (B, H) = (2, 4)");
  CHECK_THROWS_WITH(ag::lstm(ones({2, 3, 5}), ones({2, 4}), ones({2, 4}), ones({5, 16}), ones({4, 16}), ones({12})),
                    "lstm: shapes (12) and (16) do not match: a bias must be (gates x H)");
  CHECK_THROWS_WITH(ag::gru(ones({2, 5}), ones({2, 4}), ones({5, 12}), ones({4, 12}), ones({12}), ones({12})),
                    "gru: shapes (2, 5) and (5, 12) do not match: x must be (B, T, I)");
  CHECK_THROWS_WITH(ag::gru(ones({2, 3, 5}), ones({2, 4}), ones({5, 12}), ones({4, 12}), ones({12}), ones({4})),
                    "gru: shapes (4) and (12) do not match: a bias must be (gates x H)");
}

TEST_CASE("an empty tensor handle is refused by name", "[errors]") {
  CHECK_THROWS_WITH(ag::tanh(Tensor()), "tanh: got an empty tensor");
  CHECK_THROWS_WITH(Tensor().backward(), "backward: called on an empty tensor");
}
