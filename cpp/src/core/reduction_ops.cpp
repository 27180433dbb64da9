// cpp/src/core/reduction_ops.cpp: the definitions of the reductions, scans and diff: axes,
// result dtypes and shapes, the standard's errors. Kernels only compute
// (cpu/reduce_kernels.cpp, cpu/scan_kernels.cpp).
//
// Result dtypes (the standard's rules; the default integer is int64):
// - sum, prod, cumulative_*: x's dtype, except that bool and signed integers give int64 and
//   unsigned integers uint64; dtype= overrides (complex x needs a complex dtype).
// - mean: x's floating dtype; integers give float64 (the default real floating dtype).
// - var, std: as mean, but a complex x gives its real dtype.
// - max, min: x's dtype (not complex). all, any: bool. argmax, argmin, count_nonzero: int64.
#include "xpuruntime/reductions.h"

#include <string>

#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"

namespace xrt {
namespace {

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

OpId op_id(const char* name) { return KernelRegistry::global().op_id(name); }

void run(OpId op, const Tensor& x, Tensor& out, const OpAttrs& attrs) {
  const Tensor* inputs[] = {&x};
  dispatch(op, KernelCall{inputs, 1, &out, 1, &attrs});
}

int check_axis(int64_t axis, int ndim, const char* op) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of bounds for an array of " + std::to_string(ndim) +
                     " dimension" + (ndim == 1 ? "" : "s"));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

/// A reduction of x over some axes: the axes (sorted, non-negative), the result's shape
/// and the number of elements behind each result.
struct Plan {
  OpAttrs attrs;
  Dims shape;
  int64_t count = 1;
};

Plan plan(const Tensor& x, const OptionalAxes& axes, bool keepdims, const char* op) {
  Plan p;
  int ndim = x.ndim();
  uint64_t reduced = 0;
  if (!axes) {
    reduced = ndim == 64 ? ~0ull : (1ull << ndim) - 1;
  } else {
    for (int64_t a : *axes) {
      int axis = check_axis(a, ndim, op);
      if (reduced & (1ull << axis))
        throw ValueError(std::string(op) + ": axis " + std::to_string(a) +
                         " repeats an axis (" + std::to_string(axis) + ") given before");
      reduced |= 1ull << axis;
    }
  }
  for (int d = 0; d < ndim; ++d) {
    if (reduced & (1ull << d)) {
      p.attrs.axes.push_back(d);
      p.count *= x.shape()[d];
      if (keepdims) p.shape.push_back(1);
    } else {
      p.shape.push_back(x.shape()[d]);
    }
  }
  p.attrs.keepdims = keepdims;
  return p;
}

Tensor reduce(OpId op, const Tensor& x, const Plan& p, DType dtype) {
  Tensor out = empty(p.shape, dtype, x.device());
  run(op, x, out, p.attrs);
  return out;
}

DType accumulation_dtype(DType x, std::optional<DType> dtype, const char* op) {
  if (dtype) {
    if (*dtype == DType::Bool)
      throw TypeError(std::string(op) + ": dtype must be numeric, not bool");
    if (is_complex(x) && !is_complex(*dtype))
      throw TypeError(std::string(op) + ": cannot accumulate " + name_of(x) + " in " +
                      name_of(*dtype) + " (it would drop the imaginary parts)");
    return *dtype;
  }
  switch (kind(x)) {
    case DTypeKind::Bool:
    case DTypeKind::SignedInt: return kDefaultInt;
    case DTypeKind::UnsignedInt: return DType::UInt64;
    default: return x;
  }
}

// mean, var, std: the floating dtype of the result (real for var/std of complex).
DType statistic_dtype(DType x, bool real, const char* op) {
  if (x == DType::Bool)
    throw TypeError(std::string(op) + " is not defined for bool (it needs a numeric dtype)");
  if (is_integer(x)) return kDefaultFloat;
  return real ? real_dtype(x) : x;
}

void check_ordered(DType x, const char* op) {
  if (is_complex(x))
    throw TypeError(std::string(op) + " is not defined for " + name_of(x) +
                    " (complex numbers have no order)");
}

void check_not_empty(const Plan& p, const Tensor& x, const char* op) {
  if (p.count == 0)
    throw ValueError(std::string(op) + ": the reduction has no elements (x has shape " +
                     shape_str(x.shape()) + "), so its result is undefined");
}

Tensor extremum(const char* op, OpId id, const Tensor& x, const OptionalAxes& axes,
                bool keepdims) {
  check_ordered(x.dtype(), op);
  Plan p = plan(x, axes, keepdims, op);
  check_not_empty(p, x, op);
  return reduce(id, x, p, x.dtype());
}

Tensor arg_extremum(const char* op, OpId id, const Tensor& x, std::optional<int64_t> axis,
                    bool keepdims) {
  check_ordered(x.dtype(), op);
  OptionalAxes axes;
  if (axis) axes = Dims{*axis};
  Plan p = plan(x, axes, keepdims, op);
  check_not_empty(p, x, op);
  return reduce(id, x, p, kDefaultIndex);
}

Tensor moment(const char* op, OpId id, const Tensor& x, const OptionalAxes& axes,
              double correction, bool keepdims) {
  DType dtype = statistic_dtype(x.dtype(), true, op);
  Plan p = plan(x, axes, keepdims, op);
  p.attrs.value = Scalar::from_float(correction);
  return reduce(id, x, p, dtype);
}

Tensor cumulative(const char* op, OpId id, const Tensor& x, std::optional<int64_t> axis,
                  std::optional<DType> dtype, bool include_initial, int identity) {
  DType out_dtype = accumulation_dtype(x.dtype(), dtype, op);
  // Note: the standard leaves 0-d input unspecified; like NumPy, it is one element.
  Tensor input = x.ndim() == 0 ? x.as_strided(Dims{1}, Dims{1}, x.byte_offset()) : x;
  if (!axis && input.ndim() > 1)
    throw ValueError(std::string(op) + ": axis is required for an array of more than one "
                     "dimension (x has shape " + shape_str(x.shape()) + ")");
  int a = check_axis(axis.value_or(0), input.ndim(), op);
  Dims shape = input.shape();
  if (include_initial) shape[a] += 1;
  Tensor out = empty(shape, out_dtype, x.device());
  Tensor scanned = out;
  if (include_initial) {
    Dims first_shape = shape;
    first_shape[a] = 1;
    OpAttrs fill;
    fill.value = Scalar::from_int(identity);
    Tensor first = out.as_strided(first_shape, out.strides(), out.byte_offset());
    dispatch(BuiltinOps::get().fill, KernelCall{nullptr, 0, &first, 1, &fill});
    scanned = out.as_strided(input.shape(), out.strides(),
                             out.byte_offset() + out.strides()[a] * int64_t(out.itemsize()));
  }
  OpAttrs attrs;
  attrs.axes = Dims{a};
  run(id, input, scanned, attrs);
  return out;
}

// x[start:stop] along axis (a view).
Tensor slice(const Tensor& x, int axis, int64_t start, int64_t stop) {
  Dims shape = x.shape();
  shape[axis] = stop - start;
  return x.as_strided(shape, x.strides(),
                      x.byte_offset() + start * x.strides()[axis] * int64_t(x.itemsize()));
}

// prepend, x and append joined along axis, in dtype.
Tensor join(const Tensor& x, int axis, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append, DType dtype) {
  auto part = [&](const std::optional<Tensor>& t, const char* what) -> std::optional<Tensor> {
    if (!t) return std::nullopt;
    if (t->device() != x.device())
      throw ValueError(std::string("diff: ") + what + " is on " + t->device().str() +
                       ", x on " + x.device().str());
    if (t->ndim() == 0) {  // a scalar: one slice of x's shape
      Dims shape = x.shape();
      shape[axis] = 1;
      return t->broadcast_to(shape);
    }
    bool fits = t->ndim() == x.ndim();
    for (int d = 0; fits && d < x.ndim(); ++d) fits = d == axis || t->shape()[d] == x.shape()[d];
    if (!fits)
      throw ValueError(std::string("diff: ") + what + " has shape " + shape_str(t->shape()) +
                       ", which does not match x's shape " + shape_str(x.shape()) +
                       " off axis " + std::to_string(axis));
    return *t;
  };
  std::optional<Tensor> parts[] = {part(prepend, "prepend"), x, part(append, "append")};
  Dims shape = x.shape();
  shape[axis] = 0;
  for (const auto& t : parts)
    if (t) shape[axis] += t->shape()[axis];
  Tensor joined = empty(shape, dtype, x.device());
  int64_t at = 0;
  for (const auto& t : parts) {
    if (!t) continue;
    Tensor dst = slice(joined, axis, at, at + t->shape()[axis]);
    copy_into(dst, *t);
    at += t->shape()[axis];
  }
  return joined;
}

}  // namespace

Tensor sum(const Tensor& x, const OptionalAxes& axes, std::optional<DType> dtype,
           bool keepdims) {
  static const OpId id = op_id("sum");
  DType out = accumulation_dtype(x.dtype(), dtype, "sum");
  return reduce(id, x, plan(x, axes, keepdims, "sum"), out);
}

Tensor prod(const Tensor& x, const OptionalAxes& axes, std::optional<DType> dtype,
            bool keepdims) {
  static const OpId id = op_id("prod");
  DType out = accumulation_dtype(x.dtype(), dtype, "prod");
  return reduce(id, x, plan(x, axes, keepdims, "prod"), out);
}

Tensor max(const Tensor& x, const OptionalAxes& axes, bool keepdims) {
  static const OpId id = op_id("max");
  return extremum("max", id, x, axes, keepdims);
}

Tensor min(const Tensor& x, const OptionalAxes& axes, bool keepdims) {
  static const OpId id = op_id("min");
  return extremum("min", id, x, axes, keepdims);
}

Tensor mean(const Tensor& x, const OptionalAxes& axes, bool keepdims) {
  static const OpId id = op_id("mean");
  DType out = statistic_dtype(x.dtype(), false, "mean");
  return reduce(id, x, plan(x, axes, keepdims, "mean"), out);
}

Tensor var(const Tensor& x, const OptionalAxes& axes, double correction, bool keepdims) {
  static const OpId id = op_id("var");
  return moment("var", id, x, axes, correction, keepdims);
}

Tensor std_dev(const Tensor& x, const OptionalAxes& axes, double correction, bool keepdims) {
  static const OpId id = op_id("std");
  return moment("std", id, x, axes, correction, keepdims);
}

Tensor cumulative_sum(const Tensor& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                      bool include_initial) {
  static const OpId id = op_id("cumulative_sum");
  return cumulative("cumulative_sum", id, x, axis, dtype, include_initial, 0);
}

Tensor cumulative_prod(const Tensor& x, std::optional<int64_t> axis,
                       std::optional<DType> dtype, bool include_initial) {
  static const OpId id = op_id("cumulative_prod");
  return cumulative("cumulative_prod", id, x, axis, dtype, include_initial, 1);
}

Tensor all(const Tensor& x, const OptionalAxes& axes, bool keepdims) {
  static const OpId id = op_id("all");
  return reduce(id, x, plan(x, axes, keepdims, "all"), DType::Bool);
}

Tensor any(const Tensor& x, const OptionalAxes& axes, bool keepdims) {
  static const OpId id = op_id("any");
  return reduce(id, x, plan(x, axes, keepdims, "any"), DType::Bool);
}

Tensor diff(const Tensor& x, int64_t axis, int64_t n, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append) {
  static const OpId id = op_id("diff");
  if (x.ndim() == 0) throw ValueError("diff: x must have at least one dimension");
  int a = check_axis(axis, x.ndim(), "diff");
  if (n < 0) throw ValueError("diff: n must be non-negative, got " + std::to_string(n));
  DType dtype = x.dtype();
  if (prepend) dtype = result_type(dtype, prepend->dtype());
  if (append) dtype = result_type(dtype, append->dtype());
  Tensor current = prepend || append ? join(x, a, prepend, append, dtype) : x;
  for (int64_t i = 0; i < n; ++i) {
    int64_t length = current.shape()[a];
    Dims shape = current.shape();
    shape[a] = length > 0 ? length - 1 : 0;
    Tensor next = empty(shape, dtype, x.device());
    if (shape[a] > 0) {
      Tensor later = slice(current, a, 1, length), earlier = slice(current, a, 0, length - 1);
      const Tensor* inputs[] = {&later, &earlier};
      dispatch(id, KernelCall{inputs, 2, &next, 1, nullptr});
    }
    current = next;
  }
  return current;
}

Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  static const OpId id = op_id("argmax");
  return arg_extremum("argmax", id, x, axis, keepdims);
}

Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  static const OpId id = op_id("argmin");
  return arg_extremum("argmin", id, x, axis, keepdims);
}

Tensor count_nonzero(const Tensor& x, const OptionalAxes& axes, bool keepdims) {
  static const OpId id = op_id("count_nonzero");
  return reduce(id, x, plan(x, axes, keepdims, "count_nonzero"), kDefaultIndex);
}

}  // namespace xrt
