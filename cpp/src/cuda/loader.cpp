// cpp/src/cuda/loader.cpp: dlopen of libcuda, NVRTC, cuBLAS(Lt), cuFFT, cuSOLVER, NCCL and cuDNN;
// nothing is linked.
#include "xpuruntime/cuda_loader.h"

#include <dlfcn.h>

#include <atomic>
#include <iterator>
#include <mutex>

namespace xrt::cuda {
namespace {

// Note [Finding libraries]: a library is looked for once, on first use: first by the finder
// (the Python layer's, over cuda-pathfinder, which knows the CUDA 12/13 wheel layouts, conda
// and CUDA_HOME), then by the system's search (ld.so: LD_LIBRARY_PATH, ld.so.conf, the
// loaded libraries). The finder may run Python, so it is never called with a lock held:
// it would wait for the GIL while another thread holding the GIL waits for that lock. Hence
// the slots below fill without a lock (two racing threads may both look; the first answer
// stays), status() finds its libraries before its one-time probe, and the function tables
// (driver(), nvrtc(), cublas(), cufft(), cusolver()) call library_handle() before their own
// one-time initialisation.

// Constant data (no constructor runs), so a static initialiser elsewhere may already ask.
struct Candidate {
  const char* name;        // the finder's (and cuda-pathfinder's) name
  const char* sonames[3];  // for the system's search, newest first (nullptr: no more)
};

constexpr Candidate kCandidates[] = {
    {"cuda", {"libcuda.so.1", "libcuda.so", nullptr}},
    {"nvrtc", {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}},
    {"cublas", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}},
    {"cublasLt", {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}},
    {"cufft", {"libcufft.so.12", "libcufft.so.11", "libcufft.so"}},
    {"cusolver", {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so"}},
    {"nccl", {"libnccl.so.2", "libnccl.so", nullptr}},
    {"cudnn", {"libcudnn.so.9", "libcudnn.so", nullptr}},
};
constexpr int kNumLibraries = static_cast<int>(std::size(kCandidates));
static_assert(kNumLibraries == static_cast<int>(Library::Cudnn) + 1,
              "one candidate per Library, in its order");

struct Slot {
  std::atomic<bool> ready{false};
  void* handle = nullptr;  // written once, before ready
  LibraryStatus status;
};

std::mutex mutex;  // guards finder and the slots' first fill
LibraryFinder finder;
Slot slots[kNumLibraries];

struct Opened {
  void* handle = nullptr;
  LibraryStatus status;
};

Opened open_library(const Candidate& c) {
  Opened out;
  LibraryFinder find;
  {
    std::lock_guard lock(mutex);
    find = finder;
  }
  std::string finder_reason;
  if (find) {
    LibraryStatus found = find(c.name);
    if (found.found) {
      if ((out.handle = dlopen(found.path.c_str(), RTLD_NOW | RTLD_LOCAL))) {
        out.status = std::move(found);
        return out;
      }
      const char* e = dlerror();
      finder_reason = found.path + ": " + (e ? e : "dlopen failed");
    } else {
      finder_reason = std::move(found.reason);
    }
  }
  std::string system_reason;
  for (const char* name : c.sonames) {
    if (!name) break;
    if ((out.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
      out.status.found = true;
      out.status.path = name;
      out.status.found_via = "system search";
      return out;
    }
    const char* e = dlerror();
    if (system_reason.empty() && e) system_reason = e;
  }
  // The finder's reason names what it looked for and where; the system's is ld.so's error.
  out.status.reason = !finder_reason.empty() ? finder_reason
                      : !system_reason.empty() ? system_reason
                                               : std::string(c.sonames[0]) + " not found";
  return out;
}

// The slot of library, filled on first use (Note [Finding libraries]).
Slot& find_slot(Library library) {
  Slot& slot = slots[static_cast<int>(library)];
  if (slot.ready.load(std::memory_order_acquire)) return slot;
  Opened opened = open_library(kCandidates[static_cast<int>(library)]);  // no lock held
  std::lock_guard lock(mutex);
  if (!slot.ready.load(std::memory_order_relaxed)) {
    slot.handle = opened.handle;
    slot.status = std::move(opened.status);
    slot.ready.store(true, std::memory_order_release);
  }
  // A losing racer's handle is one more reference to the same library: harmless.
  return slot;
}

constexpr Library kProbed[] = {Library::Driver, Library::Nvrtc, Library::Cublas,
                               Library::CublasLt};

Status probe() {
  Status st;
  st.driver = find_slot(Library::Driver).status;
  st.nvrtc = find_slot(Library::Nvrtc).status;
  st.cublas = find_slot(Library::Cublas).status;
  st.cublaslt = find_slot(Library::CublasLt).status;
  void* driver = find_slot(Library::Driver).handle;
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

void set_library_finder(LibraryFinder find) {
  std::lock_guard lock(mutex);
  finder = std::move(find);
}

// Note: the CUDA 13 wheels put every library in one folder (nvidia/cu13/lib), and
// cuSOLVER's own dependencies (cuSPARSE, nvJitLink, cuBLAS) resolve there through its
// $ORIGIN rpath; a toolkit's lib64 works the same way. cuFFT, cuSOLVER, NCCL and cuDNN are large
// and rarely needed, so the probe leaves them for their first use.
void* library_handle(Library library) {
  status();
  return find_slot(library).handle;
}

LibraryStatus library_status(Library library) {
  status();
  return find_slot(library).status;
}

const Status& status() {
  // One load once probed: the function tables call this on every use.
  static std::atomic<const Status*> probed{nullptr};
  if (const Status* s = probed.load(std::memory_order_acquire)) return *s;
  // The libraries first, outside the one-time initialisation (Note [Finding libraries]).
  for (Library library : kProbed) find_slot(library);
  static const Status s = probe();
  probed.store(&s, std::memory_order_release);
  return s;
}

}  // namespace xrt::cuda
