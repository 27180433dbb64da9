// cpp/src/cpu/unary_kernels.cpp: the unary elementwise kernels that need no libm (the
// libm ones are built per ISA in math_kernels.cpp), one entry per row of XRT_UNARY_OPS.
#include "cpu/elementwise_loops.h"
#include "cpu/kernels.h"
#include "xpuruntime/elementwise.h"

namespace xrt::cpu {

#define XRT_UNARY_KERNEL(name, category, result) \
  baseline::unary_entry<baseline::math::name, false>(),
const KernelFnPtr kUnaryKernels[] = {XRT_UNARY_OPS(XRT_UNARY_KERNEL)};
#undef XRT_UNARY_KERNEL

}  // namespace xrt::cpu
