// cpp/src/cuda/allocator.cpp: the allocator of each device (caching by default, or
// stream-ordered), created on first use and kept for the life of the process.
#include "cuda/allocator.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "cuda/pinned_memory.h"
#include "cuda/raw_memory.h"
#include "cuda/runtime.h"
#include "cuda/stream_ordered_allocator.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/memory_limit.h"
#include "xpuruntime/profiler.h"

namespace xrt::cuda {
namespace {

// The layers of a device (Note [Caching allocator]): the driver's memory, the limit over
// it, the caching algorithm over that (its statistics inside).
struct CachingDevice {
  explicit CachingDevice(int device)
      : memory(device), limited(memory), allocator(limited, "cuda:" + std::to_string(device)) {
    // The profiler records segments (the device's own allocations) while it records memory.
    allocator.set_observer(profiler::segment_observer(Device::cuda(device)));
  }
  DeviceMemory memory;
  LimitedMemory limited;
  CachingAllocator allocator;
};

// Note: never destroyed: tensors may be freed during interpreter shutdown, after static
// destructors would have run.
std::atomic<CachingDevice*> caching_devices[kMaxDevices];
std::atomic<StreamOrderedAllocator*> stream_ordered_devices[kMaxDevices];
std::mutex setup_mutex;
std::atomic<int> chosen_kind{-1};
std::atomic<bool> allocated{false};

// -1: the calling thread's current device.
int resolve(int device) { return device == -1 ? current_device() : device; }

// A device's first allocation: the device checked, its allocator made once.
[[gnu::noinline]] CachingDevice& make_caching_device(int device) {
  check_device(device);
  std::lock_guard lock(setup_mutex);
  CachingDevice* d = caching_devices[device].load();
  if (!d) {
    d = new CachingDevice(device);
    caching_devices[device].store(d, std::memory_order_release);
  }
  return *d;
}

// Note: the made device's lookup inlines into the allocation (its path stays short).
inline CachingDevice& caching_device(int device) {
  if (device >= 0 && device < kMaxDevices)
    if (CachingDevice* d = caching_devices[device].load(std::memory_order_acquire)) return *d;
  return make_caching_device(device);
}

CachingAllocator& caching(int device) { return caching_device(device).allocator; }

StreamOrderedAllocator& stream_ordered(int device) {
  if (device < 0 || device >= kMaxDevices) check_device(device);
  StreamOrderedAllocator* a = stream_ordered_devices[device].load(std::memory_order_acquire);
  if (a) return *a;
  check_device(device);
  std::lock_guard lock(setup_mutex);
  a = stream_ordered_devices[device].load();
  if (!a) {
    a = new StreamOrderedAllocator(device);
    stream_ordered_devices[device].store(a, std::memory_order_release);
  }
  return *a;
}

void free_cached(void*, void* context) {
  auto* block = static_cast<CachedBlock*>(context);
  try {
    CachingAllocator::owner(block).free(block);
  } catch (...) {
  }
}

void free_stream_ordered(void*, void* context) {
  auto* block = static_cast<StreamOrderedAllocator::Block*>(context);
  try {
    block->owner->free(block);
  } catch (...) {
  }
}


}  // namespace

AllocatorKind parse_allocator_kind(const std::string& name) {
  if (name == "caching") return AllocatorKind::Caching;
  if (name == "stream_ordered") return AllocatorKind::StreamOrdered;
  throw ValueError("unknown CUDA allocator '" + name +
                   "' (expected 'caching' or 'stream_ordered')");
}

const char* allocator_name(AllocatorKind kind) {
  return kind == AllocatorKind::Caching ? "caching" : "stream_ordered";
}

namespace {

[[gnu::noinline]] AllocatorKind choose_allocator_kind() {
  std::lock_guard lock(setup_mutex);
  if (chosen_kind.load() < 0) {
    const char* env = std::getenv("XPURUNTIME_CUDA_ALLOCATOR");
    AllocatorKind k = env && *env ? parse_allocator_kind(env) : AllocatorKind::Caching;
    chosen_kind.store(static_cast<int>(k), std::memory_order_release);
  }
  return static_cast<AllocatorKind>(chosen_kind.load());
}

}  // namespace

AllocatorKind allocator_kind() {
  int kind = chosen_kind.load(std::memory_order_acquire);
  if (kind >= 0) [[likely]] return static_cast<AllocatorKind>(kind);
  return choose_allocator_kind();
}

void set_allocator(AllocatorKind kind) {
  std::lock_guard lock(setup_mutex);
  if (allocated.load() && chosen_kind.load() != static_cast<int>(kind))
    throw ValueError(std::string("the CUDA allocator is chosen before the first CUDA "
                                 "allocation; this process already uses '") +
                     allocator_name(static_cast<AllocatorKind>(chosen_kind.load())) + "'");
  chosen_kind.store(static_cast<int>(kind), std::memory_order_release);
}

std::shared_ptr<Storage> allocate_storage(size_t nbytes, int device, CUstream stream) {
  AllocatorKind kind = allocator_kind();
  if (!allocated.load(std::memory_order_relaxed)) allocated.store(true);
  if (kind == AllocatorKind::StreamOrdered) {
    activate(device);  // cuMemAllocAsync on the legacy stream means the current context's
    StreamOrderedAllocator::Block* block = stream_ordered(device).allocate(nbytes, stream);
    return Storage::wrap(reinterpret_cast<void*>(block->ptr), nbytes, Device::cuda(device),
                         &free_stream_ordered, block, false);
  }
  // Note: a borrowed Stream (no owner), so the hot path copies no reference count.
  CachedBlock* block = caching(device).allocate(nbytes, Stream(Device::cuda(device), stream));
  return Storage::wrap(CachingAllocator::data(block), nbytes, Device::cuda(device),
                       &free_cached, block, false);
}

void record_stream(const Storage& storage, const Stream& stream) {
  if (storage.device().type != DeviceType::CUDA) return;
  int device = storage.device().index;
  if (allocator_kind() == AllocatorKind::StreamOrdered) {
    if (StreamOrderedAllocator* a = stream_ordered_devices[device].load())
      a->record_stream(reinterpret_cast<CUdeviceptr>(storage.data()),
                       static_cast<CUstream>(stream.handle()));
    return;
  }
  CachingDevice* d = caching_devices[device].load();
  if (!d) return;
  CachedBlock* block = d->allocator.find(storage.data());
  if (block && CachingAllocator::data(block) == storage.data())
    d->allocator.record_stream(block, stream);
}

MemoryStats memory_stats(int device) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered) return stream_ordered(device).stats();
  return caching(device).stats();
}

std::string memory_summary(int device) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered)
    return format_summary(stream_ordered(device).stats(),
                          "cuda:" + std::to_string(device) + " (stream-ordered)");
  return caching(device).summary();
}

std::vector<SegmentInfo> memory_snapshot(int device) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered) {
    check_device(device);
    return {};
  }
  return caching(device).snapshot();
}

void empty_cache() {
  for (int device = 0; device < kMaxDevices; ++device) {
    if (CachingDevice* d = caching_devices[device].load()) d->allocator.empty_cache();
    if (StreamOrderedAllocator* a = stream_ordered_devices[device].load()) a->empty_cache();
  }
  empty_pinned_cache();
}

void reset_peak_memory_stats(int device) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered)
    return stream_ordered(device).reset_peak_stats();
  caching(device).reset_peak_stats();
}

void reset_accumulated_memory_stats(int device) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered)
    return stream_ordered(device).reset_accumulated_stats();
  caching(device).reset_accumulated_stats();
}

void set_memory_limit(int device, size_t bytes) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered)
    return stream_ordered(device).set_limit(bytes);
  caching_device(device).limited.set_limit(bytes);
}

void set_memory_fraction(int device, double fraction) {
  device = resolve(device);
  if (!(fraction > 0.0 && fraction <= 1.0))
    throw ValueError("the memory fraction must be in (0, 1], got " + std::to_string(fraction));
  check_device(device);
  CUdevice handle;
  XRT_CU(cuDeviceGet, &handle, device);
  size_t total = 0;
  XRT_CU(cuDeviceTotalMem, &total, handle);
  set_memory_limit(device, static_cast<size_t>(fraction * static_cast<double>(total)));
}

void begin_private_pool(int device, PoolId id, const Stream& stream) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered) return check_device(device);
  caching(device).begin_private_pool(id, stream);
}

void end_private_pool(int device, PoolId id) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered) return check_device(device);
  caching(device).end_private_pool(id);
}

void release_private_pool(int device, PoolId id) {
  device = resolve(device);
  if (allocator_kind() == AllocatorKind::StreamOrdered) return check_device(device);
  caching(device).release_private_pool(id);
}

// The graph helper's names for the private pools (cuda/graph.cpp).
void begin_capture_pool(int device, uint64_t graph_id, CUstream stream) {
  begin_private_pool(device, graph_id, Stream(Device::cuda(resolve(device)), stream));
}

void end_capture_pool(int device, uint64_t graph_id) { end_private_pool(device, graph_id); }

void release_capture_pool(int device, uint64_t graph_id) {
  release_private_pool(device, graph_id);
}

}  // namespace xrt::cuda
