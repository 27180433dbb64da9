// cpp/src/cuda/allocator.h: device memory for tensors: a caching allocator per device (the
// default) or the driver's stream-ordered allocator. The controls and statistics are in
// xpuruntime/cuda_memory.h.
#pragma once
#include <memory>

#include "cuda/driver.h"
#include "xpuruntime/cuda_memory.h"
#include "xpuruntime/storage.h"

namespace xrt::cuda {

/// A buffer of nbytes on device, usable in order on stream (the device's context is
/// current). OutOfMemoryError when the device has no room, even after the cache is freed.
std::shared_ptr<Storage> allocate_storage(size_t nbytes, int device, CUstream stream);

}  // namespace xrt::cuda
