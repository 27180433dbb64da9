// cpp/src/cuda/driver.cpp: resolves the driver table from the libcuda the probe opened.
#include "cuda/driver.h"

#include <atomic>

#include <dlfcn.h>

#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

// Resolves `symbol`; a versioned name ("cuX_v2") falls back to its plain name, which older
// drivers export instead.
void* resolve(void* library, const char* symbol) {
  if (void* p = dlsym(library, symbol)) return p;
  std::string name = symbol;
  if (auto at = name.rfind("_v"); at != std::string::npos && at + 2 < name.size())
    return dlsym(library, name.substr(0, at).c_str());
  return nullptr;
}

DriverApi load() {
  const Status& st = status();
  if (!st.available) throw CudaError("CUDA is not available: " + st.reason);
  void* library = library_handle(Library::Driver);
  DriverApi api;
  std::string missing;
#define XRT_RESOLVE_DRIVER_FN(name, symbol, params)                             \
  api.name = reinterpret_cast<decltype(api.name)>(resolve(library, symbol));    \
  if (!api.name) missing += std::string(missing.empty() ? "" : ", ") + symbol;
  XRT_CUDA_DRIVER_FUNCTIONS(XRT_RESOLVE_DRIVER_FN)
#undef XRT_RESOLVE_DRIVER_FN
  if (!missing.empty())
    throw CudaError("the CUDA driver is too old for xpuruntime: libcuda lacks " + missing +
                    " (driver version " + std::to_string(st.driver_version) + ")");
  api.cuLaunchKernelEx =
      reinterpret_cast<decltype(api.cuLaunchKernelEx)>(dlsym(library, "cuLaunchKernelEx"));
  return api;
}

}  // namespace

const DriverApi& driver() {
  // Every launch and driver call comes here: once loaded, one atomic load and a return.
  static std::atomic<const DriverApi*> loaded{nullptr};
  if (const DriverApi* api = loaded.load(std::memory_order_acquire)) return *api;
  status();  // finds libcuda outside this one-time initialisation: Note [Finding libraries]
  // A failed load throws on every call (static initialisation is retried after a throw).
  static const DriverApi api = load();
  loaded.store(&api, std::memory_order_release);
  return api;
}

std::string error_text(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  const DriverApi& api = driver();
  if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) name = "CUDA_ERROR_UNKNOWN";
  if (api.cuGetErrorString(result, &text) != CUDA_SUCCESS || !text) text = "unknown error";
  return std::string(name) + " (" + text + ")";
}

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  std::string message = std::string(what) + " failed: " + error_text(result);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) throw OutOfMemoryError(message);
  throw CudaError(message);
}

}  // namespace xrt::cuda
