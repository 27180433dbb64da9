// cpp/src/cuda/cublas.cpp: resolves the cuBLAS/cuBLASLt tables and hands out per-thread
// handles with a stream-ordered workspace.
//
// Note [cuBLAS handles]: a handle is not safe to use from two threads at once, and creating
// one costs milliseconds, so each thread gets its own per device, created on first use and
// returned to a per-device pool when the thread ends (the next thread takes it). Handles
// are never destroyed: at process exit the driver may already be gone. Each handle owns
// one workspace per stream it has run on (32 MiB on Hopper and newer, where cuBLASLt's
// best kernels want it), allocated from the device allocator on that stream, so the
// scratch of work queued on one stream is never reused by another stream.
#include "cuda/cublas.h"

#include <mutex>
#include <string>
#include <vector>

#include "cuda/allocator.h"
#include "cuda/library_table.h"
#include "cuda/runtime.h"
#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

const char* status_name(cublasStatus_t status) {
  switch (status) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

CublasApi load_cublas() {
  return load_library_table<CublasApi>(Library::Cublas, "cuBLAS", "nvidia-cublas",
                                       [](CublasApi& api, auto resolve) {
#define XRT_RESOLVE_CUBLAS_FN(name, symbol, params) \
  api.name = reinterpret_cast<decltype(api.name)>(resolve(symbol));
    XRT_CUBLAS_FUNCTIONS(XRT_RESOLVE_CUBLAS_FN)
  });
}

CublasLtApi load_cublaslt() {
  return load_library_table<CublasLtApi>(Library::CublasLt, "cuBLASLt", "nvidia-cublas",
                                         [](CublasLtApi& api, auto resolve) {
    XRT_CUBLASLT_FUNCTIONS(XRT_RESOLVE_CUBLAS_FN)
#undef XRT_RESOLVE_CUBLAS_FN
  });
}

// ---- handles -----------------------------------------------------------------------------

struct Workspace {
  CUstream stream;
  std::shared_ptr<Storage> storage;
};

struct HandleSet {
  BlasHandles bound;  // what blas_handles() returns
  std::vector<Workspace> workspaces;
  bool blas_bound = false;  // cublasSetStream has run for bound.stream
};

struct Pool {
  std::mutex mutex;
  std::vector<HandleSet*> free[kMaxDevices];
};
Pool& pool() {
  static Pool* p = new Pool;  // leaked: see Note [cuBLAS handles]
  return *p;
}

struct ThreadHandles {
  HandleSet* sets[kMaxDevices] = {};
  ~ThreadHandles() {
    std::lock_guard lock(pool().mutex);
    for (int d = 0; d < kMaxDevices; ++d)
      if (sets[d]) pool().free[d].push_back(sets[d]);
  }
};
thread_local ThreadHandles thread_handles;

size_t workspace_bytes(int device) {
  CUdevice handle;
  XRT_CU(cuDeviceGet, &handle, device);
  int major = 0;
  XRT_CU(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle);
  return major >= 9 ? size_t{32} << 20 : size_t{8} << 20;
}

HandleSet& handle_set(int device) {
  HandleSet*& set = thread_handles.sets[device];
  if (set) return *set;
  {
    std::lock_guard lock(pool().mutex);
    auto& free = pool().free[device];
    if (!free.empty()) {
      set = free.back();
      free.pop_back();
      set->blas_bound = false;  // another thread may have left it on another stream
      return *set;
    }
  }
  set = new HandleSet;
  set->bound.workspace_bytes = workspace_bytes(device);
  return *set;
}

}  // namespace

const CublasApi& cublas() {
  status();  // finds cuBLAS outside this one-time initialisation: Note [Finding libraries]
  static const CublasApi api = load_cublas();
  return api;
}

const CublasLtApi& cublaslt() {
  status();  // finds cuBLASLt outside this one-time initialisation: Note [Finding libraries]
  static const CublasLtApi api = load_cublaslt();
  return api;
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::string message = std::string(what) + " failed: " + status_name(status) + " (" +
                        std::to_string(status) + ")";
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemoryError(message);
  throw CudaError(message);
}

int cublas_version() {
  int major = 0, minor = 0, patch = 0;
  const CublasApi& api = cublas();
  check_cublas(api.cublasGetProperty(MAJOR_VERSION, &major), "cublasGetProperty");
  check_cublas(api.cublasGetProperty(MINOR_VERSION, &minor), "cublasGetProperty");
  check_cublas(api.cublasGetProperty(PATCH_LEVEL, &patch), "cublasGetProperty");
  return major * 10000 + minor * 100 + patch;
}

const BlasHandles& blas_handles(int device, CUstream stream, bool want_lt) {
  activate(device);
  HandleSet& set = handle_set(device);
  BlasHandles& h = set.bound;
  if (h.stream != stream || !h.workspace) {
    Workspace* found = nullptr;
    for (auto& w : set.workspaces)
      if (w.stream == stream) found = &w;
    if (!found) {
      set.workspaces.push_back({stream, allocate_storage(h.workspace_bytes, device, stream)});
      found = &set.workspaces.back();
    }
    h.stream = stream;
    h.workspace = found->storage->data();
    set.blas_bound = false;
  }
  if (want_lt) {
    if (!h.lt) XRT_CUBLAS(cublaslt, cublasLtCreate, &h.lt);
    return h;  // cuBLASLt takes the stream and workspace on each call
  }
  if (!h.blas) {
    XRT_CUBLAS(cublas, cublasCreate, &h.blas);
    // Note: half-precision split-K partial sums stay in float32, as the accumulation does.
    XRT_CUBLAS(cublas, cublasSetMathMode, h.blas,
               cublasMath_t(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  }
  if (!set.blas_bound) {
    // cublasSetStream resets the workspace to cuBLAS's own, so the workspace follows it.
    XRT_CUBLAS(cublas, cublasSetStream, h.blas, stream);
    XRT_CUBLAS(cublas, cublasSetWorkspace, h.blas, h.workspace, h.workspace_bytes);
    set.blas_bound = true;
  }
  return h;
}

}  // namespace xrt::cuda
