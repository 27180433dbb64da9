// cpp/src/cuda/kernels.h: registration hooks of the CUDA kernel families (one per file).
#pragma once
#include "xpuruntime/registry.h"

namespace xrt::cuda {

/// matmul (cublas, cublaslt, native) and vecdot (cublas, native): cuda/matmul_kernels.cpp.
void register_matmul_kernels(KernelRegistry& registry);

}  // namespace xrt::cuda
