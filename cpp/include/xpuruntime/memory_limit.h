// cpp/include/xpuruntime/memory_limit.h: LimitedMemory, the adaptor that caps what a
// RawMemory hands out (set_per_process_memory_limit / _fraction).
#pragma once
#include <atomic>

#include "xpuruntime/memory_resource.h"

namespace xrt {

/// Note [Memory limit]: the limit caps reserved bytes (what the caching allocator holds
/// from the device), as PyTorch's memory fraction does, so it sits under the allocator,
/// as RMM's limiting adaptor over an upstream resource: a segment past the limit is
/// refused as if the device were full, and the allocator answers that as it answers the
/// device (free its cache, retry once, then OutOfMemoryError naming the limit).
class LimitedMemory final : public RawMemory {
 public:
  explicit LimitedMemory(RawMemory& upstream) : upstream_(upstream) {}

  /// Caps the bytes held at once (0: no cap). Any thread; memory already held stays.
  void set_limit(size_t bytes) { limit_.store(bytes, std::memory_order_relaxed); }
  size_t limit() const override { return limit_.load(std::memory_order_relaxed); }
  /// Bytes handed out and not yet freed.
  size_t reserved() const { return reserved_; }

  void* allocate(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  Event create_event() override { return upstream_.create_event(); }
  void destroy_event(Event event) override { upstream_.destroy_event(event); }
  void record_event(Event event, const Stream& stream) override {
    upstream_.record_event(event, stream);
  }
  bool event_done(Event event) override { return upstream_.event_done(event); }
  void wait_event(Event event) override { upstream_.wait_event(event); }
  void synchronize() override { upstream_.synchronize(); }
  DeviceMemoryInfo memory_info() override { return upstream_.memory_info(); }

 private:
  RawMemory& upstream_;
  std::atomic<size_t> limit_{0};  // atomic: set from any thread, read under the user's lock
  size_t reserved_ = 0;
};

}  // namespace xrt
