// cpp/src/cpu/loops.h: the strided-iteration engine every CPU elementwise kernel runs on.
//
// Operands (output first) share one shape; inputs are broadcast views (stride 0 where they
// repeat). The plan drops size-1 axes and merges axes that are contiguous for every operand,
// so a contiguous tensor of any rank becomes one flat run. A range [begin, end) of flat
// indices is walked run by run; each run is handed to an inner function with a pointer and
// a byte stride per operand, where kernels take their contiguous, vectorised fast paths.
#pragma once
#include <array>
#include <cstdint>

#include "core/host/memory_order.h"
#include "core/host/thread_pool.h"
#include "xpuruntime/tensor.h"

namespace xrt::cpu {

using host::parallel_for;

inline constexpr int64_t kParallelGrain = 1 << 15;  // elements per task of elementwise work

template <int N> struct LoopPlan {
  Dims shape;                      // merged, innermost last
  std::array<Dims, N> strides;     // bytes
  std::array<char*, N> base;
  int64_t numel = 1;

  /// in_memory_order: the walk may go in any order of the elements (an elementwise map),
  /// so it goes in the output's memory order (Note [Result layout] in core/ops.cpp);
  /// otherwise in row-major order.
  explicit LoopPlan(const std::array<const Tensor*, N>& ops, bool in_memory_order = false) {
    const Dims& full = ops[0]->shape();
    for (int k = 0; k < N; ++k) base[k] = ops[k]->data();
    int order[64];
    host::memory_order(*ops[0], in_memory_order, order);
    for (int i = 0; i < full.size(); ++i) {
      const int d = order[i];
      numel *= full[d];
      if (full[d] == 1) continue;
      bool merge = shape.size() > 0;
      for (int k = 0; k < N && merge; ++k) {
        int64_t s = ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->itemsize());
        merge = strides[k].back() == s * full[d];
      }
      if (merge) {
        shape[shape.size() - 1] *= full[d];
        for (int k = 0; k < N; ++k)
          strides[k][strides[k].size() - 1] =
              ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->itemsize());
      } else {
        shape.push_back(full[d]);
        for (int k = 0; k < N; ++k)
          strides[k].push_back(ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->itemsize()));
      }
    }
    if (shape.empty()) {  // 0-d or all ones: one element
      shape.push_back(1);
      for (int k = 0; k < N; ++k) strides[k].push_back(0);
    }
  }

  /// Calls inner(ptrs, inner_strides, count) for every run inside [begin, end).
  template <class Inner> void walk(int64_t begin, int64_t end, Inner&& inner) const {
    int nd = shape.size();
    int64_t index[64];
    std::array<char*, N> ptr = base;
    int64_t rest = begin;
    for (int d = nd - 1; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
      for (int k = 0; k < N; ++k) ptr[k] += index[d] * strides[k][d];
    }
    std::array<int64_t, N> inner_strides;
    for (int k = 0; k < N; ++k) inner_strides[k] = strides[k][nd - 1];
    int64_t position = begin;
    while (position < end) {
      int64_t count = std::min(shape[nd - 1] - index[nd - 1], end - position);
      inner(ptr, inner_strides, count);
      position += count;
      if (position >= end) break;
      // Advance to the start of the next run.
      for (int k = 0; k < N; ++k) ptr[k] += (count - 0) * strides[k][nd - 1];
      index[nd - 1] += count;
      for (int d = nd - 1; d > 0 && index[d] == shape[d]; --d) {
        index[d] = 0;
        ++index[d - 1];
        for (int k = 0; k < N; ++k)
          ptr[k] += strides[k][d - 1] - shape[d] * strides[k][d];
      }
    }
  }
};

/// Runs inner over every element of the operands, in parallel when there are many. Runs
/// come in row-major order unless in_memory_order (an elementwise map, whose elements may
/// come in any order: then in the output's memory order).
template <int N, class Inner>
void for_each_run(const std::array<const Tensor*, N>& ops, Inner&& inner,
                  bool in_memory_order = false) {
  LoopPlan<N> plan(ops, in_memory_order);
  if (plan.numel == 0) return;
  if (plan.numel < 2 * kParallelGrain) return plan.walk(0, plan.numel, inner);
  parallel_for(plan.numel, kParallelGrain,
               [&](int64_t begin, int64_t end) { plan.walk(begin, end, inner); });
}

}  // namespace xrt::cpu
