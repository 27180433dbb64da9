// cpp/src/core/storage.cpp: allocation of storage per device.
#include "xpuruntime/storage.h"

#include <cstdlib>
#include <new>
#include <string>

#include <sys/mman.h>

#include "xpuruntime/backend.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/registry.h"

namespace xrt {
namespace {

constexpr size_t kHostAlignment = 64;  // a cache line, and enough for any SIMD load
constexpr size_t kSmallBuffer = 1024;

void free_host(void* data, void*) { std::free(data); }

// Note: as NumPy does, large buffers ask for transparent huge pages: a fresh buffer is
// written once page by page, and 2 MiB pages make that first touch 512 times fewer faults
// (concat of 1e7 doubles: 600k page faults without, 35k with). Only a hint.
constexpr size_t kHugePageMinimum = size_t{4} << 20;

void advise_huge_pages(void* data, size_t nbytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kPage = 4096;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + nbytes) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

DeviceBackend backends[kNumDeviceTypes];

}  // namespace

void register_backend(DeviceType type, const DeviceBackend& b) {
  backends[static_cast<int>(type)] = b;
}

const DeviceBackend& backend(DeviceType type) {
  KernelRegistry::global();  // backends register with the kernels
  const DeviceBackend& b = backends[static_cast<int>(type)];
  const char* why = b.unavailable_reason ? b.unavailable_reason() : "no backend is built in";
  if (!b.allocate || *why)
    throw CudaError(std::string("CUDA is not available: ") + why +
                    " (see xpuruntime.cuda.why_unavailable())");
  return b;
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  if (!device.is_cpu()) return backend(device.type).allocate(nbytes, device);
  // Note: small buffers come from plain malloc (16-byte aligned, enough for every dtype and
  // much cheaper than memalign); larger ones are aligned to a cache line.
  void* data;
  if (nbytes <= kSmallBuffer) {
    data = std::malloc(nbytes == 0 ? 1 : nbytes);
  } else {
    size_t rounded = (nbytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    data = std::aligned_alloc(kHostAlignment, rounded);
    if (data && rounded >= kHugePageMinimum) advise_huge_pages(data, rounded);
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
