// cpp/src/cuda/pinned_memory.h: the pinned host pool for transfers: page-locked buffers
// cached by the caching allocator's algorithm, returned after the copies using them ran.
#pragma once
#include <memory>
#include <utility>

#include "cuda/driver.h"
#include "xpuruntime/caching_allocator.h"
#include "xpuruntime/cuda_memory.h"
#include "xpuruntime/storage.h"

namespace xrt::cuda {

/// A pinned buffer from the pool, given back when destroyed: at once, or, when it was used
/// by queued copies (record_stream), once those have run.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  /// block, from the pool of device (the device of the copies that use it).
  PinnedBuffer(CachedBlock* block, int device) : block_(block), device_(device) {}
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : block_(std::exchange(other.block_, nullptr)), device_(other.device_) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    reset();
    block_ = std::exchange(other.block_, nullptr);
    device_ = other.device_;
    return *this;
  }
  ~PinnedBuffer() { reset(); }

  explicit operator bool() const { return block_ != nullptr; }
  void* data() const { return CachingAllocator::data(block_); }
  size_t size() const { return CachingAllocator::size(block_); }
  /// Work queued on stream (a copy on the pool's device) uses the buffer.
  void record_stream(CUstream stream);
  void reset() noexcept;

 private:
  CachedBlock* block_ = nullptr;
  int device_ = 0;
};

/// A pinned buffer of at least nbytes for copies with device (pinned memory is portable;
/// the pool is per device because its events are). OutOfMemoryError if the host has none.
PinnedBuffer pinned_buffer(size_t nbytes, int device);

/// A host Storage in pinned memory of device's pool (see empty_pinned).
std::shared_ptr<Storage> allocate_pinned_storage(size_t nbytes, int device);

/// When [address, address + nbytes) lies in a pinned buffer of device's pool, notes that
/// work on stream uses it and returns true; false for any other memory.
bool record_pinned_use(const void* address, size_t nbytes, int device, CUstream stream);

/// Gives the unused pinned buffers of every device back to the driver.
void empty_pinned_cache();

}  // namespace xrt::cuda
