// cpp/src/cuda/allocator.h: device memory for tensors.
#pragma once
#include <memory>

#include "cuda/driver.h"
#include "xpuruntime/storage.h"

namespace xrt::cuda {

/// A buffer of nbytes on device, usable in order on stream (the device's context is
/// current). OutOfMemoryError when the device has no room.
std::shared_ptr<Storage> allocate_storage(size_t nbytes, int device, CUstream stream);

}  // namespace xrt::cuda
