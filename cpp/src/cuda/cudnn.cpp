// cpp/src/cuda/cudnn.cpp: resolves cuDNN's table; errors with cuDNN's own message; the
// per-thread handles.
#include "cuda/cudnn.h"

#include <array>
#include <memory>

#include "cuda/library_table.h"
#include "cuda/runtime.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

CudnnApi load_cudnn() {
  return load_library_table<CudnnApi>(Library::Cudnn, "cuDNN", "nvidia-cudnn-cu13",
                                      [](CudnnApi& api, auto resolve) {
#define XRT_RESOLVE_CUDNN_FN(name, params) \
  api.name = reinterpret_cast<decltype(api.name)>(resolve(#name));
    XRT_CUDNN_FUNCTIONS(XRT_RESOLVE_CUDNN_FN)
#undef XRT_RESOLVE_CUDNN_FN
    api.cudnnGetVersion =
        reinterpret_cast<decltype(api.cudnnGetVersion)>(resolve("cudnnGetVersion"));
    api.cudnnGetErrorString =
        reinterpret_cast<decltype(api.cudnnGetErrorString)>(resolve("cudnnGetErrorString"));
    api.cudnnGetLastErrorString = reinterpret_cast<decltype(api.cudnnGetLastErrorString)>(
        resolve("cudnnGetLastErrorString", false));
  }, "cudnn");
}

}  // namespace

const CudnnApi& cudnn() {
  // Finds cuDNN outside this one-time initialisation: Note [Finding libraries].
  library_handle(Library::Cudnn);
  static const CudnnApi api = [] {
    CudnnApi loaded = load_cudnn();
    // The graph API this file declares is cuDNN 9's (its enum values changed from 8.x).
    if (loaded.cudnnGetVersion() < 90000)
      throw CudaError("cuDNN " + std::to_string(loaded.cudnnGetVersion()) +
                      " is too old for xpuruntime: cuDNN 9 is needed (`pip install -U "
                      "nvidia-cudnn-cu13`)");
    return loaded;
  }();
  return api;
}

std::string cudnn_error_text(cudnnStatus_t status) {
  const CudnnApi& api = cudnn();
  std::string text = api.cudnnGetErrorString(status);
  if (api.cudnnGetLastErrorString) {
    std::array<char, 1024> message{};
    api.cudnnGetLastErrorString(message.data(), message.size());
    if (message[0]) text += std::string(": ") + message.data();
  }
  return text;
}

void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw CudaError(std::string("cuDNN ") + what + " failed: " + cudnn_error_text(status));
}

void CudnnHandle::bind(CUstream s) {
  if (s == stream) return;
  XRT_CUDNN(cudnnSetStream, handle, s);
  stream = s;
}

CudnnHandle& cudnn_handle(int device) {
  static std::array<CudnnHandle*, kMaxDevices> handles{};  // leaked: see the header
  static std::mutex creating;
  if (device < 0 || device >= kMaxDevices)
    throw ValueError("no CUDA device " + std::to_string(device));
  activate(device);
  std::lock_guard lock(creating);
  CudnnHandle*& h = handles[device];
  if (!h) {
    auto made = std::make_unique<CudnnHandle>();
    XRT_CUDNN(cudnnCreate, &made->handle);
    h = made.release();
  }
  return *h;
}

}  // namespace xrt::cuda
