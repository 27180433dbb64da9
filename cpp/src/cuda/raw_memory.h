// cpp/src/cuda/raw_memory.h: the driver as the caching allocator's RawMemory: device memory
// (cuMemAlloc) or pinned host memory (cuMemHostAlloc), with events of one device.
#pragma once
#include "cuda/driver.h"
#include "xpuruntime/memory_resource.h"

namespace xrt::cuda {

/// Events on device's streams; the memory is the subclass's.
class DriverMemory : public RawMemory {
 public:
  explicit DriverMemory(int device) : device_(device) {}
  Event create_event() override;
  void destroy_event(Event event) override;
  void record_event(Event event, const Stream& stream) override;
  bool event_done(Event event) override;
  void wait_event(Event event) override;
  void synchronize() override;

 protected:
  int device_;
};

class DeviceMemory final : public DriverMemory {
 public:
  using DriverMemory::DriverMemory;
  void* allocate(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  DeviceMemoryInfo memory_info() override;

 private:
  size_t total_ = 0;
};

/// Page-locked, portable host memory (copies to and from it run at full bus speed).
class PinnedHostMemory final : public DriverMemory {
 public:
  using DriverMemory::DriverMemory;
  void* allocate(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  void synchronize() override {}  // cuMemFreeHost waits for copies itself
  DeviceMemoryInfo memory_info() override;  // the host's
};

}  // namespace xrt::cuda
