// cpp/src/cpu/kernels.h: the built-in CPU kernels, one family per file, registered by
// register.cpp. Each takes a KernelCall whose outputs the op definition allocated.
#pragma once
#include "xpuruntime/cpu.h"
#include "xpuruntime/kernel.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {

void copy_kernel(const KernelCall& call);    // out[...] = cast(in[...]), any strides
void fill_kernel(const KernelCall& call);    // out[...] = attrs.value
void arange_kernel(const KernelCall& call);  // out[i] = attrs.value + i * attrs.step
void sum_kernel(const KernelCall& call);     // out = sum of in over attrs.axes (same dtype)

using KernelFnPtr = void (*)(const KernelCall& call);

/// Elementwise kernels indexed by UnaryOp / BinaryOp (xpuruntime/elementwise.h); nullptr
/// where the op calls libm: those come from the per-ISA tables below.
extern const KernelFnPtr kUnaryKernels[];
extern const KernelFnPtr kBinaryKernels[];
namespace baseline { extern const KernelFnPtr kUnaryMath[], kBinaryMath[]; }
#ifdef XRT_X86_ISA_VARIANTS
namespace avx2 { extern const KernelFnPtr kUnaryMath[], kBinaryMath[]; }
namespace avx512 { extern const KernelFnPtr kUnaryMath[], kBinaryMath[]; }
#endif
void where_kernel(const KernelCall& call);  // out = in0 ? in1 : in2

void register_linalg_kernels(KernelRegistry& registry);  // linalg_kernels.cpp

void matmul_native(const KernelCall& call);
bool matmul_openblas_supports(DType dtype);
void matmul_openblas(const KernelCall& call);

}  // namespace xrt::cpu
