// cpp/src/cuda/raw_memory.cpp: device and pinned host memory, and events, from the driver.
#include "cuda/raw_memory.h"

#include <unistd.h>

#include "cuda/graph.h"
#include "cuda/runtime.h"

namespace xrt::cuda {
namespace {

CUevent event_of(RawMemory::Event e) { return static_cast<CUevent>(e); }
CUstream stream_of(const Stream& s) { return static_cast<CUstream>(s.handle()); }

}  // namespace

RawMemory::Event DriverMemory::create_event() {
  activate(device_);
  CUevent event = nullptr;
  XRT_CU(cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
  return event;
}

void DriverMemory::destroy_event(Event event) { driver().cuEventDestroy(event_of(event)); }

void DriverMemory::record_event(Event event, const Stream& stream) {
  activate(device_);
  XRT_CU(cuEventRecord, event_of(event), stream_of(stream));
}

bool DriverMemory::event_done(Event event) {
  CUresult result = driver().cuEventQuery(event_of(event));
  if (result == CUDA_ERROR_NOT_READY) return false;
  check(result, "cuEventQuery");
  return true;
}

void DriverMemory::wait_event(Event event) { XRT_CU(cuEventSynchronize, event_of(event)); }

void DriverMemory::synchronize() {
  activate(device_);
  XRT_CU(cuCtxSynchronize);
}

void* DeviceMemory::allocate(size_t nbytes) {
  activate(device_);
  if (total_ == 0) {
    CUdevice handle;
    XRT_CU(cuDeviceGet, &handle, device_);
    XRT_CU(cuDeviceTotalMem, &total_, handle);
  }
  if (nbytes > total_) return nullptr;  // the driver may call that an invalid value
  CUdeviceptr ptr = 0;
  RelaxedCaptureMode relaxed;  // not a stream operation: allowed while a graph captures
  CUresult result = driver().cuMemAlloc(&ptr, nbytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
  check(result, "cuMemAlloc");
  return reinterpret_cast<void*>(ptr);
}

void DeviceMemory::free(void* ptr, size_t) {
  activate(device_);
  RelaxedCaptureMode relaxed;
  XRT_CU(cuMemFree, reinterpret_cast<CUdeviceptr>(ptr));
}

DeviceMemoryInfo DeviceMemory::memory_info() {
  activate(device_);
  DeviceMemoryInfo info;
  XRT_CU(cuMemGetInfo, &info.free, &info.total);
  return info;
}

void* PinnedHostMemory::allocate(size_t nbytes) {
  activate(device_);
  void* ptr = nullptr;
  CUresult result = driver().cuMemHostAlloc(&ptr, nbytes, CU_MEMHOSTALLOC_PORTABLE);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
  check(result, "cuMemHostAlloc");
  return ptr;
}

void PinnedHostMemory::free(void* ptr, size_t) { XRT_CU(cuMemFreeHost, ptr); }

DeviceMemoryInfo PinnedHostMemory::memory_info() {
  auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return {static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * page,
          static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * page};
}

}  // namespace xrt::cuda
