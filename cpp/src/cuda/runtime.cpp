// cpp/src/cuda/runtime.cpp: primary contexts, current device and current stream.
#include "cuda/runtime.h"

#include <array>
#include <mutex>
#include <string>

#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

std::mutex context_mutex;
std::array<CUcontext, kMaxDevices> contexts{};

thread_local std::array<CUstream, kMaxDevices> current_streams{};
thread_local int thread_device = 0;

CUcontext retain(int device) {
  std::lock_guard lock(context_mutex);
  if (!contexts[device]) {
    CUdevice handle;
    XRT_CU(cuDeviceGet, &handle, device);
    CUcontext ctx;
    XRT_CU(cuDevicePrimaryCtxRetain, &ctx, handle);
    contexts[device] = ctx;
  }
  return contexts[device];
}

}  // namespace

void check_device(int device) {
  int n = device_count();
  if (device < 0 || device >= n) {
    if (n == 0) throw CudaError("CUDA is not available: " + status().reason);
    throw ValueError("cuda:" + std::to_string(device) + " does not exist (this machine has " +
                     std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") + ")");
  }
}

int device_count() {
  const Status& st = status();
  return st.available ? st.device_count : 0;
}

CUcontext activate(int device) {
  if (device < 0 || device >= kMaxDevices || !contexts[device]) check_device(device);
  CUcontext ctx = contexts[device] ? contexts[device] : retain(device);
  // Note: other libraries (PyTorch, CuPy) may make another device's context current on
  // this thread behind our back, so ask the driver rather than trusting a cached answer.
  CUcontext now = nullptr;
  const DriverApi& api = driver();
  api.cuCtxGetCurrent(&now);
  if (now != ctx) XRT_CU(cuCtxSetCurrent, ctx);
  return ctx;
}

CUcontext primary_context(int device) {
  check_device(device);
  return contexts[device] ? contexts[device] : retain(device);
}

CUstream current_stream(int device) { return current_streams[device]; }

void set_current_stream(int device, CUstream stream) {
  check_device(device);
  current_streams[device] = stream;
}

int current_device() { return thread_device; }

void set_current_device(int device) {
  check_device(device);
  thread_device = device;
}

void use_device(int device) {
  set_current_device(device);
  activate(device);
}

}  // namespace xrt::cuda
