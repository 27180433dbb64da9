// cpp/src/cuda/pinned_memory.cpp: one pinned host pool per device.
#include "cuda/pinned_memory.h"

#include <atomic>
#include <mutex>
#include <string>

#include "cuda/raw_memory.h"
#include "cuda/runtime.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

// Note: host blocks all live on one made-up stream that no copy runs on, so a block used by
// any copy returns only after that copy's event (record_stream), never at once.
const Stream kHostStream(kCPU, reinterpret_cast<NativeStream>(~uintptr_t{0}));

Stream copy_stream(int device, CUstream stream) {
  return Stream(Device::cuda(device), stream);
}

struct PinnedPool {
  explicit PinnedPool(int device)
      : memory(device), allocator(memory, "pinned host memory (cuda:" +
                                              std::to_string(device) + ")") {}
  PinnedHostMemory memory;
  CachingAllocator allocator;
};

std::atomic<PinnedPool*> pools[kMaxDevices];  // never destroyed, as the device allocators
std::mutex setup_mutex;

CachingAllocator& pool(int device) {
  if (device < 0 || device >= kMaxDevices || !pools[device].load(std::memory_order_acquire))
    activate(device);  // checks the index (and that CUDA works)
  PinnedPool* p = pools[device].load(std::memory_order_acquire);
  if (!p) {
    std::lock_guard lock(setup_mutex);
    p = pools[device].load();
    if (!p) {
      p = new PinnedPool(device);
      pools[device].store(p, std::memory_order_release);
    }
  }
  return p->allocator;
}

void free_pinned_storage(void*, void* context) {
  auto* block = static_cast<CachedBlock*>(context);
  try {
    CachingAllocator::owner(block).free(block);
  } catch (...) {
  }
}

}  // namespace

void PinnedBuffer::record_stream(CUstream stream) {
  CachingAllocator::owner(block_).record_stream(block_, copy_stream(device_, stream));
}

void PinnedBuffer::reset() noexcept {
  if (!block_) return;
  try {
    CachingAllocator::owner(block_).free(block_);
  } catch (...) {
  }
  block_ = nullptr;
}

PinnedBuffer pinned_buffer(size_t nbytes, int device) {
  return PinnedBuffer(pool(device).allocate(nbytes, kHostStream), device);
}

std::shared_ptr<Storage> allocate_pinned_storage(size_t nbytes, int device) {
  CachedBlock* block = pool(device).allocate(nbytes, kHostStream);
  return Storage::wrap(CachingAllocator::data(block), nbytes, kCPU, &free_pinned_storage,
                       block, false);
}

Tensor empty_pinned(const Dims& shape, DType dtype, int device) {
  for (int64_t d : shape)
    if (d < 0) throw ValueError("negative dimension in shape " + shape_str(shape));
  size_t nbytes = static_cast<size_t>(shape_nbytes(shape, dtype));
  if (device == -1) device = current_device();
  return Tensor(allocate_pinned_storage(nbytes, device), shape, contiguous_strides(shape), 0,
                dtype);
}

bool record_pinned_use(const void* address, size_t nbytes, int device, CUstream stream) {
  if (device < 0 || device >= kMaxDevices) return false;
  PinnedPool* p = pools[device].load(std::memory_order_acquire);
  if (!p) return false;
  CachedBlock* block = p->allocator.find(address);
  if (!block) return false;
  auto* begin = static_cast<const char*>(CachingAllocator::data(block));
  if (static_cast<const char*>(address) + nbytes > begin + CachingAllocator::size(block))
    return false;
  p->allocator.record_stream(block, copy_stream(device, stream));
  return true;
}

MemoryStats pinned_memory_stats(int device) {
  return pool(device == -1 ? current_device() : device).stats();
}

void empty_pinned_cache() {
  for (auto& p : pools)
    if (PinnedPool* pinned = p.load()) pinned->allocator.empty_cache();
}

}  // namespace xrt::cuda
