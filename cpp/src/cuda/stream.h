// cpp/src/cuda/stream.h: the CUDA side of xrt::Stream: pooled stream handles, the calling
// thread's current stream objects, waits between streams, and DLPack's stream numbers.
// The public face is xpuruntime/runtime/stream.h; cuda/backend.cpp forwards to these.
#pragma once
#include <cstdint>

#include "cuda/driver.h"
#include "xpuruntime/cuda/runtime.h"
#include "xpuruntime/runtime/stream.h"

namespace xrt::cuda {

/// The CUstream behind a Stream of a CUDA device.
inline CUstream native(const Stream& stream) { return static_cast<CUstream>(stream.handle()); }

/// A new non-blocking stream; priority is clamped to the device's range (lower numbers run
/// first; 0 is the normal priority). Its handle is recycled when the last copy dies.
Stream create_stream(int device, int priority);
/// Borrows a handle on device. CU_STREAM_LEGACY (0x1) is read as nullptr, its other name.
Stream borrow_stream(int device, CUstream handle);
int stream_priority(const Stream& stream);
/// The legacy or per-thread default stream (neither can be captured into a graph).
inline bool is_default_stream(CUstream s) { return s == nullptr || s == CU_STREAM_PER_THREAD; }

bool query_stream(const Stream& stream);
/// CudaError while the stream captures.
void synchronize_stream(const Stream& stream);
/// Work queued later on waiter waits for the work queued so far on other (no host wait).
void wait_stream(const Stream& waiter, const Stream& other);

/// The calling thread's current stream on device, as an object (what ops enqueue on).
Stream current(int device);
/// Makes stream current on its device for the calling thread (kept alive while current).
void set_current(const Stream& stream);

/// DLPack names streams by number: 1 the legacy default, 2 the per-thread default, any other
/// positive number a stream handle, -1 "do not synchronise"; 0 is ambiguous and refused.
/// The number of device's current stream (reads a thread-local; no driver call).
int64_t dlpack_stream_number(int device);
/// The stream a DLPack number names on device (ValueError for 0 and negative numbers).
Stream stream_from_dlpack_number(int device, int64_t number);

}  // namespace xrt::cuda
