// cpp/include/xpuruntime/indexing.h: x[index] and x[index] = value (the Array API's
// indexing, extended to NumPy's semantics where the standard is silent), take,
// take_along_axis and nonzero.
//
// An index is a list of items translated from Python by the bindings. Applying it:
// - basic items (integers, slices, ellipsis, None) make a view that shares storage;
// - integer arrays gather into a new tensor (NumPy's vectorised indexing: the arrays
//   broadcast together; their dimensions replace the indexed axes when those are adjacent
//   in the index, else they come first; integers count as 0-d arrays for that rule);
// - a boolean array selects the True positions of the axes it covers (row-major).
#pragma once
#include <optional>
#include <vector>

#include "xpuruntime/errors.h"
#include "xpuruntime/scalar.h"
#include "xpuruntime/tensor.h"

namespace xrt {

/// One entry of an index expression.
struct IndexItem {
  enum class Kind : uint8_t { Integer, Slice, Ellipsis, NewAxis, Boolean, Array };
  Kind kind = Kind::Ellipsis;
  /// Integer: the index. Boolean: 0 or 1. Slice: start, stop, step as Python's
  /// PySlice_Unpack leaves them (a missing bound is already +-INT64_MAX/INT64_MIN).
  int64_t start = 0, stop = 0, step = 1;
  Tensor array;  ///< Array: an integer or bool tensor

  static IndexItem integer(int64_t i) { return {Kind::Integer, i}; }
  static IndexItem slice(int64_t start, int64_t stop, int64_t step) {
    return {Kind::Slice, start, stop, step};
  }
  static IndexItem ellipsis() { return {Kind::Ellipsis}; }
  static IndexItem new_axis() { return {Kind::NewAxis}; }
  static IndexItem boolean(bool b) { return {Kind::Boolean, b}; }
  static IndexItem of_array(Tensor t) { return {Kind::Array, 0, 0, 1, std::move(t)}; }
};

/// An index expression: the items of a Python index tuple (one item for a bare key).
/// The first few live inline, so the common x[0], x[1:3], x[..., None] allocate nothing.
class TensorIndex {
 public:
  static constexpr int kInline = 4;
  void push_back(IndexItem item) {
    if (size_ < kInline) inline_[size_] = std::move(item);
    else more_.push_back(std::move(item));
    ++size_;
  }
  int size() const { return size_; }
  const IndexItem& operator[](int i) const {
    return i < kInline ? inline_[i] : more_[static_cast<size_t>(i - kInline)];
  }

 private:
  IndexItem inline_[kInline];
  std::vector<IndexItem> more_;
  int size_ = 0;
};

/// An integer index outside its axis. Kernels throw it with the position of the index
/// array in their call (slot); the op that dispatched names the axis of the user's tensor.
struct IndexOutOfRange : IndexError {
  IndexOutOfRange(int64_t index, int64_t size, int slot);
  int64_t index, size;
  int slot;
};
/// The message of an out-of-range index, NumPy's wording.
std::string out_of_range_message(int64_t index, int axis, int64_t size);

/// x[index]: a view when the index is basic, else a new tensor.
Tensor getitem(const Tensor& x, const TensorIndex& index);
/// x[index] = value. value broadcasts to the selection and its dtype must promote to x's
/// (TypeError otherwise); x must be writable. value may share memory with x.
void setitem(Tensor& x, const TensorIndex& index, const Tensor& value);
/// x[index] = value for a Python scalar: the standard's scalar rule decides (TypeError for
/// a float into an integer tensor, ...); OverflowError when an integer does not fit.
void setitem(Tensor& x, const TensorIndex& index, const Scalar& value);

/// The standard's take: x.shape[:axis] + indices.shape + x.shape[axis+1:] (indices may
/// have any number of dimensions, as in NumPy). axis is required when x.ndim > 1.
Tensor take(const Tensor& x, const Tensor& indices, std::optional<int64_t> axis);
/// The standard's take_along_axis: x and indices broadcast except along axis.
Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis);
/// The standard's nonzero: one int64 tensor of coordinates per dimension, row-major order.
std::vector<Tensor> nonzero(const Tensor& x);

}  // namespace xrt
