// cpp/src/cuda/backend.cpp: the CUDA backend as the core sees it (allocation, copies between
// host and device, synchronisation), and the registration of the CUDA kernels.
#include "cuda/allocator.h"
#include "cuda/device_info.h"
#include "cuda/graph.h"
#include "cuda/host_copy.h"
#include "cuda/runtime.h"
#include "xpuruntime/backend.h"
#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

std::shared_ptr<Storage> allocate(size_t nbytes, Device device) {
  activate(device.index);
  return allocate_storage(nbytes, device.index, current_stream(device.index));
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                size_t nbytes) {
  if (nbytes == 0) return;
  const DriverApi& api = driver();
  auto dptr = [](const void* p) { return reinterpret_cast<CUdeviceptr>(p); };
  if (dst_device.is_cpu()) {
    int device = src_device.index;
    activate(device);
    CUstream stream = current_stream(device);
    refuse_if_capturing(stream, "copying from the device to the host");
    copy_device_to_host(dst, dptr(src), nbytes, device, stream);
  } else if (src_device.is_cpu()) {
    int device = dst_device.index;
    activate(device);
    CUstream stream = current_stream(device);
    refuse_if_capturing(stream, "copying from the host to the device");
    copy_host_to_device(dptr(dst), src, nbytes, device, stream);
  } else if (src_device == dst_device) {
    activate(dst_device.index);
    check(api.cuMemcpyDtoDAsync(dptr(dst), dptr(src), nbytes, current_stream(dst_device.index)),
          "cuMemcpyDtoDAsync");
  } else {
    CUcontext src_ctx = activate(src_device.index);
    CUcontext dst_ctx = activate(dst_device.index);
    check(api.cuMemcpyPeerAsync(dptr(dst), dst_ctx, dptr(src), src_ctx, nbytes,
                                current_stream(dst_device.index)),
          "cuMemcpyPeerAsync");
  }
}

void synchronize(Device device) { synchronize_device(device.index); }

const char* unavailable_reason() {
  const Status& st = status();
  return st.available ? "" : st.reason.c_str();
}

}  // namespace
}  // namespace xrt::cuda

namespace xrt {

void register_cuda_backend() {
  DeviceBackend b;
  b.allocate = &cuda::allocate;
  b.copy_bytes = &cuda::copy_bytes;
  b.synchronize = &cuda::synchronize;
  b.unavailable_reason = &cuda::unavailable_reason;
  register_backend(DeviceType::CUDA, b);
}

}  // namespace xrt
