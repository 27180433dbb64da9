// cpp/src/core/linear_internal.h: what the devices' linear kernels share with the op
// (cpp/src/core/linear_ops.cpp, Note [Fused linear]).
#pragma once
#include "xpuruntime/kernel.h"
#include "xpuruntime/ops.h"

namespace xrt {

/// Output features per panel of a packed linear weight (Note [Packed linear weights]).
constexpr int64_t kLinearPanel = 32;

/// A linear_packed call's operands (Note [Packed linear weights]): x (m, k), the panels of
/// the weight, the bias or null, and the output (m, n), all float32 and contiguous.
struct PackedLinearOperands {
  int64_t m, n, k;
  const float* x;
  const float* panels;
  const float* bias;
  float* out;
  explicit PackedLinearOperands(const KernelCall& call)
      : m(call.out().shape()[0]), n(call.out().shape()[1]), k(call.in(0).shape()[1]),
        x(reinterpret_cast<const float*>(call.in(0).data())),
        panels(reinterpret_cast<const float*>(call.in(1).data())),
        bias(call.num_inputs > 2 ? reinterpret_cast<const float*>(call.in(2).data()) : nullptr),
        out(reinterpret_cast<float*>(call.out().data())) {}
};

/// The activation a linear call asks for (its attrs).
Activation activation_of(const KernelCall& call);
/// The activation on out, in place.
void apply_activation(Activation activation, Tensor& out);
/// linear from the matmul op, an in-place bias add and the activation in place: the
/// kernel of every device, and the fallback of the fused ones.
void linear_composite_kernel(const KernelCall& call);

}  // namespace xrt
