// cpp/src/cuda/stream.cpp: CUDA streams (pooled handles), the current stream objects, waits
// between streams, and DLPack's stream numbers.
#include "cuda/stream.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/graph.h"
#include "cuda/runtime.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

// Note [Stream pool]: a destroyed stream's handle may come back from the driver for the next
// new stream while work of the old one is still running; code that keys on handles (the
// caching allocator's per-stream free lists, the DLPack handshake) would then order work
// that is not ordered. So handles are never destroyed: a dead Stream's handle waits in a
// pool for the next create() on the same device and priority. The pool never holds more
// handles than the most streams alive at once.
struct PooledHandle {
  CUstream handle;
  int device, priority;
  bool blocking;
};

struct StreamPool {
  std::mutex mutex;
  std::vector<PooledHandle> idle;
};

StreamPool& pool() {
  static auto* p = new StreamPool;  // leaked: handles outlive static destruction order
  return *p;
}

struct Owner {
  explicit Owner(PooledHandle handle) : h(handle) {}
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  ~Owner() {
    std::lock_guard lock(pool().mutex);
    pool().idle.push_back(h);
  }

  PooledHandle h;
};

struct PriorityRange {
  int least = 0, greatest = 0;
  bool known = false;
};

int clamp_priority(int device, int priority) {
  static std::mutex mutex;
  static std::array<PriorityRange, kMaxDevices> ranges;
  std::lock_guard lock(mutex);
  PriorityRange& r = ranges[device];
  if (!r.known) {
    XRT_CU(cuCtxGetStreamPriorityRange, &r.least, &r.greatest);
    r.known = true;
  }
  // Note: greatest is the most urgent and numerically the smallest (e.g. -5..0).
  return std::clamp(priority, r.greatest, r.least);
}

// One event per (thread, device) for waits between streams: recorded and waited on at once,
// so reusing it is safe. Never destroyed (a handful per process).
CUevent scratch_event(int device) {
  thread_local std::array<CUevent, kMaxDevices> events{};
  CUevent& e = events[device];
  if (!e) XRT_CU(cuEventCreate, &e, CU_EVENT_DISABLE_TIMING);
  return e;
}

thread_local std::array<Stream, kMaxDevices> current_objects;

}  // namespace

// ---- Streams --------------------------------------------------------------------------

namespace {

Stream pooled_stream(int device, int priority, bool blocking) {
  activate(device);
  int p = clamp_priority(device, priority);
  CUstream handle = nullptr;
  {
    std::lock_guard lock(pool().mutex);
    auto& idle = pool().idle;
    // The most recently released first: its memory is the warmest.
    auto it = std::find_if(idle.rbegin(), idle.rend(), [&](const PooledHandle& h) {
      return h.device == device && h.priority == p && h.blocking == blocking;
    });
    if (it != idle.rend()) {
      handle = it->handle;
      idle.erase(std::next(it).base());
    }
  }
  if (!handle)
    XRT_CU(cuStreamCreateWithPriority, &handle, blocking ? 0u : CU_STREAM_NON_BLOCKING, p);
  return Stream(Device::cuda(device), handle,
                std::make_shared<Owner>(PooledHandle{handle, device, p, blocking}));
}

}  // namespace

Stream create_stream(int device, int priority) { return pooled_stream(device, priority, false); }

Stream create_blocking_stream(int device) { return pooled_stream(device, 0, true); }

Stream borrow_stream(int device, CUstream handle) {
  return Stream(Device::cuda(device), handle == CU_STREAM_LEGACY ? nullptr : handle);
}

int stream_priority(const Stream& stream) {
  int device = stream.device().index;
  activate(device);
  int p = 0;
  XRT_CU(cuStreamGetPriority, native(stream), &p);
  return p;
}

bool query_stream(const Stream& stream) {
  activate(stream.device().index);
  CUresult r = driver().cuStreamQuery(native(stream));
  if (r == CUDA_ERROR_NOT_READY) return false;
  check(r, "cuStreamQuery");
  return true;
}

void synchronize_stream(const Stream& stream) {
  activate(stream.device().index);
  refuse_if_capturing(native(stream), "Stream.synchronize()");
  XRT_CU(cuStreamSynchronize, native(stream));
}

void wait_stream(const Stream& waiter, const Stream& other) {
  if (other == waiter) return;
  int from = other.device().index;
  activate(from);
  CUevent e = scratch_event(from);
  XRT_CU(cuEventRecord, e, native(other));
  activate(waiter.device().index);
  XRT_CU(cuStreamWaitEvent, native(waiter), e, 0);
}

Stream external_stream(uintptr_t address, int device) {
  auto handle = reinterpret_cast<CUstream>(address);
  if (device < 0 && !is_default_stream(handle) && handle != CU_STREAM_LEGACY) {
    // The stream's context tells its device (primary contexts: the ones everyone shares).
    device = current_device();
    check_device(device);
    CUcontext ctx = nullptr;
    XRT_CU(cuStreamGetCtx, handle, &ctx);
    for (int i = 0; i < device_count(); ++i)
      if (primary_context(i) == ctx) device = i;
  }
  if (device < 0) device = current_device();
  check_device(device);
  return borrow_stream(device, handle);
}

Stream per_thread_default_stream(int device) {
  check_device(device);
  return borrow_stream(device, CU_STREAM_PER_THREAD);
}

// ---- Current stream -------------------------------------------------------------------

Stream current(int device) {
  check_device(device);
  CUstream raw = current_stream(device);
  Stream& s = current_objects[device];
  // Someone may have set the raw stream without us (set_current_stream): borrow it then.
  if (native(s) != raw || s.device() != Device::cuda(device)) s = borrow_stream(device, raw);
  return s;
}

void set_current(const Stream& stream) {
  int device = stream.device().index;
  set_current_stream(device, native(stream));
  current_objects[device] = stream;
}

// ---- DLPack ---------------------------------------------------------------------------

namespace {

void check_dlpack_device(int device) {
  if (device < 0 || device >= kMaxDevices)
    throw BufferError("DLPack: cuda:" + std::to_string(device) + " is out of range");
}

}  // namespace

int64_t dlpack_stream_number(int device) {
  check_dlpack_device(device);
  CUstream s = current_stream(device);
  return s == nullptr ? 1 : static_cast<int64_t>(reinterpret_cast<intptr_t>(s));
}

Stream stream_from_dlpack_number(int device, int64_t number) {
  if (number == 0)
    throw ValueError("stream=0 is ambiguous for CUDA and not allowed; pass 1 for the legacy "
                     "default stream, 2 for the per-thread default stream, or -1");
  if (number < 0)
    throw ValueError("a DLPack stream number must be 1 (legacy default), 2 (per-thread "
                     "default) or a stream handle, got " + std::to_string(number));
  check_device(device);
  return borrow_stream(device, reinterpret_cast<CUstream>(number));
}

}  // namespace xrt::cuda
