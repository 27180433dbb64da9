// cpp/src/cuda/stream_ordered_allocator.h: device memory from the driver's stream-ordered
// allocator (cuMemAllocAsync on the device's default pool), with the caching allocator's
// statistics and OOM handling.
#pragma once
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda/driver.h"
#include "xpuruntime/memory_stats.h"

namespace xrt::cuda {

/// Note: the pool's release threshold is set to "never", so freed memory stays in the pool
/// for reuse (the driver's own cache); empty_cache trims it. Reserved bytes are the pool's.
class StreamOrderedAllocator {
 public:
  struct Block {
    CUdeviceptr ptr;
    size_t size;
    size_t requested;
    CUstream stream;
    StreamOrderedAllocator* owner;
    std::vector<CUstream> uses;  // other streams (record_stream)
  };

  explicit StreamOrderedAllocator(int device);
  /// OutOfMemoryError when the pool cannot grow, even after a trim.
  Block* allocate(size_t nbytes, CUstream stream);
  /// Frees in order on the block's stream, after the work of the other streams it was used on.
  void free(Block* block);
  void record_stream(CUdeviceptr ptr, CUstream stream);

  MemoryStats stats();
  void empty_cache();
  void reset_peak_stats();
  void reset_accumulated_stats();
  void set_limit(size_t bytes);

 private:
  int64_t allocated_bytes() const {
    return statistics_.stats().allocated_bytes[kStatAll].current;
  }

  int device_;
  CUmemoryPool pool_ = nullptr;
  size_t total_ = 0;
  std::mutex mutex_;
  MemoryStatistics statistics_;  // under mutex_; every block counts in the large pool
  size_t limit_ = 0;
  std::unordered_map<CUdeviceptr, Block*> live_;
};

}  // namespace xrt::cuda
