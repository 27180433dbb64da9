// cpp/src/cuda/host_costs.cpp: what the pieces every CUDA op pays cost the host, measured in
// C++ (benchmarks/bench_cuda_host_cost.py prints them beside whole ops).
#include <chrono>

#include "cuda/allocator.h"
#include "cuda/jit.h"
#include "cuda/runtime.h"
#include "xpuruntime/cuda/libraries.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {

HostCosts measure_host_costs(int count) {
  if (count <= 0) throw ValueError("count must be positive");
  using clock = std::chrono::steady_clock;
  auto per_call = [count](auto&& body) {
    body();  // first call outside the timing (compiles, creates, warms)
    auto start = clock::now();
    for (int i = 0; i < count; ++i) body();
    return std::chrono::duration<double, std::nano>(clock::now() - start).count() / count;
  };
  int device = current_device();
  activate(device);
  CUstream stream = current_stream(device);
  CUfunction empty = jit_function(
      device, {"extern \"C\" __global__ void xrt_empty(float* a, const float* b, long long n) {}", {}},
      "xrt_empty");
  float* a = nullptr;
  long long n = 16;
  void* args[] = {&a, &a, &n};
  HostCosts costs;
  costs.launch_ns = per_call([&] { launch(empty, {1}, {128}, 0, stream, args); });
  costs.activate_ns = per_call([&] { activate(device); });
  costs.current_stream_ns = per_call([&] { (void)current_stream(device); });
  costs.allocate_free_ns = per_call([&] { (void)allocate_storage(64, device, stream); });
  return costs;
}

}  // namespace xrt::cuda
