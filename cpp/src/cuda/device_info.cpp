// cpp/src/cuda/device_info.cpp: device properties from the driver's attributes.
#include "xpuruntime/cuda/runtime.h"

#include <array>
#include <cstdio>
#include <memory>
#include <mutex>

#include "cuda/graph.h"
#include "cuda/runtime.h"
#include "xpuruntime/profiler.h"

namespace xrt::cuda {
namespace {

DeviceProperties read_properties(int index) {
  CUdevice device;
  XRT_CU(cuDeviceGet, &device, index);
  auto attribute = [device](CUdevice_attribute a) {
    int value = 0;
    XRT_CU(cuDeviceGetAttribute, &value, a, device);
    return value;
  };
  DeviceProperties p;
  p.index = index;
  char name[256] = {};
  XRT_CU(cuDeviceGetName, name, static_cast<int>(sizeof name - 1), device);
  p.name = name;
  XRT_CU(cuDeviceTotalMem, &p.total_memory, device);

  CUuuid uuid{};
  XRT_CU(cuDeviceGetUuid, &uuid, device);
  auto byte = [&](int i) { return static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i])); };
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                byte(0), byte(1), byte(2), byte(3), byte(4), byte(5), byte(6), byte(7), byte(8),
                byte(9), byte(10), byte(11), byte(12), byte(13), byte(14), byte(15));
  p.uuid = text;
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.0",
                attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID) & 0xffff,
                attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) & 0xff,
                attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID) & 0xff);
  p.pci_bus_id = text;

  p.major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  p.minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  p.multi_processor_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  p.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p.max_threads_per_multi_processor = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  p.warp_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  p.max_shared_memory_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  p.max_shared_memory_per_multi_processor =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  p.l2_cache_size = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  p.clock_rate_khz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  p.memory_clock_rate_khz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  p.memory_bus_width = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);

  int cc = p.major * 10 + p.minor;
  p.supports_fp16 = cc >= 53;
  p.supports_int8 = cc >= 61;
  p.supports_bf16 = cc >= 80;
  p.supports_tf32 = cc >= 80;
  p.supports_fp8 = cc >= 89;
  return p;
}

}  // namespace

const DeviceProperties& device_properties(int device) {
  static std::mutex mutex;
  static std::array<std::unique_ptr<DeviceProperties>, kMaxDevices> cache;
  check_device(device);
  std::lock_guard lock(mutex);
  auto& slot = cache[device];
  if (!slot) slot = std::make_unique<DeviceProperties>(read_properties(device));
  return *slot;
}

size_t free_memory(int device) {
  activate(device);
  size_t free = 0, total = 0;
  XRT_CU(cuMemGetInfo, &free, &total);
  return free;
}

void synchronize_device(int device) {
  activate(device);
  refuse_while_capturing(device, "synchronize()");
  profiler::WaitScope wait(Device::cuda(device), profiler::Cause::Synchronize);
  XRT_CU(cuCtxSynchronize);
}

}  // namespace xrt::cuda
