// cpp/src/cuda/reduce_common.h: what the CUDA reductions (reduce_kernels.cpp) and scans
// (scan_kernels.cpp) share: the dtype pairs their kernels accumulate directly, casts of the
// others, device facts that size their grids.
#pragma once
#include <string>

#include "cuda/runtime.h"
#include "xpuruntime/tensor.h"

namespace xrt::cuda {

inline constexpr int kReduceBlock = 256;  // kBlock of reduce.cuh and scan.cuh

/// Whether a sum, product or scan from `in` into `out` runs on `in` directly (the pairs of
/// the ops' dtype rules: the same dtype, integers and bool widened to 64 bits, float32 to
/// float64, complex64 to complex128); `mean` also takes integers into float64. Other pairs
/// (an explicit dtype=) cast the input first, as the CPU kernels do.
bool accumulates_directly(DType in, DType out, bool mean);

/// sizeof the accumulator of a sum, product or scan whose result is `out` (reducers.cuh's
/// wide<>: 64-bit integers, float32 for the 16-bit floats).
int64_t sum_accumulator_size(DType out);

/// x converted to dtype, on x's device (through the copy op).
Tensor cast_on_device(const Tensor& x, DType dtype);

/// Bytes of device memory on x's device, usable in order on the current stream; the buffer
/// lives as long as the returned tensor (freed after the enqueued kernels, in stream order).
Tensor device_scratch(int64_t bytes, Device device);

/// Streaming multiprocessors of the device.
int sm_count(int device);

/// Blocks of kReduceBlock threads of fn resident on one multiprocessor at once.
int resident_blocks(CUfunction fn);

}  // namespace xrt::cuda
