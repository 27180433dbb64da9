// cpp/src/core/linear_ops.cpp: linear (x @ weight^T + bias, then an activation), the op a
// dense layer is, and its composed kernel.
//
// Note [Fused linear]: PyTorch's `linear` followed by an activation is two or three kernels
// (the product, perhaps the bias, the activation), each a pass over the output. On CUDA the
// "cublaslt" kernel does it in one cublasLtMatmul whose epilogue adds the bias and applies
// ReLU or GELU while the tile is still in registers. cuBLASLt's GELU is the tanh form, so
// the erf form (torch's and ONNX's default) takes the bias epilogue and then one gelu kernel
// in place; so does float64's tanh form (cuBLASLt computes it to float accuracy). The "composite" kernel (every device, and where cuBLASLt has no fused algorithm)
// runs the product into the output and applies the rest in place: no temporaries.
#include "core/linear_internal.h"

#include "core/linalg_internal.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/registry.h"

namespace xrt {

using linalg_detail::name_of;

namespace {

OpId linear_op() {
  static const OpId id = KernelRegistry::global().op_id("linear");
  return id;
}

// The unary op on t in place (elementwise kernels read each element before writing it).
void unary_in_place(const char* op, Tensor& t) {
  const Tensor* in[] = {&t};
  KernelCall call{in, 1, &t, 1, nullptr};
  dispatch(KernelRegistry::global().op_id(op), call);
}

}  // namespace

Activation activation_of(const KernelCall& call) {
  return call.attrs ? static_cast<Activation>(call.attrs->value.i) : Activation::None;
}

void linear_composite_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& weight = call.in(1);
  Tensor& out = call.out();
  Tensor wt = weight.matrix_transpose();
  const Tensor* in[] = {&x, &wt};
  KernelCall product{in, 2, &out, 1, nullptr};
  dispatch(BuiltinOps::get().matmul, product);
  if (call.num_inputs > 2) add_inplace(out, call.in(2));
  apply_activation(activation_of(call), out);
}

void apply_activation(Activation activation, Tensor& out) {
  switch (activation) {
    case Activation::None: return;
    case Activation::Relu: {
      Tensor zero = scalar_tensor(Scalar::from_int(0), out.dtype(), kCPU);
      binary_inplace_with_host_scalar(BinaryOp::maximum, out, zero);
      return;
    }
    case Activation::Gelu: unary_in_place("gelu", out); return;
    case Activation::GeluTanh: unary_in_place("gelu_tanh", out); return;
  }
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor* bias, Activation activation) {
  check_same_device(x, weight, "linear");
  if (bias) check_same_device(x, *bias, "linear");
  if (x.ndim() < 1)
    throw ValueError("linear: x must have at least one dimension (the features), got a 0-d "
                     "array");
  if (weight.ndim() != 2)
    throw ValueError("linear: weight must be a matrix (out_features, in_features), got shape " +
                     shape_str(weight.shape()));
  const int64_t k = x.shape().back(), n = weight.shape()[0];
  if (weight.shape()[1] != k)
    throw ValueError("linear: x has " + std::to_string(k) + " features but weight " +
                     shape_str(weight.shape()) + " takes " + std::to_string(weight.shape()[1]));
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != n))
    throw ValueError("linear: bias must have shape (" + std::to_string(n) + ",), got " +
                     shape_str(bias->shape()));
  if (static_cast<int>(activation) < 0 || static_cast<int>(activation) > 3)
    throw ValueError("linear: activation must be 0 (none), 1 (relu), 2 (gelu) or 3 "
                     "(gelu_tanh), got " + std::to_string(static_cast<int>(activation)));
  DType dtype = result_type(x.dtype(), weight.dtype());
  if (bias) dtype = result_type(dtype, bias->dtype());
  if (!is_floating(dtype))
    throw TypeError("linear needs real floating-point arrays, got " + name_of(dtype) +
                    " (convert with astype() first)");
  Dims batch(x.shape().begin(), x.shape().end() - 1);
  const int64_t m = shape_numel(batch);  // x exists, so its size fits
  // x as the matrix (m, k): a view of a contiguous x, else a contiguous copy.
  Tensor xc = contiguous(x.dtype() == dtype ? x : astype(x, dtype, true));
  Tensor x2 = xc.as_strided(Dims{m, k}, Dims{k, 1}, xc.byte_offset());
  Tensor w = weight.dtype() == dtype ? weight : astype(weight, dtype, true);
  // A bias the epilogue reads as a plain vector: contiguous and freshly aligned if not.
  Tensor b;
  if (bias) {
    b = *bias;
    bool aligned = reinterpret_cast<uintptr_t>(b.data()) % 16 == 0;
    if (b.dtype() != dtype || !b.is_contiguous() || !aligned) b = astype(b, dtype, true);
  }
  Tensor out = empty(Dims{m, n}, dtype, x.device());
  OpAttrs attrs;
  attrs.value = Scalar::from_int(static_cast<int64_t>(activation));
  if (bias) {
    const Tensor* in[] = {&x2, &w, &b};
    KernelCall call{in, 3, &out, 1, &attrs};
    dispatch(linear_op(), call);
  } else {
    const Tensor* in[] = {&x2, &w};
    KernelCall call{in, 2, &out, 1, &attrs};
    dispatch(linear_op(), call);
  }
  Dims shape = batch;
  shape.push_back(n);
  return out.as_strided(shape, contiguous_strides(shape), 0);
}

}  // namespace xrt
