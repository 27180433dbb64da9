// cpp/src/cuda/kernels.h: registration hooks of the CUDA kernel families (one per file).
#pragma once
#include <string>
#include <vector>

#include "cuda/jit.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {

/// The CPU kernel on host copies, for every op the CPU has (Note [Host fallback]).
void register_host_fallback_kernels(KernelRegistry& registry);

/// Every op of the elementwise tables, and where (Note [Elementwise launches]).
void register_elementwise_kernels(KernelRegistry& registry);

/// Compiles the dense kernel of every (op, dtype) of the family for device on `threads`
/// threads (tests and benchmarks use it to pay NVRTC's time once, in parallel).
void warm_elementwise_kernels(int device, unsigned threads);

/// Generated kernel sources for the compile-all check, named by op.
struct ElementwiseSample {
  std::string name;
  KernelSource source;
};
/// The elementwise family's sources, one per op: every dtype in the dense layout, and the
/// other layouts for the op's first dtype.
std::vector<ElementwiseSample> elementwise_kernel_samples();

}  // namespace xrt::cuda
