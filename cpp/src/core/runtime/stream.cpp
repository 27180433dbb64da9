// cpp/src/core/runtime/stream.cpp: Stream and the current-stream functions, forwarded to the
// stream's backend, and the per-thread `with stream:` scopes.
#include <type_traits>
#include <vector>

#include "xpuruntime/errors.h"
#include "xpuruntime/profiler.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt {

// A stream always names its device: no number converts to one (Note in stream.h).
static_assert(!std::is_constructible_v<Stream, int>);
static_assert(!std::is_convertible_v<int, Stream>);
static_assert(!std::is_constructible_v<Stream, std::nullptr_t>);

int Stream::priority() const { return backend(device_).stream_priority(*this); }
bool Stream::query() const { return backend(device_).query_stream(*this); }
void Stream::synchronize() const {
  profiler::WaitScope wait(device_, profiler::Cause::Synchronize);
  backend(device_).synchronize_stream(*this);
}

void Stream::wait(const Event& event) const {
  if (!event.recorded()) return;
  if (event.device()->type != device_.type)
    throw ValueError("a stream of " + device_.str() + " cannot wait for an event of " +
                     event.device()->str());
  backend(device_).wait_event(*this, event.handle());
}

void Stream::wait(const Stream& other) const {
  if (other == *this) return;
  if (other.device_.type != device_.type)
    throw ValueError("a stream of " + device_.str() + " cannot wait for a stream of " +
                     other.device_.str() + " (copy through the host instead)");
  backend(device_).wait_stream(*this, other);
}

Stream current_stream(Device device) { return backend(device).current_stream(device); }
NativeStream current_stream_handle(Device device) {
  return backend(device).current_stream_handle(device);
}
void set_current_stream(const Stream& stream) {
  backend(stream.device()).set_current_stream(stream);
}
Stream default_stream(Device device) { return backend(device).default_stream(device); }
Stream create_stream(Device device, int priority) {
  return backend(device).create_stream(device, priority);
}

namespace {

struct Scope {
  Stream previous;
  int previous_device;
};
thread_local std::vector<Scope> scopes;

}  // namespace

void enter_stream_scope(const Stream& stream) {
  const Backend& b = backend(stream.device());
  scopes.push_back({b.current_stream(stream.device()), b.current_device()});
  b.set_current_device(stream.device().index);
  b.set_current_stream(stream);
}

void exit_stream_scope() {
  if (scopes.empty()) throw ValueError("leaving a stream scope that was never entered");
  Scope scope = std::move(scopes.back());
  scopes.pop_back();
  const Backend& b = backend(scope.previous.device());
  b.set_current_stream(scope.previous);
  b.set_current_device(scope.previous_device);
}

}  // namespace xrt
