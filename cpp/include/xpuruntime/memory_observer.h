// cpp/include/xpuruntime/memory_observer.h: MemoryObserver, the hook through which layers
// over an allocator (its statistics; later the profiler) see every allocation and free.
#pragma once
#include <cstddef>

#include "xpuruntime/memory_resource.h"

namespace xrt {

/// A block or a segment as an observer sees it.
struct MemoryEvent {
  const void* address;
  size_t size;       ///< bytes it spans (a block's rounded size, a segment's whole size)
  size_t requested;  ///< what the caller asked for (blocks allocated or freed; else 0)
  StreamId stream;   ///< the stream it belongs to
  bool small_pool;   ///< in the small pool (statistics split the counters by pool)
};

/// Note [Memory observers]: an allocator reports what it does, in order, to the layers
/// over it, instead of keeping their fields: MemoryStatistics counts in PyTorch's shape,
/// and a profiler records a timeline. The allocator calls its observers while it holds
/// its lock, so an observer needs no lock of its own, must be quick, must not throw, and
/// must not call the allocator back. Each hook does nothing unless overridden. An
/// allocation costs one hook call, a free two; with no observer set, none.
class MemoryObserver {
 public:
  virtual ~MemoryObserver() = default;
  /// A block was handed to a caller.
  virtual void block_allocated(const MemoryEvent&) {}
  /// The caller gave the block back; work on other streams may still use it.
  virtual void block_freed(const MemoryEvent&) {}
  /// Nothing uses the freed block any more: its memory is reusable.
  virtual void block_released(const MemoryEvent&) {}
  /// Raw memory came from the device (or went back to it).
  virtual void segment_allocated(const MemoryEvent&) {}
  virtual void segment_freed(const MemoryEvent&) {}
  /// The device had no room: the allocator frees its cache and tries once more.
  virtual void allocation_retried(size_t) {}
  /// No room even then: OutOfMemoryError follows.
  virtual void out_of_memory(size_t) {}
};

}  // namespace xrt
