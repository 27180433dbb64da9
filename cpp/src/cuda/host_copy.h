// cpp/src/cuda/host_copy.h: copies between host and device memory. Large copies from or to
// pageable memory are staged through pinned buffers in chunks, so the bus runs at the
// speed of pinned memory while the CPU copies the next chunk.
#pragma once
#include <cstddef>

#include "cuda/driver.h"
#include "xpuruntime/cuda_memory.h"

namespace xrt::cuda {

/// Copies nbytes to device memory, in order on stream; returns once src may be changed or
/// freed (the copy itself may still be queued).
void copy_host_to_device(CUdeviceptr dst, const void* src, size_t nbytes, int device,
                         CUstream stream);
/// Copies nbytes to host memory, in order on stream; returns once dst holds them.
void copy_device_to_host(void* dst, CUdeviceptr src, size_t nbytes, int device,
                         CUstream stream);

}  // namespace xrt::cuda
