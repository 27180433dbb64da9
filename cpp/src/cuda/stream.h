// cpp/src/cuda/stream.h: streams and events, the calling thread's current stream as an object
// (with nested `with stream:` scopes), and the DLPack stream handshake.
#pragma once
#include <cstdint>
#include <memory>

#include "cuda/driver.h"

namespace xrt::cuda {

class Event;

/// A stream of one device, a small value. Streams made by create() are owned: when the last
/// copy dies the handle goes back to a pool and a later create() reuses it (see Note [Stream
/// pool]). Borrowed streams (the default streams, foreign handles) are never destroyed here.
class Stream {
 public:
  /// The legacy default stream of device 0.
  Stream() = default;
  /// A new non-blocking stream; priority is clamped to the device's range (lower numbers run
  /// first; 0 is the normal priority).
  static Stream create(int device, int priority);
  /// Borrows a handle on device. CU_STREAM_LEGACY (0x1) is read as nullptr, its other name.
  static Stream borrow(int device, CUstream handle);

  CUstream handle() const { return handle_; }
  int device() const { return device_; }
  int priority() const;
  /// The legacy or per-thread default stream (neither can be captured into a graph).
  bool is_default() const { return handle_ == nullptr || handle_ == CU_STREAM_PER_THREAD; }
  /// True when all work queued so far has finished.
  bool query() const;
  /// Waits on the host (the caller releases the GIL); CudaError while the stream captures.
  void synchronize() const;
  /// Work queued later on this stream waits for event (a no-op when it was never recorded).
  void wait(const Event& event) const;
  /// Work queued later on this stream waits for all work queued so far on other.
  void wait(const Stream& other) const;

  bool operator==(const Stream& other) const {
    return handle_ == other.handle_ && device_ == other.device_;
  }

 private:
  CUstream handle_ = nullptr;
  int device_ = 0;
  std::shared_ptr<void> owner_;  ///< set for created streams: recycles the handle
};

/// A CUDA event. Made on first record(), on the device of that stream, as PyTorch does.
class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Captures the work queued so far on stream; ValueError for a stream of another device
  /// than an earlier record().
  void record(const Stream& stream);
  /// True when the recorded work has finished (or nothing was recorded).
  bool query() const;
  /// Waits on the host for the recorded work (the caller releases the GIL).
  void synchronize() const;
  /// Milliseconds from this event to end; waits for both. ValueError when either was made
  /// without timing or was never recorded.
  float elapsed_ms(const Event& end) const;

  CUevent handle() const { return handle_; }
  int device() const { return device_; }  ///< -1 until recorded
  bool recorded() const { return recorded_; }
  bool timing() const { return timing_; }
  bool blocking() const { return blocking_; }

 private:
  CUevent handle_ = nullptr;
  int device_ = -1;
  bool timing_, blocking_;
  bool recorded_ = false;
};

/// The calling thread's current stream on device (what ops on device enqueue on).
Stream current(int device);
/// Makes stream current on its device for the calling thread (kept alive while current).
void set_current(const Stream& stream);
/// `with stream:`: remembers the current stream of the stream's device and the current
/// device, then makes the stream and its device current. exit_scope() restores them; scopes
/// nest per thread. ValueError for an exit without an enter.
void enter_scope(const Stream& stream);
void exit_scope();

/// `with stream:` for C++ callers.
class StreamScope {
 public:
  explicit StreamScope(const Stream& stream) { enter_scope(stream); }
  ~StreamScope() {
    try {
      exit_scope();
    } catch (...) {
    }
  }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;
};

/// DLPack names streams by number: 1 the legacy default, 2 the per-thread default, any other
/// positive number a stream handle, -1 "do not synchronise"; 0 is ambiguous and refused.
/// The number to give a producer for device's current stream (our side of from_dlpack).
int64_t dlpack_stream_number(int device);
/// The stream a DLPack number names on device (ValueError for 0 and negative numbers).
Stream stream_from_dlpack_number(int device, int64_t number);
/// Our side of __dlpack__: the consumer's stream waits (an event, no host wait) for the work
/// queued on device's current stream; nothing when they are the same stream or consumer is
/// -1. ValueError for 0 and other negative numbers.
void sync_dlpack_consumer(int device, int64_t consumer);

}  // namespace xrt::cuda
