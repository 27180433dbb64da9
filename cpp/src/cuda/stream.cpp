// cpp/src/cuda/stream.cpp: streams (pooled handles), events, current-stream scopes, and the
// DLPack stream handshake.
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

struct Scope {
  Stream previous;
  int previous_device;
};
thread_local std::vector<Scope> scopes;

}  // namespace

// ---- Stream ---------------------------------------------------------------------------

Stream Stream::create(int device, int priority) {
  activate(device);
  int p = clamp_priority(device, priority);
  Stream s;
  s.device_ = device;
  {
    std::lock_guard lock(pool().mutex);
    auto& idle = pool().idle;
    // The most recently released first: its memory is the warmest.
    auto it = std::find_if(idle.rbegin(), idle.rend(), [&](const PooledHandle& h) {
      return h.device == device && h.priority == p;
    });
    if (it != idle.rend()) {
      s.handle_ = it->handle;
      idle.erase(std::next(it).base());
    }
  }
  if (!s.handle_) XRT_CU(cuStreamCreateWithPriority, &s.handle_, CU_STREAM_NON_BLOCKING, p);
  s.owner_ = std::make_shared<Owner>(PooledHandle{s.handle_, device, p});
  return s;
}

Stream Stream::borrow(int device, CUstream handle) {
  Stream s;
  s.device_ = device;
  s.handle_ = handle == CU_STREAM_LEGACY ? nullptr : handle;
  return s;
}

int Stream::priority() const {
  if (owner_) return static_cast<Owner*>(owner_.get())->h.priority;
  activate(device_);
  int p = 0;
  XRT_CU(cuStreamGetPriority, handle_, &p);
  return p;
}

bool Stream::query() const {
  activate(device_);
  CUresult r = driver().cuStreamQuery(handle_);
  if (r == CUDA_ERROR_NOT_READY) return false;
  check(r, "cuStreamQuery");
  return true;
}

void Stream::synchronize() const {
  activate(device_);
  refuse_if_capturing(handle_, "Stream.synchronize()");
  XRT_CU(cuStreamSynchronize, handle_);
}

void Stream::wait(const Event& event) const {
  if (!event.recorded()) return;
  activate(device_);
  XRT_CU(cuStreamWaitEvent, handle_, event.handle(), 0);
}

void Stream::wait(const Stream& other) const {
  if (other == *this) return;
  activate(other.device_);
  CUevent e = scratch_event(other.device_);
  XRT_CU(cuEventRecord, e, other.handle_);
  activate(device_);
  XRT_CU(cuStreamWaitEvent, handle_, e, 0);
}

// ---- Event ----------------------------------------------------------------------------

Event::Event(bool enable_timing, bool blocking) : timing_(enable_timing), blocking_(blocking) {}

Event::~Event() {
  if (!handle_) return;
  try {
    // Note: safe while the event is still pending; the driver frees it once it completes.
    driver().cuEventDestroy(handle_);
  } catch (...) {
  }
}

void Event::record(const Stream& stream) {
  if (device_ >= 0 && device_ != stream.device())
    throw ValueError("this event belongs to cuda:" + std::to_string(device_) +
                     "; it cannot be recorded on a stream of cuda:" +
                     std::to_string(stream.device()));
  activate(stream.device());
  if (!handle_) {
    unsigned flags = (timing_ ? 0 : CU_EVENT_DISABLE_TIMING) |
                     (blocking_ ? CU_EVENT_BLOCKING_SYNC : 0);
    XRT_CU(cuEventCreate, &handle_, flags);
    device_ = stream.device();
  }
  XRT_CU(cuEventRecord, handle_, stream.handle());
  recorded_ = true;
}

bool Event::query() const {
  if (!recorded_) return true;
  activate(device_);
  CUresult r = driver().cuEventQuery(handle_);
  if (r == CUDA_ERROR_NOT_READY) return false;
  check(r, "cuEventQuery");
  return true;
}

void Event::synchronize() const {
  if (!recorded_) return;
  activate(device_);
  XRT_CU(cuEventSynchronize, handle_);
}

float Event::elapsed_ms(const Event& end) const {
  if (!timing_ || !end.timing_)
    throw ValueError("elapsed_time needs two events made with enable_timing=True");
  if (!recorded_ || !end.recorded_)
    throw ValueError("elapsed_time needs two recorded events; call record() on both first");
  synchronize();
  end.synchronize();
  float ms = 0;
  activate(device_);
  XRT_CU(cuEventElapsedTime, &ms, handle_, end.handle_);
  return ms;
}

// ---- Current stream -------------------------------------------------------------------

Stream current(int device) {
  check_device(device);
  CUstream raw = current_stream(device);
  Stream& s = current_objects[device];
  // Someone may have set the raw stream without us (set_current_stream): borrow it then.
  if (s.handle() != raw || s.device() != device) s = Stream::borrow(device, raw);
  return s;
}

void set_current(const Stream& stream) {
  set_current_stream(stream.device(), stream.handle());
  current_objects[stream.device()] = stream;
}

void enter_scope(const Stream& stream) {
  scopes.push_back({current(stream.device()), current_device()});
  set_current_device(stream.device());
  set_current(stream);
}

void exit_scope() {
  if (scopes.empty()) throw ValueError("leaving a stream scope that was never entered");
  Scope scope = std::move(scopes.back());
  scopes.pop_back();
  set_current(scope.previous);
  set_current_device(scope.previous_device);
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
  if (number <= 0)
    throw ValueError("a DLPack stream number must be 1 (legacy default), 2 (per-thread "
                     "default) or a stream handle, got " + std::to_string(number));
  check_device(device);
  return Stream::borrow(device, reinterpret_cast<CUstream>(number));
}

void sync_dlpack_consumer(int device, int64_t consumer) {
  if (consumer == -1) return;
  if (consumer == 0)
    throw ValueError("__dlpack__: stream=0 is ambiguous for CUDA and not allowed; pass 1 for "
                     "the legacy default stream, 2 for the per-thread default stream, or -1");
  if (consumer < 0)
    throw ValueError("__dlpack__: stream must be -1, 1, 2 or a stream handle, got " +
                     std::to_string(consumer));
  check_dlpack_device(device);
  CUstream theirs = consumer == 1 ? nullptr : reinterpret_cast<CUstream>(consumer);
  CUstream ours = current_stream(device);
  if (theirs == ours) return;
  activate(device);
  CUevent e = scratch_event(device);
  XRT_CU(cuEventRecord, e, ours);
  XRT_CU(cuStreamWaitEvent, theirs, e, 0);
}

}  // namespace xrt::cuda
