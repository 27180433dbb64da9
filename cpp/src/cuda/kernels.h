// cpp/src/cuda/kernels.h: registration hooks of the CUDA kernel families (one per file).
#pragma once
#include "xpuruntime/registry.h"

namespace xrt::cuda {

/// copy (astype) and fill: cuda/copy_kernels.cpp.
void register_copy_kernels(KernelRegistry& registry);
/// The CPU kernel on host copies, for every op the CPU has (Note [Host fallback]).
void register_host_fallback_kernels(KernelRegistry& registry);
/// matmul (cublas, cublaslt, native) and vecdot (cublas, native): cuda/matmul_kernels.cpp.
void register_matmul_kernels(KernelRegistry& registry);

}  // namespace xrt::cuda
