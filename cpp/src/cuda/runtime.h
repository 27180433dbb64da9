// cpp/src/cuda/runtime.h: contexts and the calling thread's current stream, per device.
#pragma once
#include "cuda/driver.h"
#include "xpuruntime/cuda/runtime.h"
#include "xpuruntime/device.h"

namespace xrt::cuda {

/// Most devices one process drives.
inline constexpr int kMaxDevices = 64;

/// device's primary context, retained on first use; does not make it current.
CUcontext primary_context(int device);

/// Makes device's primary context current on the calling thread (retained on first use, for
/// the life of the process) and returns it. ValueError for an index out of range. Cheap when
/// it is already current.
CUcontext activate(int device);

/// The calling thread's current stream on device: what every op on that device enqueues on.
/// nullptr (the legacy default stream, as PyTorch and CuPy use) until set_current_stream.
CUstream current_stream(int device);
void set_current_stream(int device, CUstream stream);

/// Sets the calling thread's current device (see use_device for the public form).
void set_current_device(int device);

}  // namespace xrt::cuda
