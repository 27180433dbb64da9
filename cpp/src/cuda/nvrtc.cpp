// cpp/src/cuda/nvrtc.cpp: resolves the NVRTC table from the library the probe opened.
#include "cuda/nvrtc.h"

#include <dlfcn.h>
#include <link.h>

#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

// Note: NVRTC dlopens libnvrtc-builtins.so.<major>.<minor> by bare name at compile time. The
// nvidia-cuda-nvrtc wheel sets no RUNPATH, so that lookup fails unless the builtins are
// already loaded: load them first from NVRTC's own folder (a loaded library is found by its
// soname). A system install finds them through ld.so either way, so failing here is fine.
void preload_builtins(void* library, int major, int minor) {
  char origin[4096] = {};
  if (dlinfo(library, RTLD_DI_ORIGIN, origin) != 0) return;
  std::string path = std::string(origin) + "/libnvrtc-builtins.so." + std::to_string(major) +
                     "." + std::to_string(minor);
  dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

NvrtcApi load() {
  const Status& st = status();
  void* library = library_handle(Library::Nvrtc);
  if (!library) throw CudaError("NVRTC (libnvrtc.so) was not found: " + st.nvrtc.reason +
                                "; pip install nvidia-cuda-nvrtc provides it");
  NvrtcApi api;
  std::string missing;
#define XRT_RESOLVE_NVRTC_FN(name, params)                                   \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(library, #name));   \
  if (!api.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  XRT_NVRTC_FUNCTIONS(XRT_RESOLVE_NVRTC_FN)
  XRT_RESOLVE_NVRTC_FN(nvrtcGetErrorString, ())
#undef XRT_RESOLVE_NVRTC_FN
  if (!missing.empty())
    throw CudaError("NVRTC at " + st.nvrtc.path + " is too old for xpuruntime: it lacks " +
                    missing);
  if (api.nvrtcVersion(&api.major, &api.minor) != NVRTC_SUCCESS)
    throw CudaError("nvrtcVersion failed for " + st.nvrtc.path);
  preload_builtins(library, api.major, api.minor);
  return api;
}

}  // namespace

const NvrtcApi& nvrtc() {
  status();  // finds NVRTC outside this one-time initialisation: Note [Finding libraries]
  // A failed load throws on every call (static initialisation is retried after a throw).
  static const NvrtcApi api = load();
  return api;
}

void nvrtc_check(nvrtcResult result, const char* what) {
  if (result == NVRTC_SUCCESS) return;
  const char* text = nvrtc().nvrtcGetErrorString(result);
  throw CudaError(std::string(what) + " failed: " + (text ? text : "unknown NVRTC error") +
                  " (" + std::to_string(result) + ")");
}

}  // namespace xrt::cuda
