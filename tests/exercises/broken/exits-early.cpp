// A tanh that ends the program: reported as an early end, not as a crash.
#include <cstdlib>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor tanh_op(const Tensor&) { std::exit(0); }

}  // namespace exercise
