// cpp/src/core/linear_internal.h: what the devices' linear kernels share with the op
// (cpp/src/core/linear_ops.cpp, Note [Fused linear]).
#pragma once
#include "xpuruntime/kernel.h"
#include "xpuruntime/ops.h"

namespace xrt {

/// Output features per panel of a packed linear weight (Note [Packed linear weights]).
constexpr int64_t kLinearPanel = 32;

/// The activation a linear call asks for (its attrs).
Activation activation_of(const KernelCall& call);
/// The activation on out, in place.
void apply_activation(Activation activation, Tensor& out);
/// linear from the matmul op, an in-place bias add and the activation in place: the
/// kernel of every device, and the fallback of the fused ones.
void linear_composite_kernel(const KernelCall& call);

}  // namespace xrt
