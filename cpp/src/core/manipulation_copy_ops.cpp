// cpp/src/core/manipulation_copy_ops.cpp: the manipulation functions that copy (concat,
// stack, tile, repeat, roll), as a few dispatched strided copies or the repeat op.
#include <algorithm>
#include <string>

#include "core/manipulation_internal.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/profiler.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/manipulation.h"
#include "xpuruntime/ops.h"

namespace xrt {

using namespace manipulation_detail;

// ---- Copies -----------------------------------------------------------------------------

// Note: copy_piece(dst, src) is one dispatched strided copy. The copy kernel merges axes
// that are contiguous in both operands, so a contiguous input lands as one memcpy (split
// into parallel chunks when it is large) whatever its rank.

Tensor concat(const std::vector<Tensor>& arrays, std::optional<int64_t> axis) {
  check_non_empty("concat", arrays);
  check_devices("concat", arrays);
  DType dtype = common_dtype(arrays);
  Device device = arrays[0].device();
  if (!axis) {
    int64_t total = 0;
    for (const Tensor& t : arrays)  // broadcast views may be huge: the sum is checked
      if (__builtin_add_overflow(total, t.numel(), &total))
        throw ValueError("concat: array is too big: the sizes add up past int64");
    Tensor out = empty(Dims{total}, dtype, device);
    int64_t offset = 0;
    for (const Tensor& t : arrays) {
      if (t.numel() == 0) continue;
      Tensor dst = out.as_strided(t.shape(), contiguous_strides(t.shape()),
                                  offset * static_cast<int64_t>(out.itemsize()));
      copy_piece(dst, t);
      offset += t.numel();
    }
    return out;
  }
  int ndim = arrays[0].ndim();
  if (ndim == 0)
    throw ValueError("concat: zero-dimensional arrays cannot be joined along an axis; use "
                     "axis=None or stack");
  int a = axis_in("concat", *axis, ndim);
  Dims shape = arrays[0].shape();
  shape[a] = 0;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const Tensor& t = arrays[i];
    bool fits = t.ndim() == ndim;
    for (int d = 0; d < ndim && fits; ++d) fits = d == a || t.shape()[d] == shape[d];
    if (!fits)
      throw ValueError("concat: array " + std::to_string(i) + " has shape " +
                       shape_str(t.shape()) + ", which differs from " +
                       shape_str(arrays[0].shape()) + " outside axis " + std::to_string(a));
    if (__builtin_add_overflow(shape[a], t.shape()[a], &shape[a]))
      throw ValueError("concat: array is too big: the extents along axis " +
                       std::to_string(a) + " add up past int64");
  }
  Tensor out = empty(shape, dtype, device);
  int64_t position = 0;
  for (const Tensor& t : arrays) {
    int64_t length = t.shape()[a];
    if (t.numel() == 0) {
      position += length;
      continue;
    }
    Tensor dst = narrow(out, a, position, length);
    copy_piece(dst, t);
    position += length;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& arrays, int64_t axis) {
  check_non_empty("stack", arrays);
  check_devices("stack", arrays);
  const Dims& shape = arrays[0].shape();
  for (size_t i = 1; i < arrays.size(); ++i)
    if (!(arrays[i].shape() == shape))
      throw ValueError("stack: all arrays must have the same shape, but array 0 has shape " +
                       shape_str(shape) + " and array " + std::to_string(i) + " has shape " +
                       shape_str(arrays[i].shape()));
  int a = axis_in("stack", axis, arrays[0].ndim() + 1);
  Dims out_shape = shape;
  out_shape.insert(a, static_cast<int64_t>(arrays.size()));
  Tensor out = empty(out_shape, common_dtype(arrays), arrays[0].device());
  if (out.numel() == 0) return out;
  for (size_t i = 0; i < arrays.size(); ++i) {
    Tensor dst = select(out, a, static_cast<int64_t>(i));
    copy_piece(dst, arrays[i]);
  }
  return out;
}

Tensor tile(const Tensor& x, const Dims& repetitions) {
  for (int64_t r : repetitions)
    if (r < 0)
      throw ValueError("tile: repetitions must be non-negative, got " + shape_str(repetitions));
  int n = std::max(x.ndim(), repetitions.size());
  Dims shape(n, int64_t{1}), strides(n, int64_t{0}), reps(n, int64_t{1}), out_shape(n);
  for (int i = 0; i < x.ndim(); ++i) {
    shape[n - x.ndim() + i] = x.shape()[i];
    strides[n - x.ndim() + i] = x.strides()[i];
  }
  for (int i = 0; i < repetitions.size(); ++i) reps[n - repetitions.size() + i] = repetitions[i];
  for (int i = 0; i < n; ++i)
    out_shape[i] = checked_size_product(shape[i], reps[i], "tile: shape times repetitions");
  Tensor out = empty(out_shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  // Each tiled axis i of the output splits into (reps[i], shape[i]): a view of the output
  // in which x, broadcast along the reps axes, is copied once.
  Dims out_strides = contiguous_strides(out_shape);
  Dims view_shape, dst_strides, src_strides;
  for (int i = 0; i < n; ++i) {
    if (reps[i] != 1) {
      view_shape.push_back(reps[i]);
      dst_strides.push_back(shape[i] * out_strides[i]);
      src_strides.push_back(0);
    }
    view_shape.push_back(shape[i]);
    dst_strides.push_back(out_strides[i]);
    src_strides.push_back(strides[i]);
  }
  Tensor dst = out.as_strided(view_shape, std::move(dst_strides), 0);
  copy_piece(dst, x.as_strided(view_shape, std::move(src_strides), x.byte_offset()));
  return out;
}

namespace {

// Runs the repeat op: counts is an int64 array with one count per element of the axis,
// or undefined for `repeats` everywhere.
Tensor run_repeat(const Tensor& x, int axis, const Tensor& counts, int64_t repeats,
                  int64_t total) {
  static const OpId id = KernelRegistry::global().op_id("repeat");
  Tensor source = contiguous(x);
  Dims out_shape = x.shape();
  out_shape[axis] = total;
  Tensor out = empty(out_shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  OpAttrs attrs;
  attrs.axes = Dims{axis};
  attrs.value = Scalar::from_int(repeats);
  const Tensor* inputs[2] = {&source, &counts};
  KernelCall call{inputs, counts.defined() ? 2 : 1, &out, 1, &attrs};
  dispatch(id, call);
  return out;
}

}  // namespace

Tensor repeat(const Tensor& x, int64_t repeats, std::optional<int64_t> axis) {
  if (repeats < 0)
    throw ValueError("repeat: repeats must be non-negative, got " + std::to_string(repeats));
  int a = axis ? axis_in("repeat", *axis, x.ndim()) : 0;
  Tensor source = axis ? x : reshape(x, Dims{x.numel()}, std::nullopt);
  int64_t total;
  if (__builtin_mul_overflow(source.shape()[a], repeats, &total))
    throw ValueError("repeat: the result would have more elements than an array can hold");
  return run_repeat(source, a, Tensor(), repeats, total);
}

Tensor repeat(const Tensor& x, const Tensor& repeats, std::optional<int64_t> axis) {
  if (!is_integer(repeats.dtype()))
    throw TypeError("repeat: repeats must have an integer dtype, got " +
                    std::string(dtype_info(repeats.dtype()).name));
  if (repeats.ndim() > 1)
    throw ValueError("repeat: repeats must be an int or a 1-D array, got shape " +
                     shape_str(repeats.shape()));
  if (repeats.device() != x.device())
    throw ValueError("repeat: x and repeats are on different devices (" + x.device().str() +
                     " and " + repeats.device().str() + ")");
  int a = axis ? axis_in("repeat", *axis, x.ndim()) : 0;
  int64_t size = axis ? x.shape()[a] : x.numel();
  if (repeats.numel() == 1) {
    profiler::CauseScope cause(profiler::Cause::DataDependent);
    return repeat(x, item(repeats).to<int64_t>(), axis);
  }
  if (repeats.numel() != size)
    throw ValueError("repeat: repeats has shape " + shape_str(repeats.shape()) + ", but the " +
                     (axis ? "axis has " : "flattened array has ") + std::to_string(size) +
                     " elements; it must have shape (1,) or (" + std::to_string(size) + ",)");
  // The counts are needed on the host too: they decide the output's shape.
  Tensor counts = contiguous(astype(repeats, DType::Int64, false));
  Tensor host_counts = to_device(counts, kCPU);
  const int64_t* c = reinterpret_cast<const int64_t*>(host_counts.data());
  int64_t total = 0;
  for (int64_t i = 0; i < size; ++i) {
    if (c[i] < 0 && kind(repeats.dtype()) == DTypeKind::SignedInt)
      throw ValueError("repeat: repeats must be non-negative, got " + std::to_string(c[i]));
    if (c[i] < 0 || __builtin_add_overflow(total, c[i], &total))
      throw ValueError("repeat: the repeats add up to more elements than an array can hold");
  }
  Tensor source = axis ? x : reshape(x, Dims{size}, std::nullopt);
  return run_repeat(source, a, counts, 0, total);
}

Tensor roll(const Tensor& x, const Dims& shifts, const std::optional<Dims>& axes) {
  if (!axes) {
    if (shifts.size() != 1)
      throw ValueError("roll: a tuple of shifts needs a tuple of axes of the same length");
    Tensor flat = reshape(x, Dims{x.numel()}, std::nullopt);
    Tensor rolled = roll(flat, shifts, Dims{0});
    return rolled.as_strided(x.shape(), contiguous_strides(x.shape()), 0);
  }
  if (shifts.size() != axes->size() && shifts.size() != 1)
    throw ValueError("roll: shift " + shape_str(shifts) + " and axis " + shape_str(*axes) +
                     " must have the same length");
  // Shifts along one axis add up (as in NumPy); each is taken modulo the axis length.
  Dims total(x.ndim(), int64_t{0});
  for (int i = 0; i < axes->size(); ++i) {
    int a = axis_in("roll", (*axes)[i], x.ndim());
    int64_t n = x.shape()[a];
    if (n == 0) continue;
    int64_t s = shifts[shifts.size() == 1 ? 0 : i] % n;
    total[a] = ((total[a] + s) % n + n) % n;
  }
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  Dims rolled;
  for (int d = 0; d < x.ndim(); ++d)
    if (total[d] != 0) rolled.push_back(d);
  // Along a rolled axis the output is two blocks: [s, n) from x[0, n - s) and [0, s) from
  // x[n - s, n); k rolled axes make 2^k block copies.
  for (uint64_t mask = 0; mask < (uint64_t{1} << rolled.size()); ++mask) {
    Tensor dst = out, src = x;
    for (int j = 0; j < rolled.size(); ++j) {
      int d = static_cast<int>(rolled[j]);
      int64_t n = x.shape()[d], s = total[d];
      if (mask >> j & 1) {
        dst = narrow(dst, d, 0, s);
        src = narrow(src, d, n - s, s);
      } else {
        dst = narrow(dst, d, s, n - s);
        src = narrow(src, d, 0, n - s);
      }
    }
    copy_piece(dst, src);
  }
  return out;
}

}  // namespace xrt
