// cpp/src/core/linalg_ops.cpp: the op definitions of the LAPACK-backed linalg functions:
// argument checks, result dtypes and shapes, dispatch. The composite functions (norms,
// products, diagonal, trace, matrix_power) are in linalg_composite_ops.cpp.
#include <algorithm>
#include <initializer_list>

#include "core/linalg_internal.h"
#include "xpuruntime/dispatcher.h"

namespace xrt {
namespace linalg_detail {

const LinalgOps& LinalgOps::get() {
  static const LinalgOps ops = [] {
    auto& r = KernelRegistry::global();
    return LinalgOps{r.op_id("cholesky"), r.op_id("det"),         r.op_id("slogdet"),
                     r.op_id("inv"),      r.op_id("solve"),       r.op_id("qr"),
                     r.op_id("eigh"),     r.op_id("eig"),         r.op_id("svd"),
                     r.op_id("pinv"),     r.op_id("matrix_rank"), r.op_id("vector_norm"),
                     r.op_id("vecdot"),   r.op_id("cross"),       r.op_id("outer")};
  }();
  return ops;
}

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

void run(OpId op, std::initializer_list<const Tensor*> inputs, Tensor* outputs, int num_outputs,
         const OpAttrs* attrs) {
  KernelCall call{inputs.begin(), static_cast<int>(inputs.size()), outputs, num_outputs, attrs};
  dispatch(op, call);
}

DType compute_dtype(DType d, const char* op) {
  if (d == DType::Float16 || d == DType::BFloat16) return DType::Float32;
  if (is_floating(d) || is_complex(d)) return d;
  throw TypeError(std::string(op) + " needs a floating-point dtype, got " + name_of(d) +
                  " (convert with astype() first)");
}

void check_matrices(const Tensor& x, const char* op, bool square) {
  if (x.ndim() < 2)
    throw ValueError(std::string(op) +
                     ": x must be a matrix or a stack of matrices (at least "
                     "2 dimensions), got shape " +
                     shape_str(x.shape()));
  if (square && x.shape()[x.ndim() - 1] != x.shape()[x.ndim() - 2])
    throw ValueError(std::string(op) + ": the matrices must be square, got shape " +
                     shape_str(x.shape()));
}


Dims with_core(Dims batch, std::initializer_list<int64_t> core) {
  for (int64_t d : core) batch.push_back(d);
  return batch;
}

Dims batch_of(const Tensor& x, int core_ndim) {
  return Dims(x.shape().begin(), x.shape().end() - core_ndim);
}

Tensor cast_to(const Tensor& t, DType dtype) { return astype(t, dtype, false); }

}  // namespace linalg_detail

namespace linalg {
namespace {

using namespace linalg_detail;

// x checked and cast to the dtype LAPACK computes in.
struct LapackInput {
  Tensor x;
  DType dtype;    // the caller's dtype: results are cast back to it (or its real type)
  DType compute;  // float32/64, complex64/128
  int64_t rows, cols;
  Dims batch;
};

LapackInput lapack_input(const Tensor& x, const char* op, bool square) {
  check_matrices(x, op, square);
  DType compute = compute_dtype(x.dtype(), op);
  return {cast_to(x, compute),     x.dtype(),        compute,
          x.shape()[x.ndim() - 2], x.shape().back(), batch_of(x, 2)};
}

DType complex_of(DType real) {
  return real == DType::Float64 || real == DType::Complex128 ? DType::Complex128 : DType::Complex64;
}

double machine_epsilon(DType real) {
  switch (real) {
    case DType::Float16:
      return 0x1p-10;
    case DType::BFloat16:
      return 0x1p-7;
    case DType::Float32:
      return 0x1p-23;
    default:
      return 0x1p-52;
  }
}

// rtol of pinv/matrix_rank as one real value per matrix of the stack.
Tensor tolerance(const RelativeTolerance& rtol, const LapackInput& in, Device device,
                 const char* op) {
  DType real = real_dtype(in.compute);
  Tensor t;
  if (const Tensor* array = std::get_if<Tensor>(&rtol)) {
    if (!is_floating(array->dtype()))
      throw TypeError(std::string(op) + ": rtol must have a real floating-point dtype, got " +
                      name_of(array->dtype()));
    t = cast_to(*array, real);
  } else {
    double value = std::holds_alternative<double>(rtol)
                       ? std::get<double>(rtol)
                       : std::max(in.rows, in.cols) * machine_epsilon(real_dtype(in.dtype));
    t = full(Dims{}, Scalar::from_float(value), real, device);
  }
  try {
    return t.broadcast_to(in.batch);
  } catch (const ValueError&) {
    throw ValueError(std::string(op) + ": rtol of shape " + shape_str(t.shape()) +
                     " does not broadcast to the stack shape " + shape_str(in.batch));
  }
}

}  // namespace

Tensor cholesky(const Tensor& x, bool upper) {
  LapackInput in = lapack_input(x, "cholesky", true);
  Tensor out[1] = {empty(in.x.shape(), in.compute, x.device())};
  OpAttrs attrs;
  attrs.value = Scalar::from_bool(upper);
  run(LinalgOps::get().cholesky, {&in.x}, out, 1, &attrs);
  return cast_to(out[0], in.dtype);
}

Tensor det(const Tensor& x) {
  LapackInput in = lapack_input(x, "det", true);
  Tensor out[1] = {empty(in.batch, in.compute, x.device())};
  run(LinalgOps::get().det, {&in.x}, out, 1);
  return cast_to(out[0], in.dtype);
}

SlogdetResult slogdet(const Tensor& x) {
  LapackInput in = lapack_input(x, "slogdet", true);
  Tensor out[2] = {empty(in.batch, in.compute, x.device()),
                   empty(in.batch, real_dtype(in.compute), x.device())};
  run(LinalgOps::get().slogdet, {&in.x}, out, 2);
  return {cast_to(out[0], in.dtype), cast_to(out[1], real_dtype(in.dtype))};
}

Tensor inv(const Tensor& x) {
  LapackInput in = lapack_input(x, "inv", true);
  Tensor out[1] = {empty(in.x.shape(), in.compute, x.device())};
  run(LinalgOps::get().inv, {&in.x}, out, 1);
  return cast_to(out[0], in.dtype);
}

Tensor solve(const Tensor& x1, const Tensor& x2) {
  check_same_device(x1, x2, "solve");
  check_matrices(x1, "solve", true);
  const int64_t m = x1.shape().back();
  const bool vector = x2.ndim() == 1;  // (M,) stands for (..., M, 1)
  if (x2.ndim() == 0 || x2.shape()[vector ? 0 : x2.ndim() - 2] != m)
    throw ValueError("solve: x2 of shape " + shape_str(x2.shape()) +
                     " does not fit x1 of "
                     "shape " +
                     shape_str(x1.shape()) +
                     " (x2 must be (M,) or (..., M, K) with "
                     "M = " +
                     std::to_string(m) + ")");
  DType dtype = result_type(x1.dtype(), x2.dtype());
  DType compute = compute_dtype(dtype, "solve");
  Tensor b = vector ? x2.unsqueeze(1) : x2;
  Dims batch = broadcast_shapes(batch_of(x1, 2), batch_of(b, 2));
  int64_t k = b.shape().back();
  Tensor a_in = cast_to(x1, compute).broadcast_to(with_core(batch, {m, m}));
  Tensor b_in = cast_to(b, compute).broadcast_to(with_core(batch, {m, k}));
  Tensor out[1] = {empty(with_core(batch, {m, k}), compute, x1.device())};
  run(LinalgOps::get().solve, {&a_in, &b_in}, out, 1);
  Tensor result = cast_to(out[0], dtype);
  if (!vector) return result;
  Dims shape = with_core(batch, {m});
  return result.as_strided(shape, contiguous_strides(shape), result.byte_offset());
}

QrResult qr(const Tensor& x, bool complete) {
  LapackInput in = lapack_input(x, "qr", false);
  const int64_t m = in.rows, n = in.cols, k = std::min(m, n);
  Tensor out[2] = {empty(with_core(in.batch, {m, complete ? m : k}), in.compute, x.device()),
                   empty(with_core(in.batch, {complete ? m : k, n}), in.compute, x.device())};
  run(LinalgOps::get().qr, {&in.x}, out, 2);
  return {cast_to(out[0], in.dtype), cast_to(out[1], in.dtype)};
}

EigResult eigh(const Tensor& x) {
  LapackInput in = lapack_input(x, "eigh", true);
  const int64_t n = in.rows;
  Tensor out[2] = {empty(with_core(in.batch, {n}), real_dtype(in.compute), x.device()),
                   empty(in.x.shape(), in.compute, x.device())};
  run(LinalgOps::get().eigh, {&in.x}, out, 2);
  return {cast_to(out[0], real_dtype(in.dtype)), cast_to(out[1], in.dtype)};
}

Tensor eigvalsh(const Tensor& x) {
  LapackInput in = lapack_input(x, "eigvalsh", true);
  Tensor out[1] = {empty(with_core(in.batch, {in.rows}), real_dtype(in.compute), x.device())};
  run(LinalgOps::get().eigh, {&in.x}, out, 1);
  return cast_to(out[0], real_dtype(in.dtype));
}

namespace {

// eig and eigvals: complex results of x's precision, which float16/bfloat16 lack.
LapackInput eig_input(const Tensor& x, const char* op) {
  if (x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16)
    throw TypeError(std::string(op) +
                    " returns complex eigenvalues of the input's precision; "
                    "there is no complex dtype for " +
                    name_of(x.dtype()) + " (convert to float32 first)");
  return lapack_input(x, op, true);
}

}  // namespace

EigResult eig(const Tensor& x) {
  LapackInput in = eig_input(x, "eig");
  DType complex = complex_of(in.compute);
  Tensor out[2] = {empty(with_core(in.batch, {in.rows}), complex, x.device()),
                   empty(in.x.shape(), complex, x.device())};
  run(LinalgOps::get().eig, {&in.x}, out, 2);
  return {out[0], out[1]};
}

Tensor eigvals(const Tensor& x) {
  LapackInput in = eig_input(x, "eigvals");
  Tensor out[1] = {empty(with_core(in.batch, {in.rows}), complex_of(in.compute), x.device())};
  run(LinalgOps::get().eig, {&in.x}, out, 1);
  return out[0];
}

SvdResult svd(const Tensor& x, bool full_matrices) {
  LapackInput in = lapack_input(x, "svd", false);
  const int64_t m = in.rows, n = in.cols, k = std::min(m, n);
  Tensor out[3] = {empty(with_core(in.batch, {m, full_matrices ? m : k}), in.compute, x.device()),
                   empty(with_core(in.batch, {k}), real_dtype(in.compute), x.device()),
                   empty(with_core(in.batch, {full_matrices ? n : k, n}), in.compute, x.device())};
  run(LinalgOps::get().svd, {&in.x}, out, 3);
  return {cast_to(out[0], in.dtype), cast_to(out[1], real_dtype(in.dtype)),
          cast_to(out[2], in.dtype)};
}

Tensor svdvals(const Tensor& x) {
  LapackInput in = lapack_input(x, "svdvals", false);
  const int64_t k = std::min(in.rows, in.cols);
  Tensor out[1] = {empty(with_core(in.batch, {k}), real_dtype(in.compute), x.device())};
  run(LinalgOps::get().svd, {&in.x}, out, 1);
  return cast_to(out[0], real_dtype(in.dtype));
}

Tensor pinv(const Tensor& x, const RelativeTolerance& rtol) {
  LapackInput in = lapack_input(x, "pinv", false);
  Tensor tol = tolerance(rtol, in, x.device(), "pinv");
  Tensor out[1] = {empty(with_core(in.batch, {in.cols, in.rows}), in.compute, x.device())};
  run(LinalgOps::get().pinv, {&in.x, &tol}, out, 1);
  return cast_to(out[0], in.dtype);
}

Tensor matrix_rank(const Tensor& x, const RelativeTolerance& rtol) {
  LapackInput in = lapack_input(x, "matrix_rank", false);
  Tensor tol = tolerance(rtol, in, x.device(), "matrix_rank");
  Tensor out[1] = {empty(in.batch, kDefaultInt, x.device())};
  run(LinalgOps::get().matrix_rank, {&in.x, &tol}, out, 1);
  return out[0];
}

}  // namespace linalg
}  // namespace xrt
