// cpp/include/xpuruntime/runtime/backend.h: Backend, everything the device-independent core
// needs from a kind of device (memory, copies, waits, streams, events), and the table that
// backends register themselves in.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "xpuruntime/device.h"
#include "xpuruntime/runtime/event.h"
#include "xpuruntime/runtime/stream.h"
#include "xpuruntime/storage.h"

namespace xrt {

/// A kind of device as the core sees it. Each backend is one object, made and registered
/// from its own files (XRT_REGISTER_BACKEND), so the core never names one: adding a backend
/// (ROCm, an NPU runtime) is a new folder under cpp/src and a line in CMakeLists.txt.
///
/// Methods taking a Device or Stream get one of this backend's type. Everything may throw
/// the backend's error (CudaError, OutOfMemoryError) or the standard's ValueError for a
/// device index this machine lacks.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual DeviceType device_type() const = 0;
  /// "CPU", "CUDA": for messages.
  virtual const char* name() const = 0;

  // ---- Availability and devices ---------------------------------------------------------
  /// Why the backend cannot run here ("" when it can); probes once, cheap afterwards.
  virtual std::string unavailable_reason() const = 0;
  /// Throws the backend's own error, saying why, when it cannot run here.
  virtual void check_available() const = 0;
  /// Devices of this type on this machine (0 when unavailable; never throws).
  virtual int device_count() const = 0;
  /// ValueError when index is not a device this machine has.
  virtual void check_device(int index) const = 0;
  /// The calling thread's current device index (for "cuda" without an index).
  virtual int current_device() const = 0;
  virtual void set_current_device(int index) const = 0;

  // ---- Memory ---------------------------------------------------------------------------
  /// A new buffer of nbytes on device, ordered on device's current stream.
  virtual std::shared_ptr<Storage> allocate(size_t nbytes, Device device) const = 0;
  /// Copies nbytes between two buffers, either of which may be host memory, in order on the
  /// current stream of this backend's device. Returns once the bytes can be read when the
  /// destination is host memory; otherwise it may return before the copy ran.
  virtual void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                          size_t nbytes) const = 0;
  /// Waits for all work queued on device.
  virtual void synchronize(Device device) const = 0;

  // ---- Streams (the Stream methods forward here) ----------------------------------------
  virtual Stream current_stream(Device device) const = 0;
  /// current_stream(device).handle(), without making the Stream (hot paths compare it).
  virtual NativeStream current_stream_handle(Device device) const {
    return current_stream(device).handle();
  }
  virtual void set_current_stream(const Stream& stream) const = 0;
  virtual Stream default_stream(Device device) const = 0;
  virtual Stream create_stream(Device device, int priority) const = 0;
  virtual int stream_priority(const Stream& stream) const = 0;
  virtual bool query_stream(const Stream& stream) const = 0;
  virtual void synchronize_stream(const Stream& stream) const = 0;
  /// Work queued later on waiter waits for all work queued so far on other (same backend).
  virtual void wait_stream(const Stream& waiter, const Stream& other) const = 0;
  virtual void wait_event(const Stream& waiter, NativeEvent event) const = 0;

  // ---- Events (the Event methods forward here) ------------------------------------------
  virtual NativeEvent create_event(Device device, bool timing, bool blocking) const = 0;
  /// Never throws; safe while the event is pending.
  virtual void destroy_event(Device device, NativeEvent event) const noexcept = 0;
  virtual void record_event(NativeEvent event, const Stream& stream) const = 0;
  virtual bool query_event(Device device, NativeEvent event) const = 0;
  virtual void synchronize_event(Device device, NativeEvent event) const = 0;
  /// Milliseconds between two recorded timing events (both finished).
  virtual float elapsed_ms(Device device, NativeEvent start, NativeEvent end) const = 0;

  // ---- DLPack's stream numbers (Note [DLPack streams] in core/dlpack_protocol.cpp) -------
  /// The number that names device's current stream to another library; cheap, and it
  /// never touches the device (importing a capsule needs no driver).
  virtual int64_t dlpack_stream_number(Device device) const = 0;
  /// The stream a number names on device; ValueError for numbers the backend does not use.
  virtual Stream stream_from_dlpack_number(Device device, int64_t number) const = 0;
};

/// Makes backend the one of its device type (the last registration wins). Backends call it
/// through XRT_REGISTER_BACKEND; the object must live for the rest of the process.
void register_backend(Backend& backend);

/// The backend of a device type, checked usable: XpuRuntimeError when none is built in,
/// the backend's own error (saying why) when it cannot run here.
const Backend& backend(DeviceType type);
inline const Backend& backend(Device device) { return backend(device.type); }
/// The backend of a device type, usable or not; nullptr when none is built in.
const Backend* find_backend(DeviceType type);

/// Registers a backend at static initialisation, from the backend's own source file.
struct BackendRegistrar {
  explicit BackendRegistrar(Backend& backend) { register_backend(backend); }
};

}  // namespace xrt

/// In one source file of a backend: `XRT_REGISTER_BACKEND(CudaBackend);` makes and registers
/// the backend's single instance (CudaBackend needs a default constructor).
#define XRT_REGISTER_BACKEND(Type)                                   \
  namespace {                                                        \
  Type& xrt_backend_instance() {                                     \
    static Type* instance = new Type(); /* never destroyed */         \
    return *instance;                                                \
  }                                                                  \
  const ::xrt::BackendRegistrar xrt_backend_registrar(xrt_backend_instance()); \
  }
