// cpp/src/cuda/stream_ordered_allocator.cpp: cuMemAllocAsync / cuMemFreeAsync behind the
// allocator interface.
#include "cuda/stream_ordered_allocator.h"

#include "cuda/runtime.h"
#include "xpuruntime/caching_allocator.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

MemoryEvent event_of(const StreamOrderedAllocator::Block& b) {
  return {reinterpret_cast<const void*>(b.ptr), b.size, b.requested,
          reinterpret_cast<StreamId>(b.stream), false};
}

}  // namespace

StreamOrderedAllocator::StreamOrderedAllocator(int device) : device_(device) {
  activate(device);
  CUdevice handle;
  XRT_CU(cuDeviceGet, &handle, device);
  int supported = 0;
  XRT_CU(cuDeviceGetAttribute, &supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, handle);
  if (!supported)
    throw CudaError("cuda:" + std::to_string(device) +
                    " has no stream-ordered memory pools; use the caching allocator");
  XRT_CU(cuDeviceTotalMem, &total_, handle);
  XRT_CU(cuDeviceGetDefaultMemPool, &pool_, handle);
  unsigned long long keep_everything = ~0ull;
  XRT_CU(cuMemPoolSetAttribute, pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_everything);
}

StreamOrderedAllocator::Block* StreamOrderedAllocator::allocate(size_t nbytes,
                                                                CUstream stream) {
  size_t size = CachingAllocator::round_size(nbytes);
  const DriverApi& api = driver();
  std::string device_name = "cuda:" + std::to_string(device_);
  auto out_of_memory = [&] {
    std::lock_guard lock(mutex_);
    statistics_.out_of_memory(nbytes);
    size_t free = 0, total = 0;
    api.cuMemGetInfo(&free, &total);
    return OutOfMemoryError(
        "out of memory on " + device_name + " (stream-ordered allocator): tried to allocate " +
        format_bytes(int64_t(nbytes)) + "; " + format_bytes(allocated_bytes()) +
        " allocated by xpuruntime; free on the device: " + format_bytes(int64_t(free)) +
        " of " + format_bytes(int64_t(total)) + "; limit: " +
        (limit_ ? format_bytes(int64_t(limit_)) : std::string("none")));
  };
  bool over_limit;
  {
    std::lock_guard lock(mutex_);
    over_limit = size > total_ ||
                 (limit_ && size_t(allocated_bytes()) + size > limit_);
  }
  if (over_limit) throw out_of_memory();
  CUdeviceptr ptr = 0;
  CUresult result = api.cuMemAllocAsync(&ptr, size, stream);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    {
      std::lock_guard lock(mutex_);
      statistics_.allocation_retried(nbytes);
    }
    // Memory freed on other streams returns to the pool once their work has run.
    XRT_CU(cuCtxSynchronize);
    XRT_CU(cuMemPoolTrimTo, pool_, 0);
    result = api.cuMemAllocAsync(&ptr, size, stream);
    if (result == CUDA_ERROR_OUT_OF_MEMORY) throw out_of_memory();
  }
  check(result, "cuMemAllocAsync");
  auto* block = new Block{ptr, size, nbytes, stream, this, {}};
  std::lock_guard lock(mutex_);
  live_[ptr] = block;
  statistics_.block_allocated(event_of(*block));
  return block;
}

void StreamOrderedAllocator::free(Block* block) {
  {
    std::lock_guard lock(mutex_);
    live_.erase(block->ptr);
    // Freed and released at once: the driver orders the reuse on the block's stream.
    statistics_.block_freed(event_of(*block));
    statistics_.block_released(event_of(*block));
  }
  std::unique_ptr<Block> owned(block);
  activate(device_);
  for (CUstream other : block->uses) {
    CUevent event = nullptr;
    XRT_CU(cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
    XRT_CU(cuEventRecord, event, other);
    XRT_CU(cuStreamWaitEvent, block->stream, event, 0);
    driver().cuEventDestroy(event);  // released once the wait is done
  }
  XRT_CU(cuMemFreeAsync, block->ptr, block->stream);
}

void StreamOrderedAllocator::record_stream(CUdeviceptr ptr, CUstream stream) {
  std::lock_guard lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end() || it->second->stream == stream) return;
  auto& uses = it->second->uses;
  for (CUstream s : uses)
    if (s == stream) return;
  uses.push_back(stream);
}

MemoryStats StreamOrderedAllocator::stats() {
  MemoryStats out;
  {
    std::lock_guard lock(mutex_);
    out = statistics_.stats();
    out.limit = int64_t(limit_);
  }
  unsigned long long current = 0, high = 0;
  activate(device_);
  XRT_CU(cuMemPoolGetAttribute, pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &current);
  XRT_CU(cuMemPoolGetAttribute, pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &high);
  for (int pool : {kStatAll, kStatLarge}) {
    out.reserved_bytes[pool].current = int64_t(current);
    out.reserved_bytes[pool].peak = int64_t(high);
  }
  return out;
}

void StreamOrderedAllocator::empty_cache() {
  activate(device_);
  XRT_CU(cuCtxSynchronize);
  XRT_CU(cuMemPoolTrimTo, pool_, 0);
}

void StreamOrderedAllocator::reset_peak_stats() {
  std::lock_guard lock(mutex_);
  statistics_.reset_peak();
  unsigned long long zero = 0;
  activate(device_);
  XRT_CU(cuMemPoolSetAttribute, pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero);
}

void StreamOrderedAllocator::reset_accumulated_stats() {
  std::lock_guard lock(mutex_);
  statistics_.reset_accumulated();
}

void StreamOrderedAllocator::set_limit(size_t bytes) {
  std::lock_guard lock(mutex_);
  limit_ = bytes;
}

}  // namespace xrt::cuda
