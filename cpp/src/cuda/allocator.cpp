// cpp/src/cuda/allocator.cpp: device memory for tensors.
// Note: plain cuMemAlloc/cuMemFree for now; the caching allocator replaces this. The capture
// pools here are the least that keeps a graph's memory alive: buffers allocated while
// capturing are parked, not freed, when they die, until the graph releases its pool.
#include "cuda/allocator.h"

#include <mutex>
#include <vector>

#include "cuda/graph.h"
#include "cuda/runtime.h"

namespace xrt::cuda {
namespace {

struct CapturePool {
  int device;
  uint64_t graph_id;
  CUstream stream;
  bool capturing = true;
  bool released = false;
  std::vector<CUdeviceptr> parked;  ///< dead buffers the graph may still use
};

std::mutex pools_mutex;
std::vector<std::shared_ptr<CapturePool>> pools;

struct Block {
  int device;
  std::shared_ptr<CapturePool> pool;
};

void free_block(void* data, void* context) {
  auto* block = static_cast<Block*>(context);
  auto ptr = reinterpret_cast<CUdeviceptr>(data);
  {
    std::lock_guard lock(pools_mutex);
    if (block->pool && !block->pool->released) {
      block->pool->parked.push_back(ptr);
      delete block;
      return;
    }
  }
  try {
    activate(block->device);
    RelaxedCaptureMode relaxed;
    driver().cuMemFree(ptr);
  } catch (...) {
  }
  delete block;
}

std::shared_ptr<CapturePool> capturing_pool(int device, CUstream stream) {
  std::lock_guard lock(pools_mutex);
  for (auto& p : pools)
    if (p->capturing && p->device == device && p->stream == stream) return p;
  return nullptr;
}

}  // namespace

std::shared_ptr<Storage> allocate_storage(size_t nbytes, int device, CUstream stream) {
  std::shared_ptr<CapturePool> pool = capturing_pool(device, stream);
  CUdeviceptr ptr = 0;
  {
    RelaxedCaptureMode relaxed;  // cuMemAlloc is not a stream operation: allowed in capture
    XRT_CU(cuMemAlloc, &ptr, nbytes == 0 ? 1 : nbytes);
  }
  return Storage::wrap(reinterpret_cast<void*>(ptr), nbytes, Device{DeviceType::CUDA,
                       static_cast<int16_t>(device)}, &free_block,
                       new Block{device, std::move(pool)}, false);
}

void begin_capture_pool(int device, uint64_t graph_id, CUstream stream) {
  std::lock_guard lock(pools_mutex);
  pools.push_back(std::make_shared<CapturePool>(CapturePool{device, graph_id, stream}));
}

void end_capture_pool(int device, uint64_t graph_id) {
  std::lock_guard lock(pools_mutex);
  for (auto& p : pools)
    if (p->device == device && p->graph_id == graph_id) p->capturing = false;
}

void release_capture_pool(int device, uint64_t graph_id) {
  std::vector<CUdeviceptr> parked;
  {
    std::lock_guard lock(pools_mutex);
    for (auto it = pools.begin(); it != pools.end(); ++it)
      if ((*it)->device == device && (*it)->graph_id == graph_id) {
        (*it)->released = true;
        parked.swap((*it)->parked);
        pools.erase(it);
        break;
      }
  }
  if (parked.empty()) return;
  activate(device);
  for (CUdeviceptr ptr : parked) driver().cuMemFree(ptr);
}

}  // namespace xrt::cuda
