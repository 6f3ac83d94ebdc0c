// Which implementation the ops run: the plain reference loops
// (autograd/reference/, the formula as written) or the fast kernels (fast.h).
// Both compute the same thing to float rounding; the fast path is the default.
// The environment's SEQGRAD_KERNELS=reference (or =fast) sets it when the
// program starts; set_kernel_path changes it (for the whole process).
#pragma once

#include <string>

namespace ag {

enum class KernelPath { fast, reference };

KernelPath kernel_path();
void set_kernel_path(KernelPath path);
inline bool use_reference() { return kernel_path() == KernelPath::reference; }

// "fast" or "reference"; anything else is a ValueError naming both.
KernelPath parse_kernel_path(const std::string& name);
const char* to_string(KernelPath path);

}  // namespace ag
