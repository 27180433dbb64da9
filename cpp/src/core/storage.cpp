// cpp/src/core/storage.cpp: allocation of storage per device.
#include "xpuruntime/storage.h"

#include <cstdlib>
#include <new>
#include <string>

#include "xpuruntime/errors.h"

namespace xrt {
namespace {

constexpr size_t kHostAlignment = 64;  // a cache line, and enough for any SIMD load
constexpr size_t kSmallBuffer = 1024;

void free_host(void* data, void*) { std::free(data); }

}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  if (!device.is_cpu()) {
    // Note: the CUDA backend (its caching allocator) plugs in here; until then a CUDA
    // device can be named but not allocated on.
    throw CudaError("cannot allocate on " + device.str() +
                    ": CUDA support is not available in this build (see "
                    "xpuruntime.cuda.why_unavailable())");
  }
  // Note: small buffers come from plain malloc (16-byte aligned, enough for every dtype and
  // much cheaper than memalign); larger ones are aligned to a cache line.
  void* data;
  if (nbytes <= kSmallBuffer) {
    data = std::malloc(nbytes == 0 ? 1 : nbytes);
  } else {
    size_t rounded = (nbytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    data = std::aligned_alloc(kHostAlignment, rounded);
  }
  if (!data)
    throw OutOfMemoryError("out of host memory allocating " + std::to_string(nbytes) +
                           " bytes");
  return std::make_shared<Storage>(data, nbytes, device, &free_host, nullptr, false);
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device,
                                       Deleter deleter, void* context, bool readonly) {
  return std::make_shared<Storage>(data, nbytes, device, deleter, context, readonly);
}

}  // namespace xrt
