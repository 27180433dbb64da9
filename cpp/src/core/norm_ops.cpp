// cpp/src/core/norm_ops.cpp: softmax, log_softmax, layer_norm and rms_norm, the row
// operations of attention and transformer blocks, each one op.
//
// Note [Row ops]: each works on rows. x is seen as a matrix (rows, cols) whose cols are the
// reduced extent: the softmax axis (moved last), or the normalised trailing axes. A kernel
// gets that matrix contiguous in the result's dtype (float16 and bfloat16 rows it computes
// in float32, rounding once at the end, as PyTorch and ONNX Runtime do), the weight and
// bias as contiguous vectors of cols in the same dtype, eps in attrs.value and which of
// weight and bias are there in attrs.step (bit 0 weight, bit 1 bias, in that order among
// the inputs). With bit 2 (add_norm) a residual comes right after x: the kernel writes
// x + residual, rounded to the dtype, as a second output and normalises that. The CPU
// kernels (cpu/norm_kernels.cpp) take rows in parallel, vectorised per ISA; the CUDA ones
// (kernels/xrt/norm.cuh) a warp or a block per row. Composed from max, exp, sum and the
// rest, a softmax is five ops and five passes over the data, a layer norm nine: here each
// is one pass per statistic over a row that stays in cache.
//
// Note [CPU attention]: attention_rows is softmax(q·kᵀ·scale + mask)·v for [B, H, S, D]
// operands on the CPU, one kernel: for each (batch, head) it lays Kᵀ and V out densely
// once, then takes query rows eight at a time: their scores against every key in a register
// tile (8 rows x 2 vectors of keys) over D, scale, mask and softmax per row in cache, and
// the probabilities against V the same way. A causal row's softmax covers the keys it sees.
// The composed form is two batched matmuls (OpenBLAS per head: 23 us for 4 heads of
// 64x64x64 on this project's 2-core machine), a multiply, the softmax and a matmul, each a
// pass over the scores in memory; here the 4 heads take 21 us. The operations and their
// order are the composed form's (the product, times scale, plus the mask, then the row
// softmax, masked keys getting 0); the products' summation order differs from BLAS's, as
// BLAS's differs between its own kernels. The caller lays the output out (any strides on
// the first three axes, the last contiguous); empty_attention_output gives the query's order
// of axes, the layout the cudnn kernel writes too.
#include "xpuruntime/norm.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "core/linalg_internal.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/manipulation.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/registry.h"

namespace xrt {

using linalg_detail::name_of;

namespace {

OpId op_id(const char* name) { return KernelRegistry::global().op_id(name); }

/// TypeError unless the row op's dtype is a real floating one (the kernels compute 16-bit
/// rows in float32 themselves).
void check_floating(DType dtype, const char* op) {
  if (!is_floating(dtype))
    throw TypeError(std::string(op) + " needs real floating-point arrays, got " +
                    name_of(dtype) + " (convert with astype() first)");
}

Tensor as_rows(const Tensor& t, DType dtype) {
  return contiguous(t.dtype() == dtype ? t : astype(t, dtype, true));
}

/// The kernel of op over x (rows, cols) with the vectors, into a new (rows, cols) matrix;
/// with a residual, x + residual too, into *sum.
Tensor run_rows(const char* op, const Tensor& x, const Tensor* residual, const Tensor* weight,
                const Tensor* bias, double eps, Tensor* sum = nullptr) {
  Tensor outs[2] = {empty(x.shape(), x.dtype(), x.device()), Tensor()};
  if (residual) outs[1] = empty(x.shape(), x.dtype(), x.device());
  OpAttrs attrs;
  attrs.value = Scalar::from_float(eps);
  attrs.step = Scalar::from_int((weight ? 1 : 0) | (bias ? 2 : 0) | (residual ? 4 : 0));
  const Tensor* in[4] = {&x, nullptr, nullptr, nullptr};
  int n = 1;
  if (residual) in[n++] = residual;
  if (weight) in[n++] = weight;
  if (bias) in[n++] = bias;
  KernelCall call{in, n, outs, residual ? 2 : 1, &attrs};
  dispatch(op_id(op), call);
  if (sum) *sum = outs[1];
  return outs[0];
}

/// The rows matrix as a contiguous array of shape.
Tensor shaped(const Tensor& rows, const Dims& shape) {
  return rows.as_strided(shape, contiguous_strides(shape), rows.byte_offset());
}

/// The vector of a layer: shape `trailing` exactly, on x's device.
void check_vector(const char* op, const char* what, const Tensor& v, const Tensor& x,
                  const Dims& trailing) {
  check_same_device(x, v, op);
  if (!(v.shape() == trailing))
    throw ValueError(std::string(op) + ": " + what + " must have the normalised shape " +
                     shape_str(trailing) + ", got " + shape_str(v.shape()));
}

/// The norm op over the last normalized_ndim axes of x, or of x + residual when a residual
/// is given (add_norm: the sum goes to *sum too).
Tensor norm(const char* op, const Tensor& x, const Tensor* residual, int64_t normalized_ndim,
            const Tensor* weight, const Tensor* bias, double eps, Tensor* sum = nullptr) {
  DType dtype = x.dtype();
  if (residual) {
    check_same_device(x, *residual, op);
    if (!(x.shape() == residual->shape()))
      throw ValueError(std::string(op) + ": the residual must have x's shape " +
                       shape_str(x.shape()) + ", got " + shape_str(residual->shape()));
    dtype = result_type(dtype, residual->dtype());
  }
  if (normalized_ndim < 1 || normalized_ndim > x.ndim())
    throw ValueError(std::string(op) + ": the normalised axes must be 1 to " +
                     std::to_string(x.ndim()) + " trailing axes of x (shape " +
                     shape_str(x.shape()) + "), got " + std::to_string(normalized_ndim));
  Dims trailing(x.shape().end() - normalized_ndim, x.shape().end());
  if (weight) {
    check_vector(op, "weight", *weight, x, trailing);
    dtype = result_type(dtype, weight->dtype());
  }
  if (bias) {
    check_vector(op, "bias", *bias, x, trailing);
    dtype = result_type(dtype, bias->dtype());
  }
  check_floating(dtype, op);
  if (x.numel() == 0) {
    if (sum) *sum = empty(x.shape(), dtype, x.device());
    return empty(x.shape(), dtype, x.device());
  }
  const int64_t cols = shape_numel(trailing);
  auto rows_of = [&](const Tensor& t) {
    Tensor c = as_rows(t, dtype);
    return c.as_strided(Dims{x.numel() / cols, cols}, Dims{cols, 1}, c.byte_offset());
  };
  Tensor x2 = rows_of(x), r2, w, b;
  if (residual) r2 = rows_of(*residual);
  if (weight) w = as_rows(*weight, dtype);
  if (bias) b = as_rows(*bias, dtype);
  Tensor out = run_rows(op, x2, residual ? &r2 : nullptr, weight ? &w : nullptr,
                        bias ? &b : nullptr, eps, sum);
  if (sum) *sum = shaped(*sum, x.shape());
  return shaped(out, x.shape());
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  check_floating(x.dtype(), op);
  const int nd = std::max(x.ndim(), 1);
  if (axis < -nd || axis >= nd)
    throw IndexError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of bounds for an array of " + std::to_string(x.ndim()) +
                     (x.ndim() == 1 ? " dimension" : " dimensions"));
  if (x.ndim() == 0)
    return shaped(softmax(reshape(x, Dims{1}, std::nullopt), 0, log), Dims{});
  const int a = static_cast<int>(axis < 0 ? axis + nd : axis);
  if (x.numel() == 0) return empty(x.shape(), x.dtype(), x.device());
  // The axis last: a view, then the rows matrix (a copy unless it already was contiguous).
  Tensor moved = a == nd - 1 ? x : moveaxis(x, Dims{a}, Dims{nd - 1});
  Tensor x2 = as_rows(moved, x.dtype());
  const int64_t cols = moved.shape().back();
  x2 = x2.as_strided(Dims{x.numel() / cols, cols}, Dims{cols, 1}, x2.byte_offset());
  Tensor out = shaped(run_rows(op, x2, nullptr, nullptr, nullptr, 0.0), moved.shape());
  return a == nd - 1 ? out : moveaxis(out, Dims{nd - 1}, Dims{a});
}

Tensor layer_norm(const Tensor& x, int64_t normalized_ndim, const Tensor* weight,
                  const Tensor* bias, double eps) {
  return norm("layer_norm", x, nullptr, normalized_ndim, weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, int64_t normalized_ndim, const Tensor* weight, double eps) {
  return norm("rms_norm", x, nullptr, normalized_ndim, weight, nullptr, eps);
}

std::pair<Tensor, Tensor> add_norm(const Tensor& x, const Tensor& residual,
                                   int64_t normalized_ndim, const Tensor* weight,
                                   const Tensor* bias, double eps, bool rms) {
  if (rms && bias) throw ValueError("rms_norm takes no bias");
  Tensor sum;
  Tensor out = norm(rms ? "rms_norm" : "layer_norm", x, &residual, normalized_ndim, weight,
                    bias, eps, &sum);
  return {out, sum};
}

Tensor empty_attention_output(const Tensor& q, int64_t dv) {
  if (q.ndim() != 4)
    throw ValueError("attention output: the query must be 4-D [B, H, S, D], got shape " +
                     shape_str(q.shape()));
  const Dims& qs = q.shape();
  const Dims shape{qs[0], qs[1], qs[2], dv};
  Dims order{0, 1, 2, 3};
  if (q.strides()[3] == 1) {
    auto key = [&](int64_t a) {  // size-1 axes first: their strides mean nothing
      return qs[a] > 1 ? q.strides()[a] : std::numeric_limits<int64_t>::max();
    };
    std::stable_sort(order.begin(), order.begin() + 3,
                     [&](int64_t a, int64_t b) { return key(a) > key(b); });
  }
  Dims dense(4), inverse(4);
  for (int a = 0; a < 4; ++a) {
    dense[a] = shape[order[a]];
    inverse[order[a]] = a;
  }
  return empty(dense, q.dtype(), q.device()).permute(inverse);
}

void attention_rows(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                    bool causal, double scale, Tensor& out) {
  const Tensor* operands[] = {&q, &k, &v, mask};
  const char* names[] = {"query", "key", "value", "mask"};
  for (int i = 0; i < 4; ++i) {
    const Tensor* t = operands[i];
    if (!t) continue;
    if (t->ndim() != 4)
      throw ValueError(std::string("attention_rows: ") + names[i] + " must be 4-D [B, H, S, D], "
                       "got shape " + shape_str(t->shape()));
    if (t->dtype() != q.dtype())
      throw TypeError(std::string("attention_rows: ") + names[i] + " is " +
                      name_of(t->dtype()) + ", the query " + name_of(q.dtype()));
    if (!(t->device() == q.device()))
      throw ValueError("attention_rows: the operands must share one device");
  }
  if (q.dtype() != DType::Float32 && q.dtype() != DType::Float64)
    throw TypeError("attention_rows: float32 or float64 operands, got " + name_of(q.dtype()));
  const Dims& qs = q.shape();
  const Dims& ks = k.shape();
  const Dims& vs = v.shape();
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != qs[1] || vs[1] != qs[1] || ks[3] != qs[3] ||
      vs[2] != ks[2])
    throw ValueError("attention_rows: query " + shape_str(qs) + ", key " + shape_str(ks) +
                     " and value " + shape_str(vs) + " do not fit [B, H, Sq, D], [B, H, Skv, D], "
                     "[B, H, Skv, Dv]");
  if (mask && !(mask->shape() == Dims{qs[0], qs[1], qs[2], ks[2]}))
    throw ValueError("attention_rows: the mask must be [B, H, Sq, Skv] = " +
                     shape_str(Dims{qs[0], qs[1], qs[2], ks[2]}) + ", got " +
                     shape_str(mask->shape()));
  const Dims shape{qs[0], qs[1], qs[2], vs[3]};
  if (!(out.shape() == shape) || out.dtype() != q.dtype() || !(out.device() == q.device()) ||
      (vs[3] > 1 && out.strides()[3] != 1) || out.readonly())
    throw ValueError("attention_rows: out must be a writable " + name_of(q.dtype()) + " " +
                     shape_str(shape) + " on the query's device with a last stride of 1");
  if (out.numel() == 0) return;
  if (ks[2] == 0) {  // no keys: the softmax of an empty row, as composed
    Tensor nan = full(Dims{}, Scalar::from_float(std::numeric_limits<double>::quiet_NaN()),
                      q.dtype(), q.device());
    copy_into(out, broadcast_to(nan, shape));
    return;
  }
  OpAttrs attrs;
  attrs.value = Scalar::from_float(scale);
  attrs.step = Scalar::from_int(causal ? 1 : 0);
  const Tensor* in[] = {&q, &k, &v, mask};
  KernelCall call{in, mask ? 4 : 3, &out, 1, &attrs};
  dispatch(op_id("attention_rows"), call);
}

}  // namespace xrt
