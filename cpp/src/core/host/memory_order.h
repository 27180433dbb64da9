// cpp/src/core/host/memory_order.h: the order an elementwise walk takes the dimensions of its
// output in, for every backend's strided loops (cpu/loops.h, cuda/elementwise_kernel.cpp,
// cuda/codegen.cpp).
#pragma once
#include <utility>

#include "xpuruntime/tensor.h"

namespace xrt::host {

/// The dimensions of out, outermost first, in order[0 .. out.ndim()): row-major, or, when
/// by_memory and out is not row-major, by decreasing byte stride (stable among equals). An
/// elementwise map may take its elements in any order; taken in the output's memory order,
/// a result laid out as its inputs (Note [Result layout] in core/ops.cpp) merges into one
/// dense run.
inline void memory_order(const Tensor& out, bool by_memory, int* order) {
  const int nd = out.ndim();
  for (int d = 0; d < nd; ++d) order[d] = d;
  if (!by_memory || out.is_contiguous()) return;
  auto reach = [&](int d) { return out.strides()[d] < 0 ? -out.strides()[d] : out.strides()[d]; };
  for (int i = 1; i < nd; ++i)
    for (int j = i; j > 0 && reach(order[j]) > reach(order[j - 1]); --j)
      std::swap(order[j], order[j - 1]);
}

}  // namespace xrt::host
