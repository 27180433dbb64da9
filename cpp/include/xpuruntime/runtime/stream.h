// cpp/include/xpuruntime/runtime/stream.h: Stream, a device's queue of work as a small value
// type (device + the backend's handle), and the calling thread's current stream.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "xpuruntime/device.h"

namespace xrt {

class Event;

/// A backend's stream handle, opaque to everything but that backend (a CUstream on CUDA).
/// nullptr is the device's default stream.
using NativeStream = void*;

/// A stream of one device. Copies are cheap and share the owner: a stream made by
/// create_stream() is recycled by its backend when the last copy dies; borrowed streams
/// (default streams, foreign handles) are never destroyed here.
///
/// Note: as RMM's stream view does, a bare number never converts to a Stream (what would
/// `0` mean on a machine with two backends?). A stream always names its device.
class Stream {
 public:
  /// The CPU's stream: work on the host runs in program order.
  Stream() = default;
  /// Borrows handle, a stream of device (owner, when set, keeps it alive).
  Stream(Device device, NativeStream handle, std::shared_ptr<void> owner = nullptr)
      : device_(device), handle_(handle), owner_(std::move(owner)) {}
  Stream(int) = delete;
  Stream(std::nullptr_t) = delete;

  Device device() const { return device_; }
  NativeStream handle() const { return handle_; }
  /// The handle as a number (what DLPack and __cuda_stream__ pass around).
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(handle_); }
  /// Made by create_stream() (owned), as opposed to borrowed.
  bool owned() const { return owner_ != nullptr; }

  /// Lower numbers run first; 0 is the normal priority.
  int priority() const;
  /// True when all work queued so far has finished.
  bool query() const;
  /// Waits on the host for the work queued so far (callers from Python release the GIL).
  void synchronize() const;
  /// Work queued later on this stream waits for event (nothing when it was never recorded).
  void wait(const Event& event) const;
  /// Work queued later on this stream waits for all work queued so far on other.
  void wait(const Stream& other) const;

  bool operator==(const Stream& other) const {
    return handle_ == other.handle_ && device_ == other.device_;
  }

 private:
  Device device_ = kCPU;
  NativeStream handle_ = nullptr;
  std::shared_ptr<void> owner_;
};

/// The calling thread's current stream on device: what every op on device enqueues on.
Stream current_stream(Device device);
/// current_stream(device).handle(), cheaper: the Stream is not made.
NativeStream current_stream_handle(Device device);
/// Makes stream current on its device for the calling thread (kept alive while current).
void set_current_stream(const Stream& stream);
/// The device's default stream (a CUDA device's legacy default stream).
Stream default_stream(Device device);
/// A new stream on device; priority is clamped to what the device offers.
Stream create_stream(Device device, int priority = 0);

/// `with stream:`: while alive, stream and its device are the calling thread's current
/// ones; the previous ones come back at destruction. Scopes nest per thread.
/// enter_stream_scope and exit_stream_scope are its two halves, for Python's `with`
/// (ValueError for an exit without an enter).
void enter_stream_scope(const Stream& stream);
void exit_stream_scope();

class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream) { enter_stream_scope(stream); }
  ~StreamGuard() {
    try {
      exit_stream_scope();
    } catch (...) {
    }
  }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
};

}  // namespace xrt

template <> struct std::hash<xrt::Stream> {
  size_t operator()(const xrt::Stream& s) const noexcept {
    return std::hash<uintptr_t>()(s.address()) * 31 +
           (static_cast<size_t>(s.device().type) << 16) + static_cast<size_t>(s.device().index);
  }
};
