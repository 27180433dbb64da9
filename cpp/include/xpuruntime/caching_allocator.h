// cpp/include/xpuruntime/caching_allocator.h: the caching allocator's algorithm, independent
// of any device: it sits on a RawMemory (CUDA device memory, pinned host memory, or a fake
// in tests) and keeps what it got from there for reuse.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xpuruntime/memory_observer.h"
#include "xpuruntime/memory_resource.h"
#include "xpuruntime/memory_stats.h"

namespace xrt {

/// A graph-private pool's name, chosen by the caller (the graph helper).
using PoolId = std::uint64_t;

/// A block as the caller holds it; opaque, see CachingAllocator::data.
struct CachedBlock;

/// One segment of raw memory and its blocks in address order (for tests and summaries).
struct SegmentInfo {
  struct Block {
    uintptr_t address;
    size_t size;
    bool allocated;   ///< handed out
    bool pending;     ///< freed, waiting for events on other streams
  };
  uintptr_t address;
  size_t size;
  StreamId stream;       ///< the Stream::address() of the stream it belongs to
  bool small;
  PoolId private_pool;  ///< 0 for the shared pools
  std::vector<Block> blocks;
};

/// Note [Caching allocator]: the algorithm (PyTorch's and CuPy's, kept small):
/// - Sizes round up to 512 bytes. Requests up to 1 MiB come from the small pool, carved
///   from 2 MiB segments; larger ones from the large pool, whose segments are 20 MiB for
///   requests under 10 MiB and the request rounded up to 2 MiB otherwise.
/// - A free block larger than the request is split; the rest stays free (small pool: when
///   at least 512 bytes remain; large pool: when more than 1 MiB remains, so large blocks
///   do not crumble). A freed block merges with free neighbours of its segment.
/// - Free blocks are ordered by (stream, size, address): a request takes the smallest free
///   block of its stream that fits (best fit, O(log n)). A segment belongs to the stream
///   that first asked for it, so a freed block is reusable at once on that stream: stream
///   order makes reuse safe.
/// - A block used on other streams (record_stream) goes back only after an event recorded
///   on each of those streams at free time has completed.
/// - When the raw memory has no room (the device is full, or a LimitedMemory under the
///   allocator says its limit is reached): wait for pending events, free every unsplit
///   cached segment, retry once; then OutOfMemoryError with a summary.
/// - Graph-private pools: while a private pool is open for a stream, that stream's
///   allocations come from segments of the pool, and blocks freed there return to the
///   pool, never to other work, until the pool is released.
/// - One mutex; bookkeeping nodes (blocks and free-set nodes) are recycled, so a cached
///   allocation and its free touch no heap.
/// - The algorithm keeps no statistics and no limit of its own. It reports every change to
///   its MemoryStatistics and to an optional MemoryObserver (Note [Memory observers]); the
///   limit is a LimitedMemory under it (Note [Memory limit]). The layers of a device:
///   RawMemory (the device) -> LimitedMemory -> CachingAllocator -> MemoryStatistics and
///   the observer.
class CachingAllocator {
 public:
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallRequest = size_t{1} << 20;
  static constexpr size_t kSmallSegment = size_t{2} << 20;
  static constexpr size_t kMidRequest = size_t{10} << 20;
  static constexpr size_t kMidSegment = size_t{20} << 20;
  static constexpr size_t kLargeRound = size_t{2} << 20;

  /// device_name ("cuda:0", "pinned host") appears in messages.
  CachingAllocator(RawMemory& raw, std::string device_name);
  ~CachingAllocator();  // gives cached segments back; blocks still handed out leak
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// A block of at least nbytes usable in order on stream; OutOfMemoryError if none.
  CachedBlock* allocate(size_t nbytes, const Stream& stream);
  /// Gives a block back (reusable on its stream at once, on others after events).
  void free(CachedBlock* block);
  /// Notes that block is used on stream too, so free waits for that stream's work (the
  /// block keeps stream alive until then).
  void record_stream(CachedBlock* block, const Stream& stream);
  /// The handed-out block whose memory holds address, or nullptr (a slow path: a lookup of
  /// the segment, then a walk over its blocks).
  CachedBlock* find(const void* address);

  static void* data(const CachedBlock* block);
  static size_t size(const CachedBlock* block);
  static CachingAllocator& owner(const CachedBlock* block);

  /// Waits for pending events and gives every unsplit cached segment back to the device.
  void empty_cache();

  /// The statistics, with the raw memory's limit.
  MemoryStats stats() const;
  void reset_peak_stats();
  void reset_accumulated_stats();
  std::vector<SegmentInfo> snapshot() const;
  std::string summary() const;
  const std::string& device_name() const;
  /// The hook for a profiler: observer sees every allocation, free and segment from now on,
  /// after the statistics (nullptr: none, the default, at the cost of one branch per event).
  /// It must outlive the allocator or be replaced first.
  void set_observer(MemoryObserver* observer);

  /// Routes stream's allocations to private pool id (created on first use) until
  /// end_private_pool(id). One open pool per stream; ValueError otherwise. While a pool is
  /// open (a capture is underway) the allocator neither queries nor waits for events.
  void begin_private_pool(PoolId id, const Stream& stream);
  void end_private_pool(PoolId id);  // nothing for an id that is not open
  /// The pool's owner (a graph) is gone: its free segments go back to the device now, the
  /// others when their last block is freed; id may name a new pool at once. Nothing for
  /// an unknown id.
  void release_private_pool(PoolId id);

  /// The size a request takes (rounded), and the segment a fresh request of it would get.
  static size_t round_size(size_t nbytes);
  static size_t segment_size(size_t rounded);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace xrt
