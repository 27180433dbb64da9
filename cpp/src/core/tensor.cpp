// cpp/src/core/tensor.cpp: shapes, strides and the view operations of Tensor.
#include "xpuruntime/tensor.h"

#include <string>

#include "xpuruntime/dtype.h"

#include "xpuruntime/errors.h"

namespace xrt {

namespace {

[[noreturn]] void throw_too_big(const Dims& shape, const std::string& what) {
  throw ValueError("array is too big: shape " + shape_str(shape) + what +
                   " (int64 counts at most 9223372036854775807)");
}

}  // namespace

int64_t shape_numel(const Dims& shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) overflow |= __builtin_mul_overflow(n, d, &n);
  // A zero anywhere makes the product 0 however large the rest is (NumPy agrees).
  if (overflow) {
    for (int64_t d : shape)
      if (d == 0) return 0;
    throw_too_big(shape, " has more elements than int64 can count");
  }
  return n;
}

int64_t shape_nbytes(const Dims& shape, DType dtype) {
  int64_t n = shape_numel(shape), bytes;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(xrt::itemsize(dtype)), &bytes))
    throw_too_big(shape, " of " + std::string(dtype_info(dtype).name) +
                             " needs more bytes than int64 can count");
  return bytes;
}

int64_t checked_size_product(int64_t a, int64_t b, const char* what) {
  int64_t n;
  if (__builtin_mul_overflow(a, b, &n))
    throw ValueError(std::string("array is too big: ") + what + " (" + std::to_string(a) +
                     " * " + std::to_string(b) + ") does not fit in int64");
  return n;
}

Dims contiguous_strides(const Dims& shape) {
  Dims strides(shape.size());
  int64_t step = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    strides[i] = step;
    step *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

std::string shape_str(const Dims& shape) {
  std::string s = "(";
  for (int i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  int n = a.size() > b.size() ? a.size() : b.size();
  Dims out(n);
  for (int i = 0; i < n; ++i) {
    int ia = a.size() - n + i, ib = b.size() - n + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw ValueError("shapes " + shape_str(a) + " and " + shape_str(b) +
                       " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  shape_numel(out);
  return out;
}

int normalize_axis(int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError("axis " + std::to_string(axis) + " is out of bounds for an array of " +
                     std::to_string(ndim) + " dimension" + (ndim == 1 ? "" : "s"));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

// Note: one pass makes the strides and checks the sizes, where the checks, the byte count
// and contiguous_strides each walked the shape (a tiny op's host time follows its code
// lines: Note [Where the host time of a tiny op goes]).
Tensor Tensor::empty(const Dims& shape, DType dtype, Device device) {
  Tensor t;
  t.shape_ = shape;
  t.strides_ = shape;  // the room, overwritten below
  t.dtype_ = dtype;
  int64_t step = 1, numel = 1;
  bool overflow = false;
  for (int i = shape.size() - 1; i >= 0; --i) {
    int64_t d = shape[i];
    if (d < 0) throw ValueError("negative dimensions are not allowed: " + shape_str(shape));
    t.strides_[i] = step;
    // Past a zero-size axis the strides are never used: wrap rather than overflow.
    step = static_cast<int64_t>(static_cast<uint64_t>(step) * static_cast<uint64_t>(d > 0 ? d : 1));
    overflow |= __builtin_mul_overflow(numel, d, &numel);
  }
  int64_t nbytes = 0;
  if (overflow || __builtin_mul_overflow(numel, static_cast<int64_t>(xrt::itemsize(dtype)),
                                         &nbytes))
    nbytes = shape_nbytes(shape, dtype);  // throws, or 0 for a zero-size overflow
  t.storage_ = Storage::allocate(static_cast<size_t>(nbytes), device);
  return t;
}

bool Tensor::is_broadcast() const {
  bool repeats = false;
  for (int i = 0; i < ndim(); ++i) {
    if (shape_[i] == 0) return false;  // no element at all, so none is written twice
    repeats |= strides_[i] == 0 && shape_[i] > 1;
  }
  return repeats;
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (shape_[i] == 0) return true;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

Tensor Tensor::permute(const Dims& axes) const {
  if (axes.size() != ndim()) throw ValueError("permute needs one axis per dimension");
  Dims shape(ndim()), strides(ndim());
  uint64_t seen = 0;
  for (int i = 0; i < ndim(); ++i) {
    int axis = normalize_axis(axes[i], ndim());
    if (seen & (1ull << axis)) throw ValueError("repeated axis in permutation");
    seen |= 1ull << axis;
    shape[i] = shape_[axis];
    strides[i] = strides_[axis];
  }
  return as_strided(std::move(shape), std::move(strides), byte_offset_);
}

Tensor Tensor::matrix_transpose() const {
  if (ndim() < 2)
    throw ValueError("matrix transpose needs at least 2 dimensions, got " +
                     std::to_string(ndim()));
  Dims shape = shape_, strides = strides_;
  std::swap(shape[ndim() - 1], shape[ndim() - 2]);
  std::swap(strides[ndim() - 1], strides[ndim() - 2]);
  return as_strided(std::move(shape), std::move(strides), byte_offset_);
}

Tensor Tensor::broadcast_to(const Dims& shape) const {
  if (shape == shape_) return *this;
  int n = shape.size();
  if (n < ndim())
    throw ValueError("cannot broadcast shape " + shape_str(shape_) + " to " + shape_str(shape));
  Dims strides(n);
  for (int i = 0; i < n; ++i) {
    int j = ndim() - n + i;
    int64_t d = j >= 0 ? shape_[j] : 1;
    if (d == shape[i]) strides[i] = j >= 0 ? strides_[j] : 0;
    else if (d == 1) strides[i] = 0;
    else throw ValueError("cannot broadcast shape " + shape_str(shape_) + " to " +
                          shape_str(shape));
  }
  shape_nbytes(shape, dtype_);  // a view too must have a size that int64 counts
  return as_strided(shape, std::move(strides), byte_offset_);
}

Tensor Tensor::unsqueeze(int axis) const {
  Dims shape = shape_, strides = strides_;
  shape.insert(axis, 1);
  strides.insert(axis, 0);
  return as_strided(std::move(shape), std::move(strides), byte_offset_);
}

}  // namespace xrt
