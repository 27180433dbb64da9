// cpp/src/cuda/kernels.h: registration hooks of the CUDA kernel families (one per file).
#pragma once
#include "xpuruntime/registry.h"

namespace xrt::cuda {

/// The CPU kernel on host copies, for every op the CPU has (Note [Host fallback]).
void register_host_fallback_kernels(KernelRegistry& registry);

}  // namespace xrt::cuda
