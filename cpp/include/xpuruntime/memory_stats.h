// cpp/include/xpuruntime/memory_stats.h: allocator statistics in the shape PyTorch users
// know (memory_stats()), and MemoryStatistics, the observer that counts them.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xpuruntime/memory_observer.h"

namespace xrt {

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

/// The statistics layer of an allocator: folds its events into MemoryStats. Like every
/// observer it runs under the allocator's lock; read it under that lock too. Final and
/// inline, so the allocator's calls compile to the additions they were before.
class MemoryStatistics final : public MemoryObserver {
 public:
  void block_allocated(const MemoryEvent& e) override {
    int pool = index(e);
    increase(stats_.allocation, pool, 1);
    increase(stats_.allocated_bytes, pool, int64_t(e.size));
    increase(stats_.requested_bytes, pool, int64_t(e.requested));
    increase(stats_.active, pool, 1);
    increase(stats_.active_bytes, pool, int64_t(e.size));
  }
  void block_freed(const MemoryEvent& e) override {
    int pool = index(e);
    decrease(stats_.allocation, pool, 1);
    decrease(stats_.allocated_bytes, pool, int64_t(e.size));
    decrease(stats_.requested_bytes, pool, int64_t(e.requested));
  }
  void block_released(const MemoryEvent& e) override {
    decrease(stats_.active, index(e), 1);
    decrease(stats_.active_bytes, index(e), int64_t(e.size));
  }
  void segment_allocated(const MemoryEvent& e) override {
    ++stats_.num_device_alloc;
    increase(stats_.segment, index(e), 1);
    increase(stats_.reserved_bytes, index(e), int64_t(e.size));
  }
  void segment_freed(const MemoryEvent& e) override {
    ++stats_.num_device_free;
    decrease(stats_.segment, index(e), 1);
    decrease(stats_.reserved_bytes, index(e), int64_t(e.size));
  }
  void allocation_retried(size_t) override { ++stats_.num_alloc_retries; }
  void out_of_memory(size_t) override { ++stats_.num_ooms; }

  /// A free block of a split segment entered (or left) the cache: memory the allocator
  /// holds but cannot give back while the segment's other blocks live. The caching
  /// allocator's own detail, so these are not observer hooks.
  void split_block_cached(const MemoryEvent& e) {
    increase(stats_.inactive_split, index(e), 1);
    increase(stats_.inactive_split_bytes, index(e), int64_t(e.size));
  }
  void split_block_uncached(const MemoryEvent& e) {
    decrease(stats_.inactive_split, index(e), 1);
    decrease(stats_.inactive_split_bytes, index(e), int64_t(e.size));
  }

  const MemoryStats& stats() const { return stats_; }
  /// Every peak back to its current value.
  void reset_peak();
  /// The running totals (allocated, freed) and the event counts back to zero.
  void reset_accumulated();

 private:
  static int index(const MemoryEvent& e) { return e.small_pool ? kStatSmall : kStatLarge; }
  static void increase(Stat (&stat)[3], int pool, int64_t n) {
    stat[kStatAll].increase(n);
    stat[pool].increase(n);
  }
  static void decrease(Stat (&stat)[3], int pool, int64_t n) {
    stat[kStatAll].decrease(n);
    stat[pool].decrease(n);
  }

  MemoryStats stats_;
};

/// The stats as PyTorch's flat keys ("allocated_bytes.all.current", "num_ooms", ...).
std::vector<std::pair<std::string, int64_t>> stat_items(const MemoryStats& stats);

/// A readable table of the stats (what memory_summary() prints).
std::string format_summary(const MemoryStats& stats, const std::string& title);

/// "1.50 GiB".
std::string format_bytes(int64_t bytes);

}  // namespace xrt
