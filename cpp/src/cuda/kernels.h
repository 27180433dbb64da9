// cpp/src/cuda/kernels.h: registration hooks of the CUDA kernel families (one per file).
#pragma once
#include "xpuruntime/registry.h"

namespace xrt::cuda {

void register_copy_kernels(KernelRegistry& registry);  // copy, fill

}  // namespace xrt::cuda
