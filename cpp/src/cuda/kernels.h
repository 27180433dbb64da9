// cpp/src/cuda/kernels.h: registration hooks of the CUDA kernel families (one per file).
#pragma once
#include "xpuruntime/registry.h"

namespace xrt::cuda {

/// copy (astype) and fill: cuda/copy_kernels.cpp.
void register_copy_kernels(KernelRegistry& registry);
/// sum, prod, mean, var, std, max, min, argmax, argmin, all, any, count_nonzero and
/// vector_norm: cuda/reduce_kernels.cpp.
void register_reduction_kernels(KernelRegistry& registry);
/// cumulative_sum and cumulative_prod: cuda/scan_kernels.cpp.
void register_scan_kernels(KernelRegistry& registry);
/// The CPU kernel on host copies, for every op the CPU has (Note [Host fallback]).
void register_host_fallback_kernels(KernelRegistry& registry);
/// matmul (cublas, cublaslt, native) and vecdot (cublas, native): cuda/matmul_kernels.cpp.
void register_matmul_kernels(KernelRegistry& registry);

}  // namespace xrt::cuda
