// cpp/include/xpuruntime/cuda/libraries.h: knobs and counters of what the CUDA backend runs:
// cuFFT's plan caches, the SVD's Jacobi sweeps, kernel warm-up, and the host cost of the
// pieces every CUDA op pays.
#pragma once

#include <functional>
#include <cstdint>

namespace xrt::cuda {

/// cuFFT's version (e.g. 12000); CudaError saying how to install cuFFT when it is missing.
int cufft_version();

/// The plan caches, for tests and `xrt.cuda.cufft_plan_cache_info()`.
struct FftPlanCacheInfo {
  int64_t size = 0;      ///< plans held on the device
  int64_t capacity = 0;  ///< most plans held per device
  uint64_t hits = 0, misses = 0, evictions = 0;
};
FftPlanCacheInfo fft_plan_cache_info(int device);
/// Plans held per device from now on (0 keeps none); shrinking evicts the oldest.
void set_fft_plan_cache_capacity(int64_t capacity);
/// Destroys every cached plan on every device (plans in use finish first).
void clear_fft_plan_cache();

/// A test hook (`_core.cuda._svd_jacobi_max_sweeps`): one sweep leaves most matrices
/// unconverged, which exercises the fallback. Returns the previous limit (0: cuSOLVER's).
int set_svd_jacobi_max_sweeps(int sweeps);
int svd_jacobi_max_sweeps();

/// Compiles the dense kernel of every elementwise (op, dtype) on device, on `threads`
/// threads, so tests and benchmarks pay NVRTC's time once.
void warm_elementwise_kernels(int device, unsigned threads);

/// Host nanoseconds per call of the pieces every CUDA op pays, on the current device and
/// stream, measured in C++ so that no Python is counted. Launching pieces are timed in
/// bursts while the GPU is held busy (Note [Host cost behind a busy GPU] in host_costs.cpp).
struct HostCosts {
  double launch_ns = 0;          ///< launch() of an empty kernel (24 argument bytes)
  double launch_args96_ns = 0;   ///< cuLaunchKernel with an elementwise launch's 96 argument bytes
  double launch_extra_ns = 0;    ///< those 96 bytes as one buffer (CU_LAUNCH_PARAM_BUFFER_*)
  double launch_ex_ns = -1;      ///< cuLaunchKernelEx, no attributes (-1: the driver lacks it)
  double launch_add96_ns = 0;    ///< launch() of a kernel that adds (96 argument bytes), as ours
  double launch_loop_ns = 0;     ///< empty launches in a plain loop: the GPU's pace, once full
  double activate_ns = 0;        ///< making the device's context current
  double current_stream_ns = 0;  ///< reading the current stream
  double allocate_free_ns = 0;   ///< a cached 64-byte allocation and its free
  double empty_ns = 0;           ///< empty({16}, float32) on the device, and its free
  double add_inplace_ns = 0;     ///< binary_inplace(add) of 16 float32: the whole op, in C++
  double add_ns = 0;             ///< binary(add) of 16 float32, its output freed: likewise
  double burst_op_ns = -1;       ///< the caller's burst, per op (-1: none given)
};
/// `burst`, when given, runs `burst_ops` ops (a Python loop of `a + b`); it is timed in the
/// same rounds as the bare launches, taking turns with them, so that the host's drift enters
/// neither difference.
HostCosts measure_host_costs(int count, const std::function<void()>& burst = {},
                             int burst_ops = 0);

}  // namespace xrt::cuda
