// cpp/src/cuda/loader.cpp: dlopen of libcuda, NVRTC, cuBLAS(Lt), cuFFT and cuSOLVER; nothing
// is linked.
#include "xpuruntime/cuda_loader.h"

#include <dlfcn.h>

#include <mutex>

namespace xrt::cuda {
namespace {

std::vector<std::string> search_paths;
std::mutex mutex;
void* handles[6] = {};
LibraryStatus lazy_status[6];

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

// Note: the CUDA 13 wheels put every library in one folder (nvidia/cu13/lib), and
// cuSOLVER's own dependencies (cuSPARSE, nvJitLink, cuBLAS) resolve there through its
// $ORIGIN rpath; a toolkit's lib64 works the same way.
void* library_handle(Library library) {
  status();
  if (library != Library::Cufft && library != Library::Cusolver) return handles[int(library)];
  static std::once_flag once[2];
  int slot = int(library);
  std::call_once(once[slot - int(Library::Cufft)], [&] {
    std::lock_guard lock(mutex);
    lazy_status[slot] =
        library == Library::Cufft
            ? open_library({"libcufft.so.12", "libcufft.so.11", "libcufft.so"}, &handles[slot])
            : open_library({"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so"},
                           &handles[slot]);
  });
  return handles[slot];
}

LibraryStatus library_status(Library library) {
  const Status& s = status();
  switch (library) {
    case Library::Driver: return s.driver;
    case Library::Nvrtc: return s.nvrtc;
    case Library::Cublas: return s.cublas;
    case Library::CublasLt: return s.cublaslt;
    default: library_handle(library); return lazy_status[int(library)];
  }
}

const Status& status() {
  static const Status s = [] {
    std::lock_guard lock(mutex);
    return probe();
  }();
  return s;
}

}  // namespace xrt::cuda
