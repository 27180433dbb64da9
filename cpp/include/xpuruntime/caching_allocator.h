// cpp/include/xpuruntime/caching_allocator.h: the caching allocator's algorithm, independent
// of any device: it sits on a RawMemory (CUDA device memory, pinned host memory, or a fake
// in tests) and keeps what it got from there for reuse.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace xrt {

/// A stream as the allocator sees it: an opaque number (a CUstream's address on CUDA).
using StreamId = std::uintptr_t;
/// A graph-private pool's name, chosen by the caller (the graph helper).
using PoolId = std::uint64_t;

/// Bytes the device reports (cuMemGetInfo).
struct DeviceMemoryInfo {
  size_t free = 0;
  size_t total = 0;
};

/// What a CachingAllocator needs from the device: raw memory and events on streams.
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
  virtual void record_event(Event event, StreamId stream) = 0;
  virtual bool event_done(Event event) = 0;
  /// The host waits for event.
  virtual void wait_event(Event event) = 0;
  /// Called once before cached memory goes back to the device (the device may still run
  /// work on it in stream order; cuMemFree waits anyway, a fake does nothing).
  virtual void synchronize() {}
  virtual DeviceMemoryInfo memory_info() = 0;
};

/// One counter as PyTorch reports it.
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;  ///< total ever added
  int64_t freed = 0;      ///< total ever taken away

  void increase(int64_t n) {
    current += n;
    allocated += n;
    if (current > peak) peak = current;
  }
  void decrease(int64_t n) {
    current -= n;
    freed += n;
  }
};

/// Indexes of the per-pool counters: "all", "small_pool", "large_pool".
enum StatPool : int { kStatAll = 0, kStatSmall = 1, kStatLarge = 2 };

struct MemoryStats {
  Stat allocation[3];            ///< blocks handed out
  Stat segment[3];               ///< raw allocations held
  Stat active[3];                ///< allocated blocks, and freed ones awaiting events
  Stat inactive_split[3];        ///< free blocks in segments that are split
  Stat allocated_bytes[3];       ///< sizes of handed-out blocks (rounded)
  Stat reserved_bytes[3];        ///< sizes of segments
  Stat active_bytes[3];
  Stat inactive_split_bytes[3];
  Stat requested_bytes[3];       ///< sizes the callers asked for (not rounded)
  int64_t num_alloc_retries = 0;  ///< OOMs recovered by freeing the cache
  int64_t num_ooms = 0;           ///< OutOfMemoryErrors raised
  int64_t num_device_alloc = 0;   ///< RawMemory::allocate calls that succeeded
  int64_t num_device_free = 0;
  int64_t limit = 0;              ///< reserved-bytes limit (0: none)
};

/// The stats as PyTorch's flat keys ("allocated_bytes.all.current", "num_ooms", ...).
std::vector<std::pair<std::string, int64_t>> stat_items(const MemoryStats& stats);

/// A readable table of the stats (what memory_summary() prints).
std::string format_summary(const MemoryStats& stats, const std::string& title);

/// "1.50 GiB".
std::string format_bytes(int64_t bytes);

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
  StreamId stream;
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
/// - When the device has no room (or the limit is reached): wait for pending events, free
///   every unsplit cached segment, retry once; then OutOfMemoryError with a summary.
/// - Graph-private pools: while a private pool is open for a stream, that stream's
///   allocations come from segments of the pool, and blocks freed there return to the
///   pool, never to other work, until the pool is released.
/// - One mutex; bookkeeping nodes (blocks and free-set nodes) are recycled, so a cached
///   allocation and its free touch no heap.
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
  CachedBlock* allocate(size_t nbytes, StreamId stream);
  /// Gives a block back (reusable on its stream at once, on others after events).
  void free(CachedBlock* block);
  /// Notes that block is used on stream too, so free waits for that stream's work.
  void record_stream(CachedBlock* block, StreamId stream);
  /// The handed-out block whose memory holds address, or nullptr (a slow path: a lookup of
  /// the segment, then a walk over its blocks).
  CachedBlock* find(const void* address);

  static void* data(const CachedBlock* block);
  static size_t size(const CachedBlock* block);
  static CachingAllocator& owner(const CachedBlock* block);

  /// Waits for pending events and gives every unsplit cached segment back to the device.
  void empty_cache();
  /// Caps reserved bytes (0: no cap).
  void set_limit(size_t bytes);
  size_t limit() const;

  MemoryStats stats() const;
  void reset_peak_stats();
  void reset_accumulated_stats();
  std::vector<SegmentInfo> snapshot() const;
  std::string summary() const;
  const std::string& device_name() const;

  /// Routes stream's allocations to private pool id (created on first use) until
  /// end_private_pool(id). One open pool per stream; ValueError otherwise. While a pool is
  /// open (a capture is underway) the allocator neither queries nor waits for events.
  void begin_private_pool(PoolId id, StreamId stream);
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
