// cpp/src/core/linalg_composite_ops.cpp: matmul (the dispatched matmul op) and the linalg
// functions built from views, other ops and small kernels: matrix_transpose, diagonal,
// trace, tensordot (through matmul), vecdot, cross, outer, vector_norm, matrix_norm and
// matrix_power.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/linalg_internal.h"
#include "xpuruntime/reductions.h"

namespace xrt {

using namespace linalg_detail;

namespace {

void check_numeric(DType d, const char* op) {
  if (!is_numeric(d))
    throw TypeError(std::string(op) + " needs a numeric dtype, got " + name_of(d));
}

// A contiguous tensor seen with another shape of the same size.
Tensor reshaped(const Tensor& contiguous_tensor, const Dims& shape) {
  return contiguous_tensor.as_strided(shape, contiguous_strides(shape),
                                      contiguous_tensor.byte_offset());
}

// The axis of a vector function (cross, vecdot): negative, within both arrays.
int vector_axis(int64_t axis, const Tensor& x1, const Tensor& x2, const char* op) {
  int n = std::min(x1.ndim(), x2.ndim());
  if (axis >= 0 || axis < -n)
    throw ValueError(std::string(op) + ": axis must be a negative integer in [-" +
                     std::to_string(n) + ", -1] (got " + std::to_string(axis) + ")");
  return static_cast<int>(axis);
}

// x with the axis (negative) moved to the end.
Tensor axis_last(const Tensor& x, int axis) {
  Dims order;
  int a = x.ndim() + axis;
  for (int d = 0; d < x.ndim(); ++d)
    if (d != a) order.push_back(d);
  order.push_back(a);
  return x.permute(order);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_device(a, b, "matmul");
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ValueError("matmul: operands must have at least one dimension (got shapes " +
                     shape_str(a.shape()) + " and " + shape_str(b.shape()) + ")");
  DType dtype = result_type(a.dtype(), b.dtype());
  // matmul keeps the wording it had among the ops of ops.h (not check_numeric's).
  if (!is_numeric(dtype))
    throw TypeError("matmul is not defined for " + name_of(dtype) +
                    " (it needs a numeric dtype)");
  Tensor x = a.ndim() == 1 ? a.unsqueeze(0) : a;
  Tensor y = b.ndim() == 1 ? b.unsqueeze(1) : b;
  int64_t k = x.shape().back(), kb = y.shape()[y.ndim() - 2];
  if (k != kb)
    throw ValueError("matmul: contracted dimensions differ: shapes " + shape_str(a.shape()) +
                     " and " + shape_str(b.shape()) + " (" + std::to_string(k) + " != " +
                     std::to_string(kb) + ")");
  Dims xb(x.shape().begin(), x.shape().end() - 2), yb(y.shape().begin(), y.shape().end() - 2);
  Dims batch = broadcast_shapes(xb, yb);
  Dims xs = batch, ys = batch, shape = batch;
  xs.push_back(x.shape()[x.ndim() - 2]); xs.push_back(k);
  ys.push_back(k); ys.push_back(y.shape().back());
  shape.push_back(x.shape()[x.ndim() - 2]); shape.push_back(y.shape().back());
  Tensor hold_x, hold_y;
  const Tensor& xa = conform(x, dtype, xs, hold_x);
  const Tensor& ya = conform(y, dtype, ys, hold_y);
  Tensor out = empty(shape, dtype, a.device());
  run(BuiltinOps::get().matmul, {&xa, &ya}, &out, 1, nullptr);
  if (a.ndim() > 1 && b.ndim() > 1) return out;
  Dims final_shape = batch;
  if (a.ndim() > 1) final_shape.push_back(shape[shape.size() - 2]);
  if (b.ndim() > 1) final_shape.push_back(shape.back());
  return out.as_strided(final_shape, contiguous_strides(final_shape), 0);
}

Tensor matrix_transpose(const Tensor& x) { return x.matrix_transpose(); }

Tensor tensordot(const Tensor& x1, const Tensor& x2, const Dims& axes1, const Dims& axes2) {
  check_same_device(x1, x2, "tensordot");
  DType dtype = result_type(x1.dtype(), x2.dtype());
  check_numeric(dtype, "tensordot");
  if (axes1.size() != axes2.size())
    throw ValueError("tensordot: the two axis sequences must have the same length (got " +
                     shape_str(axes1) + " and " + shape_str(axes2) + ")");
  // Permute x1 to (free..., contracted...) and x2 to (contracted..., free...), flatten
  // both to matrices and let matmul contract them.
  Dims order1, order2, free1, free2;
  uint64_t used1 = 0, used2 = 0;
  int64_t k = 1;
  for (int i = 0; i < axes1.size(); ++i) {
    int a = normalize_axis(axes1[i], x1.ndim()), b = normalize_axis(axes2[i], x2.ndim());
    if ((used1 >> a & 1) || (used2 >> b & 1))
      throw ValueError("tensordot: repeated axis in " +
                       shape_str((used1 >> a & 1) ? axes1 : axes2));
    used1 |= 1ull << a;
    used2 |= 1ull << b;
    if (x1.shape()[a] != x2.shape()[b])
      throw ValueError("tensordot: contracted axes differ in size: axis " + std::to_string(a) +
                       " of x1 has " + std::to_string(x1.shape()[a]) + ", axis " +
                       std::to_string(b) + " of x2 has " + std::to_string(x2.shape()[b]));
    order2.push_back(b);
    k *= x1.shape()[a];
  }
  Dims shape;
  int64_t m = 1, n = 1;
  for (int d = 0; d < x1.ndim(); ++d)
    if (!(used1 >> d & 1)) order1.push_back(d), shape.push_back(x1.shape()[d]), m *= x1.shape()[d];
  for (int i = 0; i < axes1.size(); ++i) order1.push_back(normalize_axis(axes1[i], x1.ndim()));
  for (int d = 0; d < x2.ndim(); ++d)
    if (!(used2 >> d & 1)) order2.push_back(d), shape.push_back(x2.shape()[d]), n *= x2.shape()[d];
  Tensor a = reshaped(contiguous(cast_to(x1, dtype).permute(order1)), Dims{m, k});
  Tensor b = reshaped(contiguous(cast_to(x2, dtype).permute(order2)), Dims{k, n});
  return reshaped(matmul(a, b), shape);
}

Tensor tensordot(const Tensor& x1, const Tensor& x2, int64_t n) {
  if (n < 0 || n > x1.ndim() || n > x2.ndim())
    throw ValueError("tensordot: axes=" + std::to_string(n) + " must be in [0, " +
                     std::to_string(std::min(x1.ndim(), x2.ndim())) + "] for arrays of shapes " +
                     shape_str(x1.shape()) + " and " + shape_str(x2.shape()));
  Dims axes1, axes2;
  for (int64_t i = 0; i < n; ++i) axes1.push_back(x1.ndim() - n + i), axes2.push_back(i);
  return tensordot(x1, x2, axes1, axes2);
}

Tensor vecdot(const Tensor& x1, const Tensor& x2, int64_t axis) {
  check_same_device(x1, x2, "vecdot");
  DType dtype = result_type(x1.dtype(), x2.dtype());
  check_numeric(dtype, "vecdot");
  int a = vector_axis(axis, x1, x2, "vecdot");
  int64_t k = x1.shape()[x1.ndim() + a];
  if (x2.shape()[x2.ndim() + a] != k)
    throw ValueError("vecdot: the vectors differ in length along axis " + std::to_string(axis) +
                     " (shapes " + shape_str(x1.shape()) + " and " + shape_str(x2.shape()) + ")");
  Tensor v1 = axis_last(x1, a), v2 = axis_last(x2, a);
  Dims batch = broadcast_shapes(batch_of(v1, 1), batch_of(v2, 1));
  Tensor in1 = cast_to(v1, dtype).broadcast_to(with_core(batch, {k}));
  Tensor in2 = cast_to(v2, dtype).broadcast_to(with_core(batch, {k}));
  Tensor out[1] = {empty(batch, dtype, x1.device())};
  run(LinalgOps::get().vecdot, {&in1, &in2}, out, 1);
  return out[0];
}

namespace linalg {

Tensor diagonal(const Tensor& x, int64_t offset) {
  check_matrices(x, "diagonal", false);
  const int nd = x.ndim();
  const int64_t rows = x.shape()[nd - 2], cols = x.shape()[nd - 1];
  // Note: an offset past the matrix gives an empty diagonal, not an error.
  int64_t length = 0;
  if (offset >= 0 && offset < cols) length = std::min(rows, cols - offset);
  if (offset < 0 && offset > -rows) length = std::min(cols, rows + offset);
  Dims shape = batch_of(x, 2), strides(x.strides().begin(), x.strides().end() - 2);
  shape.push_back(length);
  strides.push_back(x.strides()[nd - 2] + x.strides()[nd - 1]);
  int64_t start = 0;
  if (length > 0)
    start = offset >= 0 ? offset * x.strides()[nd - 1] : -offset * x.strides()[nd - 2];
  return x.as_strided(shape, strides, x.byte_offset() + start * static_cast<int64_t>(x.itemsize()));
}

Tensor trace(const Tensor& x, int64_t offset, std::optional<DType> dtype) {
  check_numeric(x.dtype(), "trace");
  return sum(diagonal(x, offset), Dims{-1}, dtype, false);
}

Tensor cross(const Tensor& x1, const Tensor& x2, int64_t axis) {
  check_same_device(x1, x2, "cross");
  DType dtype = result_type(x1.dtype(), x2.dtype());
  check_numeric(dtype, "cross");
  int a = vector_axis(axis, x1, x2, "cross");
  if (x1.shape()[x1.ndim() + a] != 3 || x2.shape()[x2.ndim() + a] != 3)
    throw ValueError("cross: both arrays need length 3 along axis " + std::to_string(axis) +
                     " (shapes " + shape_str(x1.shape()) + " and " + shape_str(x2.shape()) + ")");
  Dims shape = broadcast_shapes(x1.shape(), x2.shape());
  Tensor in1 = cast_to(x1, dtype).broadcast_to(shape);
  Tensor in2 = cast_to(x2, dtype).broadcast_to(shape);
  Tensor out[1] = {empty(shape, dtype, x1.device())};
  OpAttrs attrs;
  attrs.axes = Dims{shape.size() + a};
  run(LinalgOps::get().cross, {&in1, &in2}, out, 1, &attrs);
  return out[0];
}

Tensor outer(const Tensor& x1, const Tensor& x2) {
  check_same_device(x1, x2, "outer");
  if (x1.ndim() != 1 || x2.ndim() != 1)
    throw ValueError("outer: both arrays must be one-dimensional (got shapes " +
                     shape_str(x1.shape()) + " and " + shape_str(x2.shape()) + ")");
  DType dtype = result_type(x1.dtype(), x2.dtype());
  check_numeric(dtype, "outer");
  Dims shape{x1.shape()[0], x2.shape()[0]};
  Tensor in1 = cast_to(x1, dtype).unsqueeze(1).broadcast_to(shape);
  Tensor in2 = cast_to(x2, dtype).unsqueeze(0).broadcast_to(shape);
  Tensor out[1] = {empty(shape, dtype, x1.device())};
  run(LinalgOps::get().outer, {&in1, &in2}, out, 1);
  return out[0];
}

Tensor vector_norm(const Tensor& x, const std::optional<Dims>& axes, bool keepdims, double ord) {
  if (!is_floating(x.dtype()) && !is_complex(x.dtype()))
    throw TypeError("vector_norm needs a floating-point dtype, got " + name_of(x.dtype()) +
                    " (convert with astype() first)");
  if (std::isnan(ord)) throw ValueError("vector_norm: ord must not be NaN");
  Dims reduce;
  if (!axes) {
    for (int d = 0; d < x.ndim(); ++d) reduce.push_back(d);
  } else {
    for (int64_t a : *axes) reduce.push_back(normalize_axis(a, x.ndim()));
    std::sort(reduce.begin(), reduce.end());
    for (int i = 1; i < reduce.size(); ++i)
      if (reduce[i] == reduce[i - 1])
        throw ValueError("vector_norm: repeated axis " + std::to_string(reduce[i]));
  }
  Dims shape;
  for (int d = 0, j = 0; d < x.ndim(); ++d) {
    bool reduced = j < reduce.size() && reduce[j] == d;
    if (reduced) ++j;
    if (!reduced)
      shape.push_back(x.shape()[d]);
    else if (keepdims)
      shape.push_back(1);
  }
  Tensor out[1] = {empty(shape, real_dtype(x.dtype()), x.device())};
  OpAttrs attrs;
  attrs.axes = reduce;
  attrs.value = Scalar::from_float(ord);
  run(LinalgOps::get().vector_norm, {&x}, out, 1, &attrs);
  return out[0];
}

Tensor matrix_norm(const Tensor& x, bool keepdims, MatrixNormOrder ord) {
  check_matrices(x, "matrix_norm", false);
  compute_dtype(x.dtype(), "matrix_norm");  // TypeError for non-floating dtypes
  constexpr double inf = std::numeric_limits<double>::infinity();
  using Kind = MatrixNormOrder::Kind;
  if (ord.kind == Kind::Frobenius) return vector_norm(x, Dims{-2, -1}, keepdims, 2);
  Tensor norms;
  double p = ord.p;
  if (ord.kind == Kind::Nuclear) {
    norms = vector_norm(svdvals(x), Dims{-1}, false, 1);
  } else if (p == 2 || p == -2) {  // the largest or smallest singular value
    norms = vector_norm(svdvals(x), Dims{-1}, false, p > 0 ? inf : -inf);
  } else if (p == 1 || p == -1 || std::isinf(p)) {  // the largest or smallest abs column/row sum
    Tensor sums = vector_norm(x, Dims{std::isinf(p) ? -1 : -2}, false, 1);
    norms = vector_norm(sums, Dims{-1}, false, p > 0 ? inf : -inf);
  } else {
    throw ValueError("matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf (got " +
                     std::to_string(p) + ")");
  }
  return keepdims ? norms.unsqueeze(norms.ndim()).unsqueeze(norms.ndim() + 1) : norms;
}

Tensor matrix_power(const Tensor& x, int64_t n) {
  check_matrices(x, "matrix_power", true);
  compute_dtype(x.dtype(), "matrix_power");
  if (n == 0) {  // identities
    Tensor out = full(x.shape(), Scalar::from_int(0), x.dtype(), x.device());
    Tensor ones = diagonal(out, 0);
    copy_into(ones, full(Dims{}, Scalar::from_int(1), x.dtype(), x.device()));
    return out;
  }
  Tensor base = n < 0 ? inv(x) : x, result;
  // Exponentiation by squaring: |n| = sum of powers of two.
  for (uint64_t e = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n); e; e >>= 1) {
    if (e & 1) result = result.defined() ? matmul(result, base) : base;
    if (e > 1) base = matmul(base, base);
  }
  return result.storage() == x.storage() ? astype(x, x.dtype(), true) : result;
}

}  // namespace linalg
}  // namespace xrt
