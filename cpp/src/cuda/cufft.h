// cpp/src/cuda/cufft.h: cuFFT, declared here (only what is used) and opened on first use;
// a bounded cache of plans per device, executed on the caller's stream with a work area
// from the device allocator. Nothing includes cufft.h: the build never needs the toolkit.
#pragma once
#include <cstddef>
#include <cstdint>

#include "xpuruntime/cuda/libraries.h"
#include "cuda/driver.h"

namespace xrt::cuda {

// Types and values as cufft.h declares them (CUDA 12/13).
using cufftResult = int;
using cufftHandle = int;
inline constexpr cufftResult CUFFT_SUCCESS = 0;
inline constexpr cufftResult CUFFT_ALLOC_FAILED = 2;
enum cufftType : int {
  CUFFT_R2C = 0x2a, CUFFT_C2R = 0x2c, CUFFT_C2C = 0x29,
  CUFFT_D2Z = 0x6a, CUFFT_Z2D = 0x6c, CUFFT_Z2Z = 0x69,
};
inline constexpr int CUFFT_FORWARD = -1;
inline constexpr int CUFFT_INVERSE = 1;

// X(name, parameters): the cuFFT functions xpuruntime calls (data pointers as void*; the
// library's cufftComplex/cufftReal are plain interleaved floats or doubles).
#define XRT_CUFFT_FUNCTIONS(X)                                                               \
  X(cufftGetVersion, (int* version))                                                         \
  X(cufftCreate, (cufftHandle * plan))                                                       \
  X(cufftDestroy, (cufftHandle plan))                                                        \
  X(cufftSetAutoAllocation, (cufftHandle plan, int auto_allocate))                           \
  X(cufftMakePlanMany64,                                                                     \
    (cufftHandle plan, int rank, long long* n, long long* inembed, long long istride,        \
     long long idist, long long* onembed, long long ostride, long long odist, cufftType type, \
     long long batch, size_t* work_bytes))                                                   \
  X(cufftSetStream, (cufftHandle plan, CUstream stream))                                     \
  X(cufftSetWorkArea, (cufftHandle plan, void* work_area))                                   \
  X(cufftExecC2C, (cufftHandle plan, void* in, void* out, int direction))                    \
  X(cufftExecZ2Z, (cufftHandle plan, void* in, void* out, int direction))                    \
  X(cufftExecR2C, (cufftHandle plan, void* in, void* out))                                   \
  X(cufftExecD2Z, (cufftHandle plan, void* in, void* out))                                   \
  X(cufftExecC2R, (cufftHandle plan, void* in, void* out))                                   \
  X(cufftExecZ2D, (cufftHandle plan, void* in, void* out))

/// The loaded library: one function pointer per entry of the table above.
struct CufftApi {
#define XRT_DECLARE_CUFFT_FN(name, params) cufftResult (*name) params = nullptr;
  XRT_CUFFT_FUNCTIONS(XRT_DECLARE_CUFFT_FN)
#undef XRT_DECLARE_CUFFT_FN
};

/// cuFFT, resolved on first use; CudaError saying how to install it when it cannot be
/// loaded (`pip install nvidia-cufft`).
const CufftApi& cufft();


/// Throws CudaError ("<what> failed: CUFFT_... (n)"), or OutOfMemoryError for
/// CUFFT_ALLOC_FAILED, unless result is CUFFT_SUCCESS.
void check_cufft(cufftResult result, const char* what);

/// Everything that defines a plan: a batch of `batch` transforms of rank 1 to 3 (sizes n,
/// slowest first) over the advanced layout (strides and distances in elements of the
/// input and output types; *embed as cuFFT reads them, 0 for rank 1).
struct FftPlanKey {
  cufftType type = CUFFT_C2C;
  int rank = 1;
  int64_t n[3] = {};
  int64_t inembed[3] = {}, onembed[3] = {};
  int64_t istride = 1, idist = 1, ostride = 1, odist = 1;
  int64_t batch = 1;

  bool operator==(const FftPlanKey& other) const;
};

/// Runs the plan of `key` on device (its context current) from in to out on stream:
/// the plan comes from the device's cache (made on a miss), the work area from the
/// device allocator on stream. direction is CUFFT_FORWARD or CUFFT_INVERSE (C2C only).
/// Enqueues only: the host does not wait.
void execute_fft(int device, const FftPlanKey& key, const void* in, void* out, int direction,
                 CUstream stream);

// The plan caches' counters and controls are public: xpuruntime/cuda/libraries.h.

}  // namespace xrt::cuda
