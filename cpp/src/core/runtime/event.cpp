// cpp/src/core/runtime/event.cpp: Event, forwarded to the backend of the device it was first
// recorded on.
#include <string>

#include "xpuruntime/errors.h"
#include "xpuruntime/profiler.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt {

Event::~Event() {
  if (!handle_) return;
  if (const Backend* b = find_backend(device_->type)) b->destroy_event(*device_, handle_);
}

void Event::record(const Stream& stream) {
  if (device_ && *device_ != stream.device())
    throw ValueError("this event belongs to " + device_->str() +
                     "; it cannot be recorded on a stream of " + stream.device().str());
  const Backend& b = backend(stream.device());
  if (!handle_) {
    handle_ = b.create_event(stream.device(), timing_, blocking_);
    device_ = stream.device();
  }
  b.record_event(handle_, stream);
  recorded_ = true;
}

bool Event::query() const {
  if (!recorded_) return true;
  return backend(*device_).query_event(*device_, handle_);
}

void Event::synchronize() const {
  if (!recorded_) return;
  profiler::WaitScope wait(*device_, profiler::Cause::Synchronize);
  backend(*device_).synchronize_event(*device_, handle_);
}

float Event::elapsed_ms(const Event& end) const {
  if (!timing_ || !end.timing_)
    throw ValueError("elapsed_time needs two events made with enable_timing=True");
  if (!recorded_ || !end.recorded_)
    throw ValueError("elapsed_time needs two recorded events; call record() on both first");
  if (*device_ != *end.device_)
    throw ValueError("elapsed_time needs two events of one device (" + device_->str() +
                     " and " + end.device_->str() + ")");
  synchronize();
  end.synchronize();
  return backend(*device_).elapsed_ms(*device_, handle_, end.handle_);
}

}  // namespace xrt
