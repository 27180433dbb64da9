// cpp/src/core/indexing_internal.h: what indexing_ops.cpp (x[...]), index_plan.cpp (its
// plan) and indexing_functions.cpp (take, take_along_axis, nonzero) share: op ids,
// dispatch, and the plan of an index.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

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

inline constexpr int kMaxDims = 64;  // as empty() allows

// One array of the advanced part, on axis `axis` of V; x_axis names it in errors.
struct ArrayIndex {
  int axis;
  Tensor array;
  int x_axis;
};

// Note [Index plan] in code: V, its array indices, and where their result goes.
struct IndexPlan {
  Tensor view;
  std::vector<ArrayIndex> arrays;  // in index order; bool arrays still whole
  int mask = -1;                   // position in arrays of the one bool array (mask path)
  bool advanced = false;
  bool adjacent = true;      // the advanced items are adjacent in the index
  bool has_integer = false;  // an integer item sits among advanced ones
};

// The advanced part as the kernels take it: V with the indexed axes at [a, a + k) and the
// index arrays broadcast to one shape.
struct Gather {
  Tensor view;
  std::vector<Tensor> arrays;  // broadcast to the common shape
  std::vector<int> x_axes;     // the axis of x each array indexes (-1: a new axis)
  int axis = 0;                // a
  Dims result_shape;           // V.shape[:a] + B + V.shape[a + k:]
};

/// IndexError unless the mask's shape matches x's axes from first_axis on (a boolean axis
/// of size 0 matches any).
void check_mask_shape(const Tensor& mask, const Tensor& x, int first_axis);
/// Note [Index plan], first step: the basic items applied to x as a view, the arrays kept.
IndexPlan plan_index(const Tensor& x, const TensorIndex& index);
/// Note [Index plan], second step (the gather/scatter path): V and the arrays laid out
/// for the kernels, boolean arrays turned into their coordinates.
Gather plan_gather(const IndexPlan& plan);

}  // namespace xrt::indexing_detail
