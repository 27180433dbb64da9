// cpp/include/xpuruntime/cuda/runtime.h: CUDA devices (what each is, the current one,
// waiting for one) and streams of other libraries. Streams and events themselves are the
// device-neutral xrt::Stream and xrt::Event (xpuruntime/runtime/).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "xpuruntime/runtime/stream.h"

namespace xrt::cuda {

/// Devices the driver sees (0 without CUDA; never throws).
int device_count();
/// ValueError when device is not an index this machine has (CudaError when it has none).
void check_device(int device);
/// The calling thread's current device (for "cuda" without an index); 0 until set.
int current_device();
/// Makes device current for the calling thread and its context current.
void use_device(int device);

/// The fixed properties of a device, read once from the driver.
struct DeviceProperties {
  int index = 0;
  std::string name;
  std::string uuid;        ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints
  std::string pci_bus_id;  ///< "0000:1b:00.0"
  size_t total_memory = 0;
  int major = 0, minor = 0;  ///< compute capability
  int multi_processor_count = 0;
  int max_threads_per_block = 0;
  int max_threads_per_multi_processor = 0;
  int warp_size = 0;
  int max_shared_memory_per_block = 0;        ///< bytes, with the opt-in (dynamic) maximum
  int max_shared_memory_per_multi_processor = 0;
  int l2_cache_size = 0;                      ///< bytes
  int clock_rate_khz = 0;
  int memory_clock_rate_khz = 0;
  int memory_bus_width = 0;                   ///< bits
  // Native arithmetic the tensor paths can count on, from the compute capability.
  bool supports_fp16 = false;  ///< sm_53+
  bool supports_bf16 = false;  ///< sm_80+
  bool supports_int8 = false;  ///< dp4a, sm_61+
  bool supports_tf32 = false;  ///< tensor cores, sm_80+
  bool supports_fp8 = false;   ///< e4m3/e5m2 tensor cores, sm_89+
};

/// The properties of device (ValueError/CudaError for a device that does not exist); cached.
const DeviceProperties& device_properties(int device);

/// Bytes free on device now (makes its context current).
size_t free_memory(int device);

/// Waits for all work on device, with a clear error (not a broken capture) while one of
/// our graphs is capturing there.
void synchronize_device(int device);

/// Borrows a stream of another library: a handle (0 and 1 both name the legacy default
/// stream, 2 the per-thread default) and, when known, its device (-1: the device whose
/// primary context owns the stream, or the current device for the default streams).
Stream external_stream(uintptr_t handle, int device = -1);
/// The per-thread default stream of device.
Stream per_thread_default_stream(int device);
/// A new blocking stream of device (pooled like the others): the legacy default stream
/// waits for its work and it for the legacy stream's, so the two need no events between
/// them (Note [ORT on our stream]).
Stream create_blocking_stream(int device);

}  // namespace xrt::cuda
