// cpp/include/xpuruntime/backend.h: what a device backend lends the core. The core is
// device-independent; a backend (CUDA) registers these at start-up, and the core reaches the
// device only through them.
#pragma once
#include <cstddef>
#include <memory>

#include "xpuruntime/device.h"
#include "xpuruntime/storage.h"

namespace xrt {

struct DeviceBackend {
  /// A new buffer of nbytes on device, ordered on the device's current stream.
  std::shared_ptr<Storage> (*allocate)(size_t nbytes, Device device) = nullptr;
  /// Copies nbytes between two buffers, either of which may be host memory, in order on the
  /// current stream of the backend's device. Returns once the bytes can be read when the
  /// destination is host memory; otherwise it may return before the copy ran.
  void (*copy_bytes)(void* dst, Device dst_device, const void* src, Device src_device,
                     size_t nbytes) = nullptr;
  /// Waits for all work queued on device.
  void (*synchronize)(Device device) = nullptr;
  /// Why the backend cannot be used here ("" when it can).
  const char* (*unavailable_reason)() = nullptr;
};

/// Registered by the backend; replaces any earlier registration.
void register_backend(DeviceType type, const DeviceBackend& backend);
/// The backend of a device type; CudaError naming why when there is none or it is unusable.
const DeviceBackend& backend(DeviceType type);

/// The CUDA backend (cuda/backend.cpp): cheap, and safe on a machine without CUDA (nothing
/// is loaded until a CUDA tensor is asked for).
void register_cuda_backend();
class KernelRegistry;
/// The built-in CUDA kernels (cuda/register.cpp); registering compiles nothing.
void register_cuda_kernels(KernelRegistry& registry);

}  // namespace xrt
