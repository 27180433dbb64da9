// cpp/include/xpuruntime/tensor.h: Tensor = shared Storage + a view (shape, strides, offset).
#pragma once
#include <memory>

#include "xpuruntime/dtype.h"
#include "xpuruntime/small_vector.h"
#include "xpuruntime/storage.h"

namespace xrt {

// Note [Checked sizes]: every element count and byte size a tensor can have is formed by the
// helpers below, which refuse a product that leaves int64 (ValueError "array is too big",
// naming the shape, as NumPy says it). A tensor that exists therefore has numel() and
// numel() * itemsize() within int64, and the kernels and launch grids that multiply extents
// of an existing tensor cannot overflow.

/// Number of elements of a shape (1 for 0-d); ValueError naming the shape past int64.
int64_t shape_numel(const Dims& shape);
/// Bytes of a contiguous tensor of this shape and dtype; ValueError past int64 (at most
/// PTRDIFF_MAX, so pointer arithmetic over it is defined).
int64_t shape_nbytes(const Dims& shape, DType dtype);
/// a * b for two non-negative sizes; ValueError mentioning `what` when it leaves int64.
int64_t checked_size_product(int64_t a, int64_t b, const char* what);
/// Row-major strides, in elements.
Dims contiguous_strides(const Dims& shape);
/// The standard's broadcasting rule; ValueError naming both shapes when they do not fit.
Dims broadcast_shapes(const Dims& a, const Dims& b);
/// Normalises a possibly negative axis against ndim; IndexError when out of range.
int normalize_axis(int64_t axis, int ndim);
/// "(2, 3)" the way Python prints a shape tuple.
std::string shape_str(const Dims& shape);

/// A view of a Storage. Strides are in elements (they may be zero or negative); the offset
/// is in bytes, since a DLPack producer may hand over any byte offset.
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<Storage> storage, Dims shape, Dims strides, int64_t byte_offset,
         DType dtype)
      : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)),
        byte_offset_(byte_offset), dtype_(dtype) {}

  /// A tensor over the whole of storage (offset 0), its shape and strides copied.
  Tensor(std::shared_ptr<Storage> storage, const Dims& shape, const Dims& strides, DType dtype)
      : storage_(std::move(storage)), shape_(shape), strides_(strides), dtype_(dtype) {}

  /// A new contiguous tensor with uninitialised contents.
  static Tensor empty(const Dims& shape, DType dtype, Device device);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const Dims& shape() const { return shape_; }
  const Dims& strides() const { return strides_; }
  int ndim() const { return shape_.size(); }
  int64_t numel() const { return shape_numel(shape_); }
  int64_t byte_offset() const { return byte_offset_; }
  size_t itemsize() const { return xrt::itemsize(dtype_); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  /// Writes are refused when the storage is read-only or the view is a broadcast (a zero
  /// stride on an axis longer than 1: a write would land on one element several times).
  bool readonly() const { return storage_->readonly() || is_broadcast(); }
  /// A zero stride on an axis of length > 1, with at least one element (NumPy makes such
  /// views read-only).
  bool is_broadcast() const;
  /// Address of element [0, ..., 0].
  char* data() const { return static_cast<char*>(storage_->data()) + byte_offset_; }

  /// Row-major contiguous (size-1 dimensions may have any stride).
  bool is_contiguous() const;

  // Views: share storage, never copy.
  Tensor permute(const Dims& axes) const;
  /// Swaps the last two axes (Array API mT); ValueError for ndim < 2.
  Tensor matrix_transpose() const;
  /// Broadcasts to shape (the standard's rule); ValueError when it does not fit.
  Tensor broadcast_to(const Dims& shape) const;
  /// Same storage with another shape and strides.
  Tensor as_strided(Dims shape, Dims strides, int64_t byte_offset) const {
    return Tensor(storage_, std::move(shape), std::move(strides), byte_offset, dtype_);
  }
  /// Inserts a size-1 axis at position axis (0..ndim).
  Tensor unsqueeze(int axis) const;

 private:
  std::shared_ptr<Storage> storage_;
  Dims shape_;
  Dims strides_;
  int64_t byte_offset_ = 0;
  DType dtype_ = DType::Float32;
};

}  // namespace xrt
