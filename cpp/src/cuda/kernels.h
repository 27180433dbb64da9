// cpp/src/cuda/kernels.h: registration hooks of the CUDA kernel families (one per file).
#pragma once
#include "xpuruntime/cuda/libraries.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {

/// The registry entry of a built-in CUDA kernel (every family registers through this).
KernelInfo kernel_info(std::string op, std::string name, KernelFn run, std::string description,
                       DTypePredicate supports = {}, int priority = 0);

/// copy (astype) and fill: cuda/copy_kernels.cpp.
void register_copy_kernels(KernelRegistry& registry);
/// sum, prod, mean, var, std, max, min, argmax, argmin, all, any, count_nonzero and
/// vector_norm: cuda/reduce_kernels.cpp.
void register_reduction_kernels(KernelRegistry& registry);
/// cumulative_sum and cumulative_prod: cuda/scan_kernels.cpp.
void register_scan_kernels(KernelRegistry& registry);
/// sort, argsort and searchsorted: cuda/sort_kernels.cpp.
void register_sort_kernels(KernelRegistry& registry);
/// arange, linspace, tril, triu, gather, scatter and take_along_axis:
/// cuda/index_kernels.cpp.
void register_index_kernels(KernelRegistry& registry);
/// nonzero_count, nonzero, masked_gather and masked_scatter: cuda/mask_kernels.cpp.
void register_mask_kernels(KernelRegistry& registry);
/// softmax, log_softmax, layer_norm and rms_norm: cuda/norm_kernels.cpp.
void register_norm_kernels(KernelRegistry& registry);
/// unique and isin: cuda/set_kernels.cpp.
void register_set_kernels(KernelRegistry& registry);
/// repeat: cuda/manipulation_kernels.cpp.
void register_manipulation_kernels(KernelRegistry& registry);
/// arange, linspace, tril, triu: cuda/creation_kernels.cpp.
void register_creation_kernels(KernelRegistry& registry);
/// fft_c2c, fft_r2c, fft_c2r (cuFFT), fftfreq and rfftfreq: cuda/fft_kernels.cpp.
void register_fft_kernels(KernelRegistry& registry);
/// cholesky, det, slogdet, inv, solve, qr (cuda/linalg_kernels.cpp), eigh, eig, svd, pinv,
/// matrix_rank (cuda/linalg_spectral_kernels.cpp) through cuSOLVER, and cross and outer
/// (cuda/linalg_vector_kernels.cpp).
void register_linalg_kernels(KernelRegistry& registry);
/// The CPU kernel on host copies, for every op the CPU has (Note [Host fallback]).
void register_host_fallback_kernels(KernelRegistry& registry);
/// matmul (cublas, cublaslt, native) and vecdot (cublas, native): cuda/matmul_kernels.cpp.
void register_matmul_kernels(KernelRegistry& registry);

/// Every op of the elementwise tables, and where (Note [Elementwise launches]).
void register_elementwise_kernels(KernelRegistry& registry);

// warm_elementwise_kernels: xpuruntime/cuda/libraries.h.

/// Every built-in CUDA kernel (register.cpp registers it with XRT_REGISTER_KERNELS).
void register_kernels(KernelRegistry& registry);

}  // namespace xrt::cuda
