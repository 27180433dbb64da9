// cpp/include/xpuruntime/memory_resource.h: the bottom of the memory stack: RawMemory, the
// raw memory and events a device lends the caching allocator.
#pragma once
#include <cstddef>
#include <cstdint>

#include "xpuruntime/runtime/stream.h"

namespace xrt {

/// A stream as the caching allocator files its blocks: Stream::address(), a number. Blocks
/// keep this key rather than the Stream, so a cached block keeps no stream alive and the
/// hot path copies no owner; streams that events are recorded on are kept as Streams.
using StreamId = std::uintptr_t;

/// Bytes the device reports (cuMemGetInfo).
struct DeviceMemoryInfo {
  size_t free = 0;
  size_t total = 0;
};

/// What a CachingAllocator needs from the device: raw memory and events on streams. Its
/// user calls it under the user's own lock, one call at a time.
class RawMemory {
 public:
  using Event = void*;
  virtual ~RawMemory() = default;
  /// nbytes of fresh memory, or nullptr when the device has no room (other failures throw).
  virtual void* allocate(size_t nbytes) = 0;
  virtual void free(void* ptr, size_t nbytes) = 0;
  virtual Event create_event() = 0;
  virtual void destroy_event(Event event) = 0;
  /// Records event on stream: it completes when the work queued there so far has.
  virtual void record_event(Event event, const Stream& stream) = 0;
  virtual bool event_done(Event event) = 0;
  /// The host waits for event.
  virtual void wait_event(Event event) = 0;
  /// Called once before cached memory goes back to the device (the device may still run
  /// work on it in stream order; cuMemFree waits anyway, a fake does nothing).
  virtual void synchronize() {}
  virtual DeviceMemoryInfo memory_info() = 0;
  /// The most bytes this memory hands out at once (0: as many as the device has); a
  /// LimitedMemory over it sets one.
  virtual size_t limit() const { return 0; }
};

}  // namespace xrt
