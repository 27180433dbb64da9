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

}  // namespace xrt::cuda
