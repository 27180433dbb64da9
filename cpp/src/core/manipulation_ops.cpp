// cpp/src/core/manipulation_ops.cpp: the manipulation functions that return views,
// computed from shapes and strides, and the helpers the copying ones share
// (manipulation_copy_ops.cpp).
#include "xpuruntime/manipulation.h"

#include <algorithm>
#include <string>

#include "core/manipulation_internal.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"

namespace xrt {
namespace manipulation_detail {

std::string dims_str(int ndim) {
  return std::to_string(ndim) + (ndim == 1 ? " dimension" : " dimensions");
}

// axis in [-ndim, ndim) as a non-negative axis; IndexError naming the function otherwise.
int axis_in(const char* op, int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of bounds for an array of " + dims_str(ndim));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

// Every axis normalised; ValueError when two name the same axis.
Dims unique_axes(const char* op, const Dims& axes, int ndim) {
  Dims out(axes.size());
  uint64_t seen[2] = {0, 0};  // ndim <= 65 (a result of expand_dims may have one more)
  for (int i = 0; i < axes.size(); ++i) {
    int a = axis_in(op, axes[i], ndim);
    if (seen[a / 64] >> (a % 64) & 1)
      throw ValueError(std::string(op) + ": repeated axis " + std::to_string(a) + " in " +
                       shape_str(axes));
    seen[a / 64] |= uint64_t{1} << (a % 64);
    out[i] = a;
  }
  return out;
}

// Element `index` of axis `axis`, as a view without that axis.
Tensor select(const Tensor& x, int axis, int64_t index) {
  Dims shape = x.shape(), strides = x.strides();
  int64_t offset = x.byte_offset() + index * strides[axis] * static_cast<int64_t>(x.itemsize());
  shape.erase(axis);
  strides.erase(axis);
  return x.as_strided(std::move(shape), std::move(strides), offset);
}

// Elements [start, start + length) of axis `axis`, as a view.
Tensor narrow(const Tensor& x, int axis, int64_t start, int64_t length) {
  Dims shape = x.shape();
  shape[axis] = length;
  int64_t offset = x.byte_offset() + start * x.strides()[axis] * static_cast<int64_t>(x.itemsize());
  return x.as_strided(std::move(shape), x.strides(), offset);
}

// The strides under which x's elements, in row-major order, have `shape`, when they
// exist (NumPy's _attempt_nocopy_reshape): each group of old axes that maps onto a group
// of new axes must be contiguous within itself. x has at least one element.
std::optional<Dims> reshape_strides(const Tensor& x, const Dims& shape) {
  if (x.is_contiguous()) return contiguous_strides(shape);
  Dims old_shape, old_strides;  // without the size-1 axes
  for (int d = 0; d < x.ndim(); ++d)
    if (x.shape()[d] != 1) {
      old_shape.push_back(x.shape()[d]);
      old_strides.push_back(x.strides()[d]);
    }
  int old_nd = old_shape.size(), new_nd = shape.size();
  Dims strides(new_nd);
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_nd && oi < old_nd) {
    int64_t new_size = shape[ni], old_size = old_shape[oi];
    while (new_size != old_size) {
      if (new_size < old_size) new_size *= shape[nj++];
      else old_size *= old_shape[oj++];
    }
    for (int k = oi; k < oj - 1; ++k)
      if (old_strides[k] != old_shape[k + 1] * old_strides[k + 1]) return std::nullopt;
    strides[nj - 1] = old_strides[oj - 1];
    for (int k = nj - 1; k > ni; --k) strides[k - 1] = strides[k] * shape[k];
    ni = nj++;
    oi = oj++;
  }
  int64_t last = ni >= 1 ? strides[ni - 1] : 1;
  for (int k = ni; k < new_nd; ++k) strides[k] = last;
  return strides;
}

// `shape` with its -1 resolved against x's size; ValueError when it does not fit.
Dims resolve_shape(const Tensor& x, const Dims& shape) {
  int infer = -1;
  int64_t known = 1;
  bool overflow = false, zero = false;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0)
        throw ValueError("reshape: only one dimension may be -1, got " + shape_str(shape));
      infer = i;
    } else if (shape[i] < 0) {
      throw ValueError("reshape: negative dimension " + std::to_string(shape[i]) + " in " +
                       shape_str(shape));
    } else {
      overflow |= __builtin_mul_overflow(known, shape[i], &known);
      zero |= shape[i] == 0;
    }
  }
  int64_t numel = x.numel();
  auto mismatch = [&] {
    return ValueError("reshape: cannot reshape an array of size " + std::to_string(numel) +
                      " into shape " + shape_str(shape));
  };
  if (overflow && !zero) throw mismatch();
  if (zero) known = 0;
  Dims out = shape;
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) throw mismatch();
    out[infer] = numel / known;
  } else if (known != numel) {
    throw mismatch();
  }
  if (out.size() > 64) throw ValueError("reshape: at most 64 dimensions are supported");
  return out;
}

Tensor copy_of(const Tensor& x) { return astype(x, x.dtype(), true); }

// dst[...] = src[...] through the dispatched copy op, for a dst this file just allocated
// (writable, on src's device) and a src of exactly dst's shape: copy_into without its
// checks and broadcast, which are a fair share of the cost of a small concat.
void copy_piece(Tensor& dst, const Tensor& src) {
  const Tensor* inputs[1] = {&src};
  KernelCall call{inputs, 1, &dst, 1, nullptr};
  dispatch(BuiltinOps::get().copy, call);
}

void check_devices(const char* op, const std::vector<Tensor>& arrays) {
  for (const Tensor& t : arrays) check_same_device(arrays[0], t, op);
}

DType common_dtype(const std::vector<Tensor>& arrays) {
  DType dtype = arrays[0].dtype();
  for (const Tensor& t : arrays)
    if (t.dtype() != dtype) dtype = result_type(dtype, t.dtype());
  return dtype;
}

void check_non_empty(const char* op, const std::vector<Tensor>& arrays) {
  if (arrays.empty()) throw ValueError(std::string(op) + ": need at least one array");
}

}  // namespace manipulation_detail

using namespace manipulation_detail;

// ---- Views ------------------------------------------------------------------------------

Dims broadcast_shapes(const std::vector<Dims>& shapes) {
  int n = 0;
  for (const Dims& s : shapes) n = std::max(n, s.size());
  Dims out(n, int64_t{1});
  for (const Dims& s : shapes)
    for (int i = 0; i < s.size(); ++i) {
      int64_t d = s[i];
      int64_t& o = out[n - s.size() + i];
      if (d < 0) throw ValueError("broadcast_shapes: negative dimension in " + shape_str(s));
      if (d == o || d == 1) continue;
      if (o != 1) {
        std::string all;
        for (const Dims& t : shapes) all += (all.empty() ? "" : ", ") + shape_str(t);
        throw ValueError("shapes " + all + " cannot be broadcast together (axis " +
                         std::to_string(i - s.size()) + ": " + std::to_string(o) + " vs " +
                         std::to_string(d) + ")");
      }
      o = d;
    }
  shape_numel(out);  // the shape of a tensor-to-be: its size must be countable
  return out;
}

std::vector<Tensor> broadcast_arrays(const std::vector<Tensor>& arrays) {
  std::vector<Dims> shapes;
  shapes.reserve(arrays.size());
  for (const Tensor& t : arrays) shapes.push_back(t.shape());
  Dims shape = broadcast_shapes(shapes);
  std::vector<Tensor> out;
  out.reserve(arrays.size());
  for (const Tensor& t : arrays) out.push_back(t.broadcast_to(shape));
  return out;
}

Tensor broadcast_to(const Tensor& x, const Dims& shape) {
  for (int64_t d : shape)
    if (d < 0) throw ValueError("broadcast_to: negative dimension in " + shape_str(shape));
  return x.broadcast_to(shape);
}

Tensor expand_dims(const Tensor& x, const Dims& axes) {
  int ndim = x.ndim() + axes.size();
  if (ndim > 64) throw ValueError("expand_dims: at most 64 dimensions are supported");
  Dims positions = unique_axes("expand_dims", axes, ndim);
  Dims shape(ndim, int64_t{-1}), strides(ndim);
  for (int64_t p : positions) shape[static_cast<int>(p)] = 1;
  for (int d = 0, j = 0; d < ndim; ++d)
    if (shape[d] == -1) {
      shape[d] = x.shape()[j];
      strides[d] = x.strides()[j++];
    }
  // A new axis takes the stride it would have in a contiguous layout of its neighbours.
  for (int d = ndim - 1; d >= 0; --d)
    if (std::find(positions.begin(), positions.end(), d) != positions.end())
      strides[d] = d + 1 < ndim ? strides[d + 1] * std::max<int64_t>(shape[d + 1], 1) : 1;
  return x.as_strided(std::move(shape), std::move(strides), x.byte_offset());
}

Tensor flip(const Tensor& x, const std::optional<Dims>& axes) {
  Dims flipped;
  if (axes) flipped = unique_axes("flip", *axes, x.ndim());
  else for (int d = 0; d < x.ndim(); ++d) flipped.push_back(d);
  Dims strides = x.strides();
  int64_t offset = x.byte_offset();
  for (int64_t a : flipped) {
    int d = static_cast<int>(a);
    if (x.shape()[d] == 0) continue;
    offset += (x.shape()[d] - 1) * strides[d] * static_cast<int64_t>(x.itemsize());
    strides[d] = -strides[d];
  }
  return x.as_strided(x.shape(), std::move(strides), offset);
}

Tensor moveaxis(const Tensor& x, const Dims& source, const Dims& destination) {
  if (source.size() != destination.size())
    throw ValueError("moveaxis: source " + shape_str(source) + " and destination " +
                     shape_str(destination) + " must have the same number of elements");
  Dims src = unique_axes("moveaxis", source, x.ndim());
  Dims dst = unique_axes("moveaxis", destination, x.ndim());
  Dims order(x.ndim(), int64_t{-1});
  for (int i = 0; i < src.size(); ++i) order[static_cast<int>(dst[i])] = src[i];
  // The remaining axes fill the free positions in their original order.
  for (int d = 0, next = 0; d < x.ndim(); ++d) {
    if (std::find(src.begin(), src.end(), d) != src.end()) continue;
    while (order[next] != -1) ++next;
    order[next] = d;
  }
  return x.permute(order);
}

Tensor permute_dims(const Tensor& x, const Dims& axes) {
  if (axes.size() != x.ndim())
    throw ValueError("permute_dims: axes " + shape_str(axes) + " must name each of the " +
                     dims_str(x.ndim()) + " of the array once");
  Dims order = unique_axes("permute_dims", axes, x.ndim());
  Dims shape(x.ndim()), strides(x.ndim());
  for (int i = 0; i < x.ndim(); ++i) {
    shape[i] = x.shape()[static_cast<int>(order[i])];
    strides[i] = x.strides()[static_cast<int>(order[i])];
  }
  return x.as_strided(std::move(shape), std::move(strides), x.byte_offset());
}

namespace {
/// The lowest and highest element offsets a view reaches; false when it has no elements.
bool element_span(const Dims& shape, const Dims& strides, int64_t& low, int64_t& high) {
  low = high = 0;
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) throw ValueError("restride: negative size " + std::to_string(shape[d]));
    if (shape[d] == 0) return false;
    (strides[d] < 0 ? low : high) += strides[d] * (shape[d] - 1);
  }
  return true;
}
}  // namespace

Tensor restride(const Tensor& x, const Dims& shape, const Dims& strides) {
  if (shape.size() != strides.size())
    throw ValueError("restride: shape " + shape_str(shape) + " and strides " +
                     shape_str(strides) + " differ in length");
  int64_t low, high, own_low, own_high;
  if (element_span(shape, strides, low, high) &&
      (!element_span(x.shape(), x.strides(), own_low, own_high) || low < own_low ||
       high > own_high))
    throw ValueError("restride: the view reaches outside the tensor's elements");
  return x.as_strided(shape, strides, x.byte_offset());
}

Tensor squeeze(const Tensor& x, const Dims& axes) {
  Dims removed = unique_axes("squeeze", axes, x.ndim());
  Dims shape, strides;
  for (int d = 0; d < x.ndim(); ++d) {
    bool remove = std::find(removed.begin(), removed.end(), d) != removed.end();
    if (remove && x.shape()[d] != 1)
      throw ValueError("squeeze: axis " + std::to_string(d) + " has size " +
                       std::to_string(x.shape()[d]) + "; only axes of size 1 can be removed");
    if (remove) continue;
    shape.push_back(x.shape()[d]);
    strides.push_back(x.strides()[d]);
  }
  return x.as_strided(std::move(shape), std::move(strides), x.byte_offset());
}

std::vector<Tensor> unstack(const Tensor& x, int64_t axis) {
  int a = axis_in("unstack", axis, x.ndim());
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(x.shape()[a]));
  for (int64_t i = 0; i < x.shape()[a]; ++i) out.push_back(select(x, a, i));
  return out;
}

Tensor reshape(const Tensor& x, const Dims& shape, std::optional<bool> copy) {
  Dims target = resolve_shape(x, shape);
  if (copy != true) {
    if (x.numel() == 0)
      return x.as_strided(target, contiguous_strides(target), x.byte_offset());
    if (std::optional<Dims> strides = reshape_strides(x, target))
      return x.as_strided(std::move(target), std::move(*strides), x.byte_offset());
    if (copy == false)
      throw ValueError("reshape: copy=False, but the strides of an array of shape " +
                       shape_str(x.shape()) + " allow no view of shape " + shape_str(target) +
                       "; a copy is needed");
  }
  Tensor out = copy_of(x);  // contiguous, so the new shape is a view of it
  return out.as_strided(target, contiguous_strides(target), 0);
}

}  // namespace xrt
