// cpp/src/cpu/kernels.h: the built-in CPU kernels, one family per file, registered by
// register.cpp. Each takes a KernelCall whose outputs the op definition allocated.
#pragma once
#include "xpuruntime/cpu.h"
#include "xpuruntime/kernel.h"
#include "xpuruntime/registry.h"

namespace xrt {
class KernelRegistry;
}

namespace xrt::cpu {

void copy_kernel(const KernelCall& call);    // out[...] = cast(in[...]), any strides
void fill_kernel(const KernelCall& call);    // out[...] = attrs.value
void arange_kernel(const KernelCall& call);  // out[i] = attrs.value + i * attrs.step

using KernelFnPtr = void (*)(const KernelCall& call);

/// The registry entry of a built-in CPU kernel (every family registers through this).
KernelInfo kernel_info(std::string op, std::string name, KernelFn run, std::string description,
                       DTypePredicate supports = {}, int priority = 0);

/// Elementwise kernels indexed by UnaryOp / BinaryOp (xpuruntime/elementwise.h); nullptr
/// where the op calls libm: those come from the per-ISA tables below.
extern const KernelFnPtr kUnaryKernels[];
extern const KernelFnPtr kBinaryKernels[];
/// The row ops per ISA (norm_kernels.cpp): softmax, log_softmax, layer_norm, rms_norm, and
/// attention_rows.
namespace baseline { extern const KernelFnPtr kUnaryMath[], kBinaryMath[], kRowKernels[]; }
#ifdef XRT_X86_ISA_VARIANTS
namespace avx2 { extern const KernelFnPtr kUnaryMath[], kBinaryMath[], kRowKernels[]; }
namespace avx512 { extern const KernelFnPtr kUnaryMath[], kBinaryMath[], kRowKernels[]; }
#endif
void where_kernel(const KernelCall& call);  // out = in0 ? in1 : in2

void register_reduction_kernels(KernelRegistry& registry);  // sum ... std, argmax, ...
void register_scan_kernels(KernelRegistry& registry);       // cumulative_sum/prod

void register_index_kernels(KernelRegistry& registry);  // index_kernels.cpp
void register_creation_kernels(KernelRegistry& registry);  // linspace, tril, triu
void register_manipulation_kernels(KernelRegistry& registry);  // repeat
void register_linalg_kernels(KernelRegistry& registry);  // linalg_kernels.cpp

void matmul_native(const KernelCall& call);
/// linear on a packed float32 weight (Note [Packed linear weights]): portable loops, and
/// AVX-512 register tiles where the CPU has them.
void linear_packed_kernel(const KernelCall& call);
#ifdef XRT_X86_ISA_VARIANTS
namespace avx512 { void linear_packed_kernel(const KernelCall& call); }
#endif
bool matmul_openblas_supports(DType dtype);
void matmul_openblas(const KernelCall& call);

void register_sorting_kernels(KernelRegistry& registry);  // sort_kernels.cpp
/// Every built-in CPU kernel (register.cpp registers it with XRT_REGISTER_KERNELS).
void register_kernels(KernelRegistry& registry);
void register_fft_kernels(KernelRegistry& registry);  // fft_kernels.cpp

}  // namespace xrt::cpu
