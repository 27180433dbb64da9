// cpp/src/core/indexing_internal.h: what indexing_ops.cpp (x[...]) and
// indexing_functions.cpp (take, take_along_axis, nonzero) share: op ids and dispatch.
#pragma once
#include <initializer_list>
#include <string>

#include "xpuruntime/indexing.h"
#include "xpuruntime/ops.h"

namespace xrt::indexing_detail {

/// Ids of the indexing ops, interned once.
struct Ops {
  OpId gather, scatter, masked_gather, masked_scatter, nonzero_count, nonzero, take_along_axis;
  static const Ops& get();
};

std::string name_of(DType d);

/// Dispatches op with attrs.axes = {axis}.
void run(OpId op, std::initializer_list<const Tensor*> inputs, Tensor* outputs, int num_outputs,
         int axis);
/// Runs a gather or scatter (inputs: the tensor or values, then the index arrays) and names
/// the user's axis (x_axes[slot], -1: none) when an index is out of range.
void run_indexed(OpId op, const Tensor* const* inputs, int num_inputs, Tensor& out, int axis,
                 const int* x_axes);
/// The number of nonzero elements of x (any dtype).
int64_t count_nonzero(const Tensor& x);
/// x[..., indices, ...] with indices on axis: take, and the common x[indices].
Tensor gather_axis(const Tensor& x, const Tensor& indices, int axis);

}  // namespace xrt::indexing_detail
