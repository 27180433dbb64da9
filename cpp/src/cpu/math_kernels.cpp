// cpp/src/cpu/math_kernels.cpp: the elementwise kernels that call libm (exp, log, sin, pow,
// ...), built once per target ISA: this file is the baseline build; math_kernels_avx2.cpp
// and math_kernels_avx512.cpp include it again with -march flags and their own namespace.
// With libmvec's SIMD versions declared (vector_math.h) their real loops vectorise.
#include "cpu/vector_math.h"
// (vector_math.h first: its declarations must precede <cmath>'s uses.)
#include "cpu/elementwise_loops.h"
#include "cpu/kernels.h"
#include "xpuruntime/elementwise.h"

namespace xrt::cpu::XRT_ISA_NS {

#define XRT_UNARY_KERNEL(name, accepts, result, math_library, computes_in) \
  unary_entry<math::name, built_per_isa(MathLibrary::math_library), true>(),
const KernelFnPtr kUnaryMath[] = {XRT_UNARY_OPS(XRT_UNARY_KERNEL)};
#undef XRT_UNARY_KERNEL

#define XRT_BINARY_KERNEL(name, accepts, result, math_library, computes_in) \
  binary_entry<math::name, built_per_isa(MathLibrary::math_library), true>(),
const KernelFnPtr kBinaryMath[] = {XRT_BINARY_OPS(XRT_BINARY_KERNEL)};
#undef XRT_BINARY_KERNEL

}  // namespace xrt::cpu::XRT_ISA_NS
