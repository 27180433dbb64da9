// cpp/src/cpu/unary_kernels.cpp: the unary elementwise kernels whose real loops need no
// libm (the table's math-library column; the others are built per ISA in math_kernels.cpp),
// one entry per row of XRT_UNARY_OPS.
#include "cpu/elementwise_loops.h"
#include "cpu/kernels.h"
#include "xpuruntime/elementwise.h"

namespace xrt::cpu {

#define XRT_UNARY_KERNEL(name, accepts, result, math_library, computes_in) \
  baseline::unary_entry<baseline::math::name,                              \
                        baseline::built_per_isa(MathLibrary::math_library), false>(),
const KernelFnPtr kUnaryKernels[] = {XRT_UNARY_OPS(XRT_UNARY_KERNEL)};
#undef XRT_UNARY_KERNEL

}  // namespace xrt::cpu
