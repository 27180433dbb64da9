// cpp/src/cuda/device_info.h: what a CUDA device is (name, memory, capability, features).
#pragma once
#include <cstddef>
#include <string>

namespace xrt::cuda {

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

}  // namespace xrt::cuda
