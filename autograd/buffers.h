// Where the tensor, the engine and the ops take their arrays from
// (backend.cpp): a backend's pool when it offers one, else new vectors.
// Internal to the engine; tensor.h has its public part (release_buffers,
// pooled_bytes, poison_buffers).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION::detail {

// A vector of n elements holding whatever its last owner left; and the
// hand-back, which leaves v empty.
std::vector<Scalar> take_buffer(std::size_t n);
void recycle(std::vector<Scalar>& v);
// Called at the start of every backward pass (a pool frees what has sat unused for a few).
void next_step();
// A buffer that an op keeps for its backward (not a node's data): it is handed
// back when its last holder, the backward closure, lets it go.
std::shared_ptr<std::vector<Scalar>> take_scratch(std::size_t n);

}  // namespace ag::inline AG_PRECISION::detail
