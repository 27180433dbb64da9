// cpp/include/xpuruntime/cuda/attention.h: fused scaled dot-product attention through cuDNN's
// graph API (forward with the softmax statistics, and backward), for fp16 and bf16.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "xpuruntime/dtype.h"

namespace xrt::cuda {

/// cuDNN's version (e.g. 91900); CudaError saying how to install cuDNN when it is missing.
int cudnn_version();

/// One tensor of an attention call: sizes and strides in elements, in [B, H, S, D] order.
struct AttentionLayout {
  std::array<int64_t, 4> dims{};
  std::array<int64_t, 4> strides{};
};

/// What a plan is built for. The tensors, in this order:
/// forward q, k, v, o; backward q, k, v, o, do, dq, dk, dv; then the bias when `bias`.
/// q [B, H, Sq, D], k [B, H, Skv, D], v [B, H, Skv, Dv], o [B, H, Sq, Dv]; the bias an additive
/// float16/bfloat16 mask broadcast to [B, H, Sq, Skv] (zero strides where it broadcasts).
/// The softmax statistics (the log of each row's sum of exponentials, plus its maximum) are
/// float32 [B, H, Sq, 1], contiguous: the forward writes them when `stats`, the backward reads
/// them.
struct AttentionSpec {
  bool backward = false;
  DType dtype = DType::Float16;
  int device = 0;
  bool causal = false;  ///< key j is masked for query i when j > i (top-left aligned)
  bool stats = false;   ///< forward: also write the statistics
  bool bias = false;
  std::vector<AttentionLayout> tensors;
};

/// A built plan: its id for cudnn_attention_run and the workspace it needs (bytes).
struct AttentionPlan {
  int64_t id = -1;
  int64_t workspace_bytes = 0;
};

/// The plan for spec, built on the first call per spec and kept (building runs cuDNN's
/// heuristics and may compile kernels: tens to hundreds of milliseconds). ValueError for a
/// malformed spec; UnsupportedOperationError when cuDNN has no engine for it.
AttentionPlan cudnn_attention_plan(const AttentionSpec& spec);

/// Runs plan on stream: `pointers` in the spec's tensor order (16-byte aligned), `stats` the
/// statistics (null for a forward without them), `workspace` at least the plan's
/// workspace_bytes (null when that is 0), `scale` multiplies q·k before the softmax.
void cudnn_attention_run(int64_t plan, const std::vector<uintptr_t>& pointers, uintptr_t stats,
                         uintptr_t workspace, float scale, uintptr_t stream);

}  // namespace xrt::cuda
