// cpp/src/cuda/allocator.h: device memory for tensors: a caching allocator per device (the
// default) or the driver's stream-ordered allocator. The controls and statistics are in
// xpuruntime/cuda_memory.h.
#pragma once
#include <cstdint>
#include <memory>

#include "cuda/driver.h"
#include "xpuruntime/cuda_memory.h"
#include "xpuruntime/storage.h"

namespace xrt::cuda {

/// A buffer of nbytes on device, usable in order on stream (the device's context is
/// current). OutOfMemoryError when the device has no room, even after the cache is freed.
std::shared_ptr<Storage> allocate_storage(size_t nbytes, int device, CUstream stream);

// Graph-private pools, called by cuda/graph.cpp around a capture:
//  - between begin and end, allocations on `stream` (the capturing stream) come from the
//    pool of graph_id, and memory freed there is not handed to anything outside the pool
//    (the graph's kernels keep using it at every replay);
//  - release (the graph is reset or destroyed) gives the pool's memory back.
// Allocations on other streams during a capture are ordinary.
void begin_capture_pool(int device, uint64_t graph_id, CUstream stream);
void end_capture_pool(int device, uint64_t graph_id);
void release_capture_pool(int device, uint64_t graph_id);

}  // namespace xrt::cuda
