// cpp/src/cuda/register.cpp: the built-in CUDA kernels, one line per family, registered with
// the registry from here. Registering loads nothing: NVRTC compiles a kernel on its first call.
#include "cuda/kernels.h"
#include "xpuruntime/registry.h"

namespace xrt {

KernelInfo cuda::kernel_info(std::string op, std::string name, KernelFn run,
                             std::string description, DTypePredicate supports, int priority) {
  KernelInfo k;
  k.op = std::move(op);
  k.name = std::move(name);
  k.device = DeviceType::CUDA;
  k.priority = priority;
  k.supports = std::move(supports);
  k.run = std::move(run);
  k.description = std::move(description);
  return k;
}

void cuda::register_kernels(KernelRegistry& registry) {
  cuda::register_copy_kernels(registry);
  cuda::register_elementwise_kernels(registry);
  cuda::register_reduction_kernels(registry);
  cuda::register_scan_kernels(registry);
  cuda::register_sort_kernels(registry);
  cuda::register_creation_kernels(registry);
  cuda::register_index_kernels(registry);
  cuda::register_mask_kernels(registry);
  cuda::register_norm_kernels(registry);
  cuda::register_set_kernels(registry);
  cuda::register_manipulation_kernels(registry);
  cuda::register_matmul_kernels(registry);
  cuda::register_fft_kernels(registry);
  cuda::register_linalg_kernels(registry);
  cuda::register_host_fallback_kernels(registry);  // last resort, lowest priority
}

}  // namespace xrt

XRT_REGISTER_KERNELS(xrt::cuda::register_kernels);
