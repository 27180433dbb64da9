// cpp/src/cuda/loader.cpp: dlopen of libcuda, NVRTC and cuBLAS(Lt); nothing is linked.
#include "xpuruntime/cuda_loader.h"

#include <dlfcn.h>

#include <mutex>

namespace xrt::cuda {
namespace {

std::vector<std::string> search_paths;
std::mutex mutex;
void* handles[4] = {};

// Tries each name in each search folder, then through the system's own lookup.
LibraryStatus open_library(const std::vector<std::string>& names, void** handle) {
  LibraryStatus s;
  std::string errors;
  for (const auto& dir : search_paths)
    for (const auto& name : names) {
      std::string path = dir + "/" + name;
      if ((*handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) {
        s.found = true;
        s.path = path;
        return s;
      }
    }
  for (const auto& name : names) {
    if ((*handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      s.found = true;
      s.path = name;
      return s;
    }
    const char* e = dlerror();
    if (errors.empty() && e) errors = e;
  }
  s.reason = errors.empty() ? names.front() + " not found" : errors;
  return s;
}

Status probe() {
  Status st;
  void*& driver = handles[int(Library::Driver)];
  st.driver = open_library({"libcuda.so.1", "libcuda.so"}, &driver);
  st.nvrtc = open_library({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"},
                          &handles[int(Library::Nvrtc)]);
  st.cublas = open_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"},
                           &handles[int(Library::Cublas)]);
  st.cublaslt = open_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
                             &handles[int(Library::CublasLt)]);
  if (!driver) {
    st.reason = "the CUDA driver (libcuda.so.1) was not found: no NVIDIA driver on this machine";
    return st;
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  using VersionFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(driver, "cuDeviceGetCount"));
  auto version = reinterpret_cast<VersionFn>(dlsym(driver, "cuDriverGetVersion"));
  if (!init || !count || !version) {
    st.reason = "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
    return st;
  }
  version(&st.driver_version);
  if (int rc = init(0); rc != 0) {
    st.reason = "cuInit failed with CUDA error " + std::to_string(rc) +
                (rc == 100 ? " (CUDA_ERROR_NO_DEVICE: no GPU is visible)" : "");
    return st;
  }
  count(&st.device_count);
  if (st.device_count == 0) {
    st.reason = "the CUDA driver reports no devices";
    return st;
  }
  st.available = true;
  return st;
}

}  // namespace

void set_search_paths(std::vector<std::string> paths) {
  std::lock_guard lock(mutex);
  search_paths = std::move(paths);
}

void* library_handle(Library library) {
  status();
  return handles[int(library)];
}

const Status& status() {
  static const Status s = [] {
    std::lock_guard lock(mutex);
    return probe();
  }();
  return s;
}

}  // namespace xrt::cuda
