// A file that does not compile (for the tests: the compiler's message must reach the student).
#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  Tensor scores = ag::matmul(q, ag::transpose(k))  // the semicolon is missing
      return ag::matmul(ag::softmax(scores), v);
}

}  // namespace exercise
