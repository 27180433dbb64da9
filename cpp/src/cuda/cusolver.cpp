// cpp/src/cuda/cusolver.cpp: resolves the cuSOLVER table and hands out per-thread handles.
//
// Handles follow Note [cuBLAS handles]: one per (device, thread), created on first use,
// given to a per-device pool when the thread ends, never destroyed. Unlike cuBLAS,
// cuSOLVER takes its workspaces per call, so the kernels allocate them from the device
// allocator on the stream they run on, and a handle owns no memory of its own.
#include "cuda/cusolver.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/library_table.h"
#include "cuda/runtime.h"
#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

const char* status_name(cusolverStatus_t status) {
  switch (status) {
    case 0: return "CUSOLVER_STATUS_SUCCESS";
    case 1: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case 2: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case 3: return "CUSOLVER_STATUS_INVALID_VALUE";
    case 4: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case 5: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case 6: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case 7: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case 8: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case 9: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case 31: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default: return "CUSOLVER_STATUS_UNKNOWN";
  }
}

CusolverApi load_cusolver() {
  return load_library_table<CusolverApi>(Library::Cusolver, "cuSOLVER", "nvidia-cusolver",
                                         [](CusolverApi& api, auto resolve) {
#define XRT_RESOLVE_REQUIRED(name, symbol, params) \
  api.name = reinterpret_cast<decltype(api.name)>(resolve(symbol));
#define XRT_RESOLVE_OPTIONAL(name, symbol, params) \
  api.name = reinterpret_cast<decltype(api.name)>(resolve(symbol, false));
    XRT_CUSOLVER_FUNCTIONS(XRT_RESOLVE_REQUIRED)
    XRT_CUSOLVER_OPTIONAL_FUNCTIONS(XRT_RESOLVE_OPTIONAL)
#undef XRT_RESOLVE_REQUIRED
#undef XRT_RESOLVE_OPTIONAL
  });
}

struct Pool {
  std::mutex mutex;
  std::vector<SolverHandles*> free[kMaxDevices];
};
Pool& pool() {
  static Pool* p = new Pool;  // leaked: handles outlive every thread
  return *p;
}

struct ThreadHandles {
  SolverHandles* sets[kMaxDevices] = {};
  ~ThreadHandles() {
    std::lock_guard lock(pool().mutex);
    for (int d = 0; d < kMaxDevices; ++d)
      if (sets[d]) pool().free[d].push_back(sets[d]);
  }
};
thread_local ThreadHandles thread_handles;

SolverHandles* create_handles() {
  auto* h = new SolverHandles;
  XRT_CUSOLVER(cusolverDnCreate, &h->dn);
  XRT_CUSOLVER(cusolverDnCreateParams, &h->params);
  XRT_CUSOLVER(cusolverDnCreateSyevjInfo, &h->syevj);
  XRT_CUSOLVER(cusolverDnXsyevjSetSortEig, h->syevj, 1);
  XRT_CUSOLVER(cusolverDnCreateGesvdjInfo, &h->gesvdj);
  XRT_CUSOLVER(cusolverDnXgesvdjSetSortEig, h->gesvdj, 1);
  return h;
}

}  // namespace

const CusolverApi& cusolver() {
  // Finds cuSOLVER outside this one-time initialisation: Note [Finding libraries].
  library_handle(Library::Cusolver);
  static const CusolverApi api = load_cusolver();
  return api;
}

void check_cusolver(cusolverStatus_t status, const char* what) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  std::string message = std::string(what) + " failed: " + status_name(status) + " (" +
                        std::to_string(status) + ")";
  if (status == CUSOLVER_STATUS_ALLOC_FAILED) throw OutOfMemoryError(message);
  throw CudaError(message);
}

namespace {
std::atomic<int> jacobi_max_sweeps{0};
}

int set_svd_jacobi_max_sweeps(int sweeps) {
  if (sweeps < 0) throw ValueError("the sweep limit must be 0 (the default) or positive");
  return jacobi_max_sweeps.exchange(sweeps);
}

int svd_jacobi_max_sweeps() { return jacobi_max_sweeps.load(); }

const SolverHandles& solver_handles(int device, CUstream stream) {
  activate(device);
  SolverHandles*& set = thread_handles.sets[device];
  if (!set) {
    {
      std::lock_guard lock(pool().mutex);
      auto& free = pool().free[device];
      if (!free.empty()) {
        set = free.back();
        free.pop_back();
      }
    }
    if (!set) set = create_handles();
    XRT_CUSOLVER(cusolverDnSetStream, set->dn, stream);  // the last thread's may differ
    set->stream = stream;
  }
  if (set->stream != stream) {
    XRT_CUSOLVER(cusolverDnSetStream, set->dn, stream);
    set->stream = stream;
  }
  return *set;
}

}  // namespace xrt::cuda
