// cpp/include/xpuruntime/storage.h: Storage, the refcounted buffer that views share.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "xpuruntime/device.h"

namespace xrt {

/// A buffer and how to free it. The deleter carries a context, which is what importing a
/// DLPack tensor needs (the context is the producer's managed tensor).
class Storage {
 public:
  using Deleter = void (*)(void* data, void* context);

  Storage(void* data, size_t nbytes, Device device, Deleter deleter, void* context,
          bool readonly = false)
      : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), context_(context),
        readonly_(readonly) {}
  ~Storage() {
    if (profile_session_) note_profiled_free();
    if (deleter_) deleter_(data_, context_);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// Allocates nbytes on device (64-byte aligned on the host).
  static std::shared_ptr<Storage> allocate(size_t nbytes, Device device);
  /// Wraps foreign memory; deleter(data, context) runs when the last view dies.
  static std::shared_ptr<Storage> wrap(void* data, size_t nbytes, Device device,
                                       Deleter deleter, void* context, bool readonly);

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  /// Read-only storage came from a producer that forbade writes (DLPack READ_ONLY, bytes).
  bool readonly() const { return readonly_; }

 private:
  void note_profiled_free() const;  // storage.cpp: tells the profiler (Note [Profiler cost])

  void* data_;
  size_t nbytes_;
  Device device_;
  Deleter deleter_;
  void* context_;
  bool readonly_;
  uint32_t profile_session_ = 0;  ///< the profiler session that saw it allocated, if any
};

}  // namespace xrt
