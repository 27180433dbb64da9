// cpp/include/xpuruntime/cuda/user_kernel.h: a user's kernel (RawKernel, ElementwiseKernel,
// ReductionKernel) on the JIT: compiled per device on first launch, launched from a packed
// argument buffer, so a launch from Python costs little more than cuLaunchKernel.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xpuruntime/cuda/jit.h"
#include "xpuruntime/runtime/stream.h"

namespace xrt::cuda {

/// Kernel arguments as cuLaunchKernel takes them: each value copied into one buffer at its
/// alignment, and a pointer to each. Reused across launches (clear() keeps the capacity).
class KernelArguments {
 public:
  void clear() {
    size_ = 0;
    offsets_.clear();
  }
  void add_pointer(const void* p) { add_bytes(&p, sizeof p, alignof(void*)); }
  /// Copies size bytes of value (a by-value argument: a scalar or a struct).
  void add_bytes(const void* value, size_t size, size_t alignment);
  size_t count() const { return offsets_.size(); }
  size_t bytes() const { return size_; }
  /// The pointers cuLaunchKernel takes; valid until the next add or clear.
  void** pointers();

 private:
  std::vector<std::max_align_t> storage_;
  size_t size_ = 0;
  std::vector<size_t> offsets_;
  std::vector<void*> pointers_;
};

/// A kernel of a user's source, found by name (extern "C") or by a lowered template name.
/// Compiled for the exact architecture of each device it launches on, through the JIT's
/// memory and disk caches; thread-safe.
class UserKernel {
 public:
  UserKernel(KernelSource source, std::string name);

  const std::string& name() const { return name_; }
  const KernelSource& source() const { return source_; }
  /// Whether the function of device index is compiled already (launch would not compile).
  bool compiled(int device) const {
    return device >= 0 && device < static_cast<int>(handles_.size()) &&
           handles_[static_cast<size_t>(device)].load(std::memory_order_acquire) != nullptr;
  }
  /// The function on device, compiled on first use (CudaError with NVRTC's log).
  Function function(Device device);
  /// Launches on stream (its device's function); CUDA's limits give a CudaError.
  void launch(Dim3 grid, Dim3 block, size_t shared_bytes, const Stream& stream,
              KernelArguments& args);
  /// A cuFuncGetAttribute value of the function on device (CU_FUNC_ATTRIBUTE_*).
  int attribute(Device device, int attribute);

 private:
  KernelSource source_;
  std::string name_;
  /// CUfunction per device index (xrt's device limit), null until compiled: read without
  /// a lock on every launch.
  std::array<std::atomic<void*>, 64> handles_{};
};

}  // namespace xrt::cuda
