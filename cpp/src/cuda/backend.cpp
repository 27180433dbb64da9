// cpp/src/cuda/backend.cpp: the CUDA backend as the core sees it (xrt::Backend): memory,
// copies between host and device, waits, streams and events; registered with the core and
// its kernels with the registry, from here.
#include "cuda/allocator.h"
#include "xpuruntime/cuda/runtime.h"
#include <optional>

#include "cuda/graph.h"
#include "cuda/host_copy.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"
#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/profiler.h"
#include "xpuruntime/registry.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt::cuda {
namespace {

CUevent event_of(NativeEvent e) { return static_cast<CUevent>(e); }
CUdeviceptr address_of(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

class CudaBackend final : public Backend {
 public:
  DeviceType device_type() const override { return DeviceType::CUDA; }
  const char* name() const override { return "CUDA"; }

  std::string unavailable_reason() const override {
    const Status& st = status();
    return st.available ? "" : st.reason;
  }
  void check_available() const override {
    const Status& st = status();
    if (!st.available)
      throw CudaError("CUDA is not available: " + st.reason +
                      " (see xpuruntime.cuda.why_unavailable())");
  }
  int device_count() const override { return status().available ? cuda::device_count() : 0; }
  void check_device(int index) const override { cuda::check_device(index); }
  int current_device() const override { return cuda::current_device(); }
  void set_current_device(int index) const override {
    cuda::check_device(index);
    cuda::set_current_device(index);
  }

  // Note: no activate here. A block from the cache needs no driver call, and the calls
  // beneath (cuMemAlloc, events, the stream-ordered pool) make the context current
  // themselves; the op's kernel launch activates it anyway. One driver call less per op.
  std::shared_ptr<Storage> allocate(size_t nbytes, Device device) const override {
    if (device.index < 0 || device.index >= kMaxDevices) check_device(device.index);
    return allocate_storage(nbytes, device.index, cuda::current_stream(device.index));
  }

  void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                  size_t nbytes) const override {
    if (nbytes == 0) return;
    std::optional<profiler::CopyScope> profiled;
    if (profiler::mode()) [[unlikely]] {
      Device device = dst_device.is_cpu() ? src_device : dst_device;
      profiled.emplace(dst_device, src_device, nbytes,
                       reinterpret_cast<uintptr_t>(cuda::current_stream(device.index)));
    }
    if (dst_device.is_cpu()) {
      int device = src_device.index;
      activate(device);
      CUstream stream = cuda::current_stream(device);
      refuse_if_capturing(stream, "copying from the device to the host");
      copy_device_to_host(dst, address_of(src), nbytes, device, stream);
    } else if (src_device.is_cpu()) {
      int device = dst_device.index;
      activate(device);
      CUstream stream = cuda::current_stream(device);
      refuse_if_capturing(stream, "copying from the host to the device");
      copy_host_to_device(address_of(dst), src, nbytes, device, stream);
    } else if (src_device == dst_device) {
      activate(dst_device.index);
      XRT_CU(cuMemcpyDtoDAsync, address_of(dst), address_of(src), nbytes,
             cuda::current_stream(dst_device.index));
    } else {
      CUcontext src_ctx = activate(src_device.index);
      CUcontext dst_ctx = activate(dst_device.index);
      XRT_CU(cuMemcpyPeerAsync, address_of(dst), dst_ctx, address_of(src), src_ctx, nbytes,
             cuda::current_stream(dst_device.index));
    }
  }

  void synchronize(Device device) const override { synchronize_device(device.index); }

  Stream current_stream(Device device) const override { return current(device.index); }
  NativeStream current_stream_handle(Device device) const override {
    cuda::check_device(device.index);
    return cuda::current_stream(device.index);
  }
  void set_current_stream(const Stream& stream) const override { set_current(stream); }
  Stream default_stream(Device device) const override {
    cuda::check_device(device.index);
    return borrow_stream(device.index, nullptr);
  }
  Stream create_stream(Device device, int priority) const override {
    cuda::check_device(device.index);
    return cuda::create_stream(device.index, priority);
  }
  int stream_priority(const Stream& stream) const override {
    return cuda::stream_priority(stream);
  }
  bool query_stream(const Stream& stream) const override { return cuda::query_stream(stream); }
  void synchronize_stream(const Stream& stream) const override {
    cuda::synchronize_stream(stream);
  }
  void wait_stream(const Stream& waiter, const Stream& other) const override {
    cuda::wait_stream(waiter, other);
  }
  void wait_event(const Stream& waiter, NativeEvent event) const override {
    activate(waiter.device().index);
    XRT_CU(cuStreamWaitEvent, native(waiter), event_of(event), 0);
  }

  NativeEvent create_event(Device device, bool timing, bool blocking) const override {
    activate(device.index);
    unsigned flags = (timing ? 0 : CU_EVENT_DISABLE_TIMING) |
                     (blocking ? CU_EVENT_BLOCKING_SYNC : 0);
    CUevent e = nullptr;
    XRT_CU(cuEventCreate, &e, flags);
    return e;
  }
  void destroy_event(Device, NativeEvent event) const noexcept override {
    try {
      // Note: safe while the event is still pending; the driver frees it once it completes.
      driver().cuEventDestroy(event_of(event));
    } catch (...) {
    }
  }
  void record_event(NativeEvent event, const Stream& stream) const override {
    activate(stream.device().index);
    XRT_CU(cuEventRecord, event_of(event), native(stream));
  }
  bool query_event(Device device, NativeEvent event) const override {
    activate(device.index);
    CUresult r = driver().cuEventQuery(event_of(event));
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuEventQuery");
    return true;
  }
  void synchronize_event(Device device, NativeEvent event) const override {
    activate(device.index);
    XRT_CU(cuEventSynchronize, event_of(event));
  }
  float elapsed_ms(Device device, NativeEvent start, NativeEvent end) const override {
    float ms = 0;
    activate(device.index);
    XRT_CU(cuEventElapsedTime, &ms, event_of(start), event_of(end));
    return ms;
  }

  int64_t dlpack_stream_number(Device device) const override {
    return cuda::dlpack_stream_number(device.index);
  }
  Stream stream_from_dlpack_number(Device device, int64_t number) const override {
    return cuda::stream_from_dlpack_number(device.index, number);
  }
};

}  // namespace
}  // namespace xrt::cuda

XRT_REGISTER_BACKEND(xrt::cuda::CudaBackend)
