// A file that writes through a null pointer (a segmentation fault in the child, not in seqgrad).
#include <cstdint>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor tanh_op(const Tensor& x) {
  std::uintptr_t address = 8;  // no object lives there
  *reinterpret_cast<volatile Scalar*>(address) = x.data()[0];
  return x;
}

}  // namespace exercise
