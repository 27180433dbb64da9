// cpp/src/core/storage.cpp: storage comes from its device's backend.
#include "xpuruntime/storage.h"

#include "xpuruntime/profiler.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt {

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  std::shared_ptr<Storage> storage = backend(device).allocate(nbytes, device);
  if (profiler::mode()) [[unlikely]]
    storage->profile_session_ = profiler::note_alloc(storage->data_, nbytes, device);
  return storage;
}

void Storage::note_profiled_free() const {
  profiler::note_free(profile_session_, data_, nbytes_, device_);
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device,
                                       Deleter deleter, void* context, bool readonly) {
  return std::make_shared<Storage>(data, nbytes, device, deleter, context, readonly);
}

}  // namespace xrt
