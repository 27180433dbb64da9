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
//
// Note [Packed linear weights]: a dense layer's weight is constant while its input changes
// every call, and a product with few rows (a batch of tokens) spends as much time
// rearranging the weight into the micro-kernel's order as multiplying, so a served model
// rearranges it once (the native engine does, for constant float32 weights on the CPU).
// pack_linear_weight lays W (n, k) out as panels of 32 output features: element
// [j][p][q] = W[32 j + q][p], zero past n. The CPU's linear_packed kernels read a panel
// row (32 floats, two AVX-512 registers) per step of p and broadcast x's elements against
// it, keeping an 8 x 32 tile of the result in registers; bias and ReLU are applied as the
// tile is stored, GELU in place afterwards.
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

OpId linear_packed_op() {
  static const OpId id = KernelRegistry::global().op_id("linear_packed");
  return id;
}

void check_activation(Activation activation) {
  if (static_cast<int>(activation) < 0 || static_cast<int>(activation) > 3)
    throw ValueError("linear: activation must be 0 (none), 1 (relu), 2 (gelu) or 3 "
                     "(gelu_tanh), got " + std::to_string(static_cast<int>(activation)));
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
  check_activation(activation);
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

namespace xrt {

Tensor pack_linear_weight(const Tensor& weight) {
  if (weight.ndim() != 2)
    throw ValueError("pack_linear_weight: weight must be a matrix (out_features, "
                     "in_features), got shape " + shape_str(weight.shape()));
  if (!weight.device().is_cpu())
    throw ValueError("pack_linear_weight: packed weights are for the CPU, got a weight on " +
                     weight.device().str());
  if (weight.dtype() != DType::Float32)
    throw TypeError("pack_linear_weight: packed weights are float32, got " +
                    name_of(weight.dtype()) + " (convert with astype() first)");
  const int64_t n = weight.shape()[0], k = weight.shape()[1];
  const int64_t panels = (n + kLinearPanel - 1) / kLinearPanel;
  Tensor w = contiguous(weight);
  Tensor packed = full(Dims{panels, k, kLinearPanel}, Scalar::from_int(0), DType::Float32, kCPU);
  const float* src = reinterpret_cast<const float*>(w.data());
  float* dst = reinterpret_cast<float*>(packed.data());
  for (int64_t j = 0; j < n; ++j) {
    float* panel = dst + (j / kLinearPanel) * k * kLinearPanel + j % kLinearPanel;
    for (int64_t p = 0; p < k; ++p) panel[p * kLinearPanel] = src[j * k + p];
  }
  return packed;
}

Tensor linear_packed(const Tensor& x, const Tensor& packed, int64_t out_features,
                     const Tensor* bias, Activation activation) {
  check_same_device(x, packed, "linear");
  if (bias) check_same_device(x, *bias, "linear");
  if (packed.ndim() != 3 || packed.shape()[2] != kLinearPanel ||
      packed.dtype() != DType::Float32 || !packed.is_contiguous())
    throw ValueError("linear: a packed weight comes from pack_linear_weight, got a tensor of "
                     "shape " + shape_str(packed.shape()));
  const int64_t k = packed.shape()[1], n = out_features;
  if (n <= (packed.shape()[0] - 1) * kLinearPanel || n > packed.shape()[0] * kLinearPanel)
    throw ValueError("linear: " + std::to_string(n) + " output features do not fit a packed "
                     "weight of " + std::to_string(packed.shape()[0]) + " panels");
  if (x.ndim() < 1 || x.shape().back() != k)
    throw ValueError("linear: x must end in the weight's " + std::to_string(k) +
                     " features, got shape " + shape_str(x.shape()));
  if (x.dtype() != DType::Float32)
    throw TypeError("linear: a packed weight takes float32 inputs, got " + name_of(x.dtype()));
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != n || bias->dtype() != DType::Float32))
    throw ValueError("linear: bias must be float32 of shape (" + std::to_string(n) + ",), got " +
                     name_of(bias->dtype()) + " " + shape_str(bias->shape()));
  check_activation(activation);
  Dims batch(x.shape().begin(), x.shape().end() - 1);
  const int64_t m = shape_numel(batch);
  Tensor xc = contiguous(x);
  Tensor x2 = xc.as_strided(Dims{m, k}, Dims{k, 1}, xc.byte_offset());
  Tensor b = bias ? contiguous(*bias) : Tensor();
  Tensor out = empty(Dims{m, n}, DType::Float32, x.device());
  OpAttrs attrs;
  attrs.value = Scalar::from_int(static_cast<int64_t>(activation));
  const Tensor* in[] = {&x2, &packed, &b};
  KernelCall call{in, bias ? 3 : 2, &out, 1, &attrs};
  dispatch(linear_packed_op(), call);
  Dims shape = batch;
  shape.push_back(n);
  return out.as_strided(shape, contiguous_strides(shape), 0);
}

}  // namespace xrt
