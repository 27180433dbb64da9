// cpp/src/cpu/set_kernels.h: the set-function kernels (set_kernels.cpp), registered with
// the sorting family in sort_kernels.cpp.
#pragma once
#include "xpuruntime/kernel.h"

namespace xrt::cpu {

/// in: 1-D x; out: values, indices, inverse_indices, counts (each of x's size, or empty
/// when not wanted) and a 0-d int64 count of the unique values written.
void unique_kernel(const KernelCall& call);
/// in: x1, x2 (one dtype); out: bool of x1's shape.
void isin_kernel(const KernelCall& call);

}  // namespace xrt::cpu
