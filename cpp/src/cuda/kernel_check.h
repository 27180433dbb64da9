// cpp/src/cuda/kernel_check.h: every CUDA kernel family lists the sources it generates for a
// representative set of specialisations, so CI compiles them all (for sm_90, no GPU needed)
// and a source that NVRTC rejects fails the build's tests, not a user's first call.
#pragma once
#include <string>
#include <vector>

#include "cuda/jit.h"

namespace xrt::cuda {

struct KernelSample {
  std::string name;  ///< the kernel's name in source (for messages)
  KernelSource source;
};
using KernelSampleFn = std::vector<KernelSample> (*)();

/// Called by a family's registration function (cuda/register.cpp runs them all).
void register_kernel_samples(std::string family, KernelSampleFn samples);

struct KernelCheckFailure {
  std::string family, name, error;
};
struct KernelCheckResult {
  int compiled = 0;  ///< sources compiled, successfully or not
  std::vector<KernelCheckFailure> failures;
};

/// Compiles every registered sample for arch with compile_cubin (no cache), on several
/// threads; `family` non-empty restricts it to one family.
KernelCheckResult compile_kernel_samples(const std::string& arch, const std::string& family = "");

}  // namespace xrt::cuda
