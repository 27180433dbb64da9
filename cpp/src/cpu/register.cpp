// cpp/src/cpu/register.cpp: registers the built-in CPU kernels with the registry.
#include "cpu/kernels.h"
#include "xpuruntime/registry.h"

namespace xrt {
namespace {

DType output_dtype(const DTypeSignature& sig) { return sig.dtypes[sig.count - 1]; }

KernelInfo cpu_kernel(std::string op, std::string name, KernelFn run, std::string description,
                      DTypePredicate supports = {}, int priority = 0) {
  KernelInfo k;
  k.op = std::move(op);
  k.name = std::move(name);
  k.device = DeviceType::CPU;
  k.run = std::move(run);
  k.description = std::move(description);
  k.supports = std::move(supports);
  k.priority = priority;
  return k;
}

}  // namespace

void register_cpu_kernels(KernelRegistry& r) {
  r.add(cpu_kernel("copy", "native", cpu::copy_kernel, "strided copy with dtype conversion"));
  r.add(cpu_kernel("fill", "native", cpu::fill_kernel, "fill with a scalar"));
  r.add(cpu_kernel("arange", "native", cpu::arange_kernel, "start + i * step"));
  r.add(cpu_kernel("sum", "native", cpu::sum_kernel,
                   "pairwise/row-accumulating sum, fixed order",
                   [](const DTypeSignature& s) { return is_numeric(output_dtype(s)); }));
  for (int i = 0; i < cpu::kNumBinaryOps; ++i) {
    const cpu::BinaryOpEntry& op = cpu::kBinaryOps[i];
    r.add(cpu_kernel(op.name, "native", op.run, "vectorised strided loop",
                     [supports = op.supports](const DTypeSignature& s) {
                       return supports(output_dtype(s));
                     }));
  }
  r.add(cpu_kernel("matmul", "openblas", cpu::matmul_openblas,
                   "cblas ?gemm from scipy-openblas64",
                   [](const DTypeSignature& s) {
                     return cpu::matmul_openblas_supports(output_dtype(s));
                   },
                   /*priority=*/10));
  r.add(cpu_kernel("matmul", "native", cpu::matmul_native,
                   "blocked C++ (packed micro-kernel for float32/float64)",
                   [](const DTypeSignature& s) { return is_numeric(output_dtype(s)); }));
  cpu::register_linalg_kernels(r);
}

}  // namespace xrt
