// cpp/src/core/indexing_functions.cpp: take, take_along_axis (the standard's indexing
// functions) and nonzero; the kernels are those of x[...] (core/indexing_ops.cpp).
#include <string>

#include "core/indexing_internal.h"

namespace xrt {

using namespace indexing_detail;

Tensor take(const Tensor& x, const Tensor& indices, std::optional<int64_t> axis) {
  if (!is_integer(indices.dtype()))
    throw TypeError("take: indices must have an integer dtype, not " + name_of(indices.dtype()));
  if (x.ndim() == 0) throw ValueError("take: x must have at least one dimension");
  if (!axis && x.ndim() > 1)
    throw ValueError("take: axis is required when x has more than one dimension (x has " +
                     std::to_string(x.ndim()) + ")");
  if (indices.device() != x.device())
    throw ValueError("take: x and indices are on different devices");
  return gather_axis(x, indices, normalize_axis(axis.value_or(0), x.ndim()));
}

Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis) {
  if (!is_integer(indices.dtype()))
    throw TypeError("take_along_axis: indices must have an integer dtype, not " +
                    name_of(indices.dtype()));
  if (indices.ndim() != x.ndim())
    throw ValueError(
        "take_along_axis: x and indices must have the same number of dimensions "
        "(got " +
        std::to_string(x.ndim()) + " and " + std::to_string(indices.ndim()) + ")");
  if (indices.device() != x.device())
    throw ValueError("take_along_axis: x and indices are on different devices");
  int a = normalize_axis(axis, x.ndim());
  Dims xs = x.shape(), is = indices.shape();
  xs[a] = 1;
  is[a] = 1;
  Dims shape;
  try {
    shape = broadcast_shapes(xs, is);
  } catch (const ValueError&) {
    throw ValueError("take_along_axis: shapes " + shape_str(x.shape()) + " and " +
                     shape_str(indices.shape()) + " do not broadcast outside axis " +
                     std::to_string(a));
  }
  Dims x_shape = shape;
  x_shape[a] = x.shape()[a];
  shape[a] = indices.shape()[a];
  Tensor xv = x.broadcast_to(x_shape), iv = indices.broadcast_to(shape);
  Tensor out = empty(shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  const Tensor* inputs[] = {&xv, &iv};
  run_indexed(Ops::get().take_along_axis, inputs, 2, out, a, &a);
  return out;
}

std::vector<Tensor> nonzero(const Tensor& x) {
  if (x.ndim() == 0)
    throw ValueError(
        "nonzero is not defined for 0-d tensors; use nonzero(reshape(x, (1,))) "
        "or x[None]");
  int64_t count = count_nonzero(x);
  std::vector<Tensor> out;
  for (int d = 0; d < x.ndim(); ++d) out.push_back(empty(Dims{count}, kDefaultIndex, x.device()));
  if (count == 0) return out;
  Tensor input = contiguous(x);
  run(Ops::get().nonzero, {&input}, out.data(), static_cast<int>(out.size()), 0);
  return out;
}

}  // namespace xrt
