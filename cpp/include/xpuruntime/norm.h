// cpp/include/xpuruntime/norm.h: the row operations of attention and transformer blocks as
// single ops (Note [Row ops] in cpp/src/core/norm_ops.cpp). Each returns x's shape in the
// promoted real floating dtype; float16 and bfloat16 compute in float32.
#pragma once
#include <utility>

#include "xpuruntime/tensor.h"

namespace xrt {

/// exp(x - max) / sum(exp(x - max)) along axis (log: x - max - log(sum)); a 0-d x is one
/// element. IndexError for an axis out of range, TypeError for non-float x.
Tensor softmax(const Tensor& x, int64_t axis, bool log);

/// (x - mean) / sqrt(var + eps) * weight + bias over the last normalized_ndim axes (mean
/// and the biased variance of those axes); weight and bias, each optional, have the shape
/// of those axes.
Tensor layer_norm(const Tensor& x, int64_t normalized_ndim, const Tensor* weight,
                  const Tensor* bias, double eps);

/// x / sqrt(mean(x^2) + eps) * weight over the last normalized_ndim axes.
Tensor rms_norm(const Tensor& x, int64_t normalized_ndim, const Tensor* weight, double eps);

/// (norm(x + residual), x + residual): a transformer block's residual add and the norm
/// after it in one kernel (layer_norm, or rms_norm when rms, which takes no bias); the sum
/// is rounded to the result's dtype before the norm reads it, as the two ops would.
std::pair<Tensor, Tensor> add_norm(const Tensor& x, const Tensor& residual,
                                   int64_t normalized_ndim, const Tensor* weight,
                                   const Tensor* bias, double eps, bool rms);

/// An uninitialised [B, H, Sq, dv] for the attention of a 4-D query q, laid out in q's order
/// of axes (size-1 axes first, the last axis last), as PyTorch's fused attention lays its
/// output out: for heads split from a [B, S, H, D] layout (exporters' transposes) it is
/// [B, S, H, dv] in memory, and merging the heads back is a view. ValueError unless q is 4-D.
Tensor empty_attention_output(const Tensor& q, int64_t dv);

/// out = softmax(q·kᵀ·scale + mask)·v in one kernel (Note [CPU attention]): q [B, H, Sq, D],
/// k [B, H, Skv, D], v [B, H, Skv, Dv], an additive mask [B, H, Sq, Skv] (any strides, zero
/// ones for broadcasting) or none, causal: query i sees keys 0..i. float32 or float64; out
/// is [B, H, Sq, Dv], writable, any strides on its first three axes, the last contiguous.
/// A row whose keys are all masked gives NaN.
void attention_rows(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                    bool causal, double scale, Tensor& out);

}  // namespace xrt
