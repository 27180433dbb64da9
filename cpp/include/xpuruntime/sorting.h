// cpp/include/xpuruntime/sorting.h: the Array API's sorting functions, set functions and
// searchsorted (op definitions in core/sorting_ops.cpp).
#pragma once
#include "xpuruntime/kernel.h"

namespace xrt {

/// The flags of the sorting family's kernels. The op definitions pass this type for the
/// ops "sort", "argsort", "searchsorted" and "isin"; attrs.axes holds the sort axis.
struct SortingAttrs : OpAttrs {
  bool descending = false;  ///< sort, argsort
  bool stable = true;       ///< sort, argsort (the CPU kernels are always stable)
  bool right = false;       ///< searchsorted: side="right"
  bool invert = false;      ///< isin
};

/// A sorted copy of x along axis; NaNs sort last (first when descending), -0.0 and +0.0
/// are equal. TypeError unless x has a real numeric dtype; IndexError for a bad axis.
Tensor sort(const Tensor& x, int64_t axis, bool descending, bool stable);
/// The int64 indices that sort x along axis, in the order sort() uses.
Tensor argsort(const Tensor& x, int64_t axis, bool descending, bool stable);

/// Insertion indices (int64, shape of x2) of x2's values into the ascending 1-D x1
/// (through sorter, when given). x1 and x2 are compared in their promoted dtype, with
/// sort()'s order (so NaN is largest).
Tensor searchsorted(const Tensor& x1, const Tensor& x2, bool right, const Tensor* sorter);

/// The unique values of flattened x, ascending (NaNs are all distinct, ±0 are one value
/// whose sign is that of its first occurrence); the index outputs are int64. Outputs that
/// were not asked for are left undefined.
struct UniqueResult {
  Tensor values, indices, inverse_indices, counts;
};
UniqueResult unique(const Tensor& x, bool with_indices, bool with_inverse, bool with_counts);

/// Whether each element of x1 equals some element of x2 (the negation when invert);
/// bool with x1's shape. The arrays are compared in their promoted dtype.
Tensor isin(const Tensor& x1, const Tensor& x2, bool invert);

}  // namespace xrt
