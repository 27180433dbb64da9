// cpp/include/xpuruntime/cuda/jit.h: the public face of the NVRTC JIT: compile CUDA C++ for a
// device's exact architecture (through the memory and disk caches), get a function, launch
// it on a Stream. The built-in kernel families, user kernels and the profiler all use it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xpuruntime/runtime/stream.h"

namespace xrt::cuda {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// What to compile: a source, and NVRTC options beyond the defaults (-arch=sm_XY for the
/// device, -std=c++17, --fmad=false unless an option sets -fmad, never --use_fast_math).
/// Sources may #include the headers of cpp/kernels as "xrt/<name>.cuh".
struct KernelSource {
  std::string source;
  std::vector<std::string> options;
  /// C++ names of template kernels to instantiate ("scale<float>"); lowered_names() gives
  /// their mangled names, which compile_function finds.
  std::vector<std::string> name_expressions = {};
};

/// A kernel compiled and loaded on one device. Kernels are looked up by name, so give each
/// one extern "C" linkage in its source. The module stays loaded for the process's life.
struct Function {
  void* handle = nullptr;  ///< the CUfunction
  Device device;
  std::string name;
};

/// The kernel `name` of `source`, compiled for device. Compiled by NVRTC on first use, then
/// found in memory, or on disk across processes. CudaError carrying NVRTC's log when the
/// source does not compile or has no kernel of that name.
Function compile_function(Device device, const KernelSource& source, const std::string& name);

/// The address and size of the global variable `name` (a __device__ or __constant__ one, or
/// the lowered name of a template's) in the module of source on device: the module its
/// kernels run from, loaded first if none of them has been. CudaError when it has none.
std::pair<void*, size_t> module_global(Device device, const KernelSource& source,
                                       const std::string& name);

/// Launches fn on stream (a stream of fn's device; ValueError otherwise); args points at
/// each kernel argument, in order, as cuLaunchKernel takes them. An empty grid launches
/// nothing. The launch is asynchronous.
void launch(const Function& fn, Dim3 grid, Dim3 block, size_t shared_bytes,
            const Stream& stream, void** args);

/// Compiles source to a cubin for an architecture ("sm_90") without a GPU or driver; CudaError
/// with NVRTC's log on failure. `name` (the kernel's, for messages) is optional.
std::string compile_cubin(const KernelSource& source, const std::string& arch,
                          const std::string& name = "");
/// The mangled names of source.name_expressions, in order, as NVRTC lowers them when it
/// compiles source for arch (through the caches: a cached program is not compiled again).
std::vector<std::string> lowered_names(const KernelSource& source, const std::string& arch);
/// compile_cubin through the memory and disk caches (no device needed).
std::string cached_cubin(const KernelSource& source, const std::string& arch,
                         const std::string& name = "");

/// "sm_90" for the device's compute capability.
const std::string& device_arch(int device);

/// Counters of the caches, for tests and `xrt.cuda.jit_cache_info()`.
struct JitCacheInfo {
  uint64_t compiles = 0;     ///< NVRTC compilations
  uint64_t memory_hits = 0;  ///< functions or cubins found in memory
  uint64_t disk_hits = 0;    ///< cubins read from disk
  uint64_t disk_writes = 0;  ///< cubins written to disk
  uint64_t disk_rejects = 0; ///< files found unusable (truncated, corrupt, other key)
};
JitCacheInfo jit_cache_info();

/// Forgets every compiled kernel held in memory (the disk cache stays). Modules stay
/// loaded, since launches in flight or captured in graphs may still use them.
void clear_jit_memory_cache();

/// The disk cache's folder, "" when the disk cache is off (or no home folder is known).
std::string kernel_cache_dir();

/// NVRTC's version, e.g. "13.0"; CudaError when NVRTC cannot be loaded.
std::string nvrtc_version();

// ---- The compile-all check ----------------------------------------------------------------
// Every built-in kernel family lists the sources it generates for a representative set of
// specialisations, so CI compiles them all (for sm_90, no GPU needed) and a source NVRTC
// rejects fails the tests, not a user's first call.

struct KernelCheckFailure {
  std::string family, name, error;
};
struct KernelCheckResult {
  int compiled = 0;  ///< sources compiled, successfully or not
  std::vector<KernelCheckFailure> failures;
};

/// Compiles every registered sample for arch (no cache), on several threads; `family`
/// non-empty restricts it to one family.
KernelCheckResult compile_kernel_samples(const std::string& arch, const std::string& family = "");

}  // namespace xrt::cuda
