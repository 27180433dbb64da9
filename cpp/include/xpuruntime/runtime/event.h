// cpp/include/xpuruntime/runtime/event.h: Event, a point in a stream's work: to order streams
// without the host, to wait for, and to time.
#pragma once
#include <optional>

#include "xpuruntime/device.h"

namespace xrt {

class Stream;

/// A backend's event handle, opaque to everything but that backend (a CUevent on CUDA).
using NativeEvent = void*;

/// Made on its first record(), on the device of that stream (as PyTorch does), so an Event
/// can be built before anyone knows where it will be used.
class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false)
      : timing_(enable_timing), blocking_(blocking) {}
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Captures the work queued so far on stream; ValueError for a stream of another device
  /// than an earlier record().
  void record(const Stream& stream);
  /// True when the recorded work has finished (or nothing was recorded).
  bool query() const;
  /// Waits on the host for the recorded work (callers from Python release the GIL).
  void synchronize() const;
  /// Milliseconds from this event to end; waits for both. ValueError when either was made
  /// without timing or was never recorded.
  float elapsed_ms(const Event& end) const;

  NativeEvent handle() const { return handle_; }
  /// The device of the first record(); nullopt before.
  std::optional<Device> device() const { return device_; }
  bool recorded() const { return recorded_; }
  bool timing() const { return timing_; }
  bool blocking() const { return blocking_; }

 private:
  NativeEvent handle_ = nullptr;
  std::optional<Device> device_;
  bool timing_, blocking_;
  bool recorded_ = false;
};

}  // namespace xrt
