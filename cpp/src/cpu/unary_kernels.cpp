// cpp/src/cpu/unary_kernels.cpp: the unary elementwise kernels, one row per op of the
// XRT_UNARY_OPS table (core/elementwise_ops.cpp holds their dtype rules).
#include "cpu/elementwise_loops.h"
#include "cpu/kernels.h"
#include "xpuruntime/elementwise.h"

namespace xrt::cpu {

void throw_unsupported(const char* what, DType dtype) {
  throw TypeError(std::string(what) + " has no CPU kernel for " +
                  std::string(dtype_info(dtype).name));
}

#define XRT_UNARY_KERNEL(name, category, result) unary_kernel<math::name>,
const KernelFnPtr kUnaryKernels[] = {XRT_UNARY_OPS(XRT_UNARY_KERNEL)};
#undef XRT_UNARY_KERNEL

}  // namespace xrt::cpu
