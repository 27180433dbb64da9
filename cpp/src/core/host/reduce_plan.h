// cpp/src/core/host/reduce_plan.h: how a reduction walks its input, planned on the host for
// every backend (the CPU engine, cpu/reduce_engine.h; the CUDA walks, cuda/reduce_launch.cpp).
//
// The kept axes (one output each, row-major: the output is contiguous) and the reduced axes
// are each merged into a Box, as few dimensions as memory allows. Unless positions matter
// (argmax, argmin), the reduced axes are walked in memory order: sorted by stride, negative
// strides flipped (the flip moves the base offset to the lowest address).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "xpuruntime/tensor.h"

namespace xrt::host::reduce {

/// A set of axes of the input merged into as few dimensions as memory allows (outermost
/// first, strides in elements). An empty set is one dimension of size 1.
struct Box {
  Dims shape, strides;
  int64_t numel = 1;

  Box(const Tensor& x, const Dims& axes, bool memory_order, int64_t& base_offset) {
    Dims order(axes.begin(), axes.end());
    if (memory_order) {
      for (int64_t a : order) {
        int d = static_cast<int>(a);
        if (x.strides()[d] < 0 && x.shape()[d] > 1)
          base_offset += (x.shape()[d] - 1) * x.strides()[d];
      }
      // Insertion sort by decreasing |stride| (stable, allocation-free; a few axes).
      auto size = [&](int64_t a) { return std::abs(x.strides()[static_cast<int>(a)]); };
      for (int i = 1; i < order.size(); ++i)
        for (int j = i; j > 0 && size(order[j - 1]) < size(order[j]); --j)
          std::swap(order[j - 1], order[j]);
    }
    for (int64_t a : order) {
      int d = static_cast<int>(a);
      int64_t size = x.shape()[d];
      int64_t stride = memory_order ? std::abs(x.strides()[d]) : x.strides()[d];
      numel *= size;
      if (size == 1) continue;
      if (!shape.empty() && strides[strides.size() - 1] == stride * size) {
        shape[shape.size() - 1] *= size;
        strides[strides.size() - 1] = stride;
      } else {
        shape.push_back(size);
        strides.push_back(stride);
      }
    }
    if (shape.empty()) { shape.push_back(1); strides.push_back(0); }
  }
  int ndim() const { return shape.size(); }
};

/// The axes of x not in `axes` (sorted, non-negative), in order: one output each.
inline Dims kept_axes(const Tensor& x, const Dims& axes) {
  Dims kept;
  for (int d = 0, j = 0; d < x.ndim(); ++d) {
    if (j < axes.size() && axes[j] == d) { ++j; continue; }
    kept.push_back(d);
  }
  return kept;
}

}  // namespace xrt::host::reduce
