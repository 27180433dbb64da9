// cpp/src/core/storage.cpp: storage comes from its device's backend.
#include "xpuruntime/storage.h"

#include "xpuruntime/runtime/backend.h"

namespace xrt {

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  return backend(device).allocate(nbytes, device);
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device,
                                       Deleter deleter, void* context, bool readonly) {
  return std::make_shared<Storage>(data, nbytes, device, deleter, context, readonly);
}

}  // namespace xrt
