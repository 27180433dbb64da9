// cpp/src/cuda/launch.cpp: the launch of a compiled kernel, through the driver's
// cuLaunchKernelEx where it has it (the kernels themselves come from cuda/jit.cpp).
#include "cuda/jit.h"
#include "cuda/runtime.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {

// Note [Launching through cuLaunchKernelEx]: the driver's cuLaunchKernelEx (CUDA 11.8+)
// takes the launch as one struct. Timed on an H100 host behind a busy GPU (Note [Host cost
// behind a busy GPU] in host_costs.cpp), the same empty kernel with an elementwise launch's
// 96 argument bytes launched 0.02-0.28 us cheaper through it than through cuLaunchKernel in
// 5 of 6 processes (2.5-3.6 us a launch), and never measurably dearer; so every launch
// takes it where the driver has it.
void launch(CUfunction fn, Dim3 grid, Dim3 block, size_t shared_bytes, CUstream stream,
            void** args) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
  const DriverApi& api = driver();
  if (api.cuLaunchKernelEx) {
    CUlaunchConfig config{grid.x, grid.y, grid.z, block.x, block.y, block.z,
                          static_cast<unsigned>(shared_bytes), stream, nullptr, 0};
    check(api.cuLaunchKernelEx(&config, fn, args, nullptr), "cuLaunchKernelEx");
    return;
  }
  check(api.cuLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                           static_cast<unsigned>(shared_bytes), stream, args, nullptr),
        "cuLaunchKernel");
}

void launch(const Function& fn, Dim3 grid, Dim3 block, size_t shared_bytes,
            const Stream& stream, void** args) {
  if (!fn.handle) throw ValueError("launch: the function was never compiled");
  if (stream.device() != fn.device)
    throw ValueError("launch: the kernel " + fn.name + " was compiled for " + fn.device.str() +
                     ", the stream belongs to " + stream.device().str());
  activate(fn.device.index);
  launch(static_cast<CUfunction>(fn.handle), grid, block, shared_bytes,
         static_cast<CUstream>(stream.handle()), args);
}

}  // namespace xrt::cuda
