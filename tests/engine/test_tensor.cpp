#include "autograd/ops.h"
#include "test_util.h"

using ag::Shape;
using ag::Tensor;

TEST_CASE("a tensor holds its shape and row-major values", "[tensor]") {
  Tensor t({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(t.shape() == Shape{2, 3});
  CHECK(t.ndim() == 2);
  CHECK(t.numel() == 6);
  CHECK(t.size(-1) == 3);
  CHECK(t.size(0) == 2);
  CHECK(t.data()[4] == 5);
  CHECK_FALSE(t.requires_grad());
  CHECK(t.grad().empty());
  CHECK(ag::to_string(t.shape()) == "(2, 3)");
  CHECK(ag::to_string(Shape{}) == "()");
}

TEST_CASE("factories fill as asked", "[tensor]") {
  CHECK(Tensor::zeros({2, 2}).data() == std::vector<ag::Scalar>{0, 0, 0, 0});
  CHECK(Tensor::full({3}, 2.5).data() == std::vector<ag::Scalar>{2.5, 2.5, 2.5});
  Tensor s = Tensor::scalar(4, true);
  CHECK(s.shape().empty());
  CHECK(s.item() == 4);
  CHECK(s.requires_grad());
}

TEST_CASE("a tensor refuses data that does not fit its shape", "[tensor][errors]") {
  CHECK_THROWS_WITH(Tensor({2, 3}, {1, 2, 3}), "Tensor: shape (2, 3) holds 6 values, but 3 were given");
  CHECK_THROWS_AS(Tensor({-1, 3}, {}), ag::ShapeError);
  CHECK_THROWS_WITH(Tensor({2, 2}, {1, 2, 3, 4}).item(), "item: expected a tensor with one element, got shape (2, 2)");
  CHECK_THROWS_WITH(Tensor({2}, {1, 2}).size(1), "size: axis 1 is out of range for shape (2)");
}

TEST_CASE("copies of a Tensor share one node, detach copies the values", "[tensor]") {
  Tensor a({2}, {1, 2}, true);
  Tensor b = a;
  b.data()[0] = 10;
  CHECK(a.data()[0] == 10);
  Tensor d = a.detach();
  d.data()[1] = 20;
  CHECK(a.data()[1] == 2);
  CHECK_FALSE(d.requires_grad());
}

TEST_CASE("only a leaf's requires_grad can be set", "[tensor][errors]") {
  Tensor a({2}, {1, 2}, true);
  Tensor b = a * 2;
  CHECK_THROWS_WITH(b.set_requires_grad(false), "set_requires_grad: only a leaf tensor's flag can be set");
}

TEST_CASE("an empty Tensor handle throws a ValueError from every accessor, never dereferences null",
          "[tensor][errors]") {
  ag::Tensor empty;
  CHECK_FALSE(static_cast<bool>(empty));
  CHECK_THROWS_AS(empty.shape(), ag::ValueError);
  CHECK_THROWS_AS(empty.numel(), ag::ValueError);
  CHECK_THROWS_AS(empty.data(), ag::ValueError);
  CHECK_THROWS_AS(empty.grad(), ag::ValueError);
  CHECK_THROWS_AS(empty.requires_grad(), ag::ValueError);
  CHECK_THROWS_AS(empty.set_requires_grad(true), ag::ValueError);
  CHECK_THROWS_AS(empty.zero_grad(), ag::ValueError);
  CHECK_THROWS_AS(empty.item(), ag::ValueError);
  CHECK_THROWS_WITH(empty.ndim(), "an empty tensor (a default-constructed handle) has no shape, values or gradient");
}
