// cpp/src/cuda/cublas.h: cuBLAS and cuBLASLt, declared here (only what is used) and loaded
// from the libraries the probe opened; per-thread handles bound to the current stream.
// Nothing includes cublas_api.h or cublasLt.h: the build never needs the toolkit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "cuda/driver.h"
#include "xpuruntime/storage.h"

namespace xrt::cuda {

// Handle and descriptor types, as the headers declare them (opaque pointers).
using cublasStatus_t = int;
using cublasHandle_t = struct cublasContext*;
using cublasLtHandle_t = struct cublasLtContext*;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque_t*;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque_t*;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque_t*;

inline constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
inline constexpr cublasStatus_t CUBLAS_STATUS_ALLOC_FAILED = 3;

// Enum values from cublas_api.h, cublasLt.h and library_types.h (CUDA 12/13).
enum cudaDataType_t : int {
  CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_C_32F = 4, CUDA_C_64F = 5,
  CUDA_R_16BF = 14,
};
enum cublasOperation_t : int { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };
enum cublasMath_t : int {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
};
enum cublasComputeType_t : int {
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  CUBLAS_COMPUTE_64F = 70,
};
enum cublasGemmAlgo_t : int { CUBLAS_GEMM_DEFAULT = -1 };
enum libraryPropertyType_t : int { MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2 };
enum cublasLtMatmulDescAttributes_t : int {
  CUBLASLT_MATMUL_DESC_TRANSA = 3,  // int32_t (cublasOperation_t)
  CUBLASLT_MATMUL_DESC_TRANSB = 4,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,      // uint32_t (cublasLtEpilogue_t)
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,  // const void*, a vector of D's rows, D's type
};
/// cublasLtEpilogue_t, the forward ones (cuBLASLt's GELU is the tanh approximation).
enum cublasLtEpilogue_t : uint32_t {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = 6,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_BIAS = 36,
};
enum cublasLtMatrixLayoutAttribute_t : int {
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,           // int32_t
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,  // int64_t, in elements
};
enum cublasLtMatmulPreferenceAttributes_t : int {
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,    // uint64_t
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,  // uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,  // uint32_t, and B, C, D after it
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,
};
/// cublasLtReductionScheme_t: split-K partial sums added in the compute type.
inline constexpr uint32_t CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2;

struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

// X(name, symbol, parameters): the cuBLAS functions xpuruntime calls. The _64 entry points
// (CUDA 12+) take 64-bit sizes, so no dimension needs splitting.
#define XRT_CUBLAS_FUNCTIONS(X)                                                              \
  X(cublasGetProperty, "cublasGetProperty", (libraryPropertyType_t type, int* value))       \
  X(cublasCreate, "cublasCreate_v2", (cublasHandle_t * handle))                              \
  X(cublasSetStream, "cublasSetStream_v2", (cublasHandle_t handle, CUstream stream))         \
  X(cublasSetWorkspace, "cublasSetWorkspace_v2",                                             \
    (cublasHandle_t handle, void* workspace, size_t bytes))                                 \
  X(cublasSetMathMode, "cublasSetMathMode", (cublasHandle_t handle, cublasMath_t mode))      \
  X(cublasGemmEx, "cublasGemmEx_64",                                                         \
    (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,  \
     int64_t n, int64_t k, const void* alpha, const void* a, cudaDataType_t a_type,         \
     int64_t lda, const void* b, cudaDataType_t b_type, int64_t ldb, const void* beta,      \
     void* c, cudaDataType_t c_type, int64_t ldc, cublasComputeType_t compute,              \
     cublasGemmAlgo_t algo))                                                                 \
  X(cublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx_64",                             \
    (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,  \
     int64_t n, int64_t k, const void* alpha, const void* a, cudaDataType_t a_type,         \
     int64_t lda, long long stride_a, const void* b, cudaDataType_t b_type, int64_t ldb,   \
     long long stride_b, const void* beta, void* c, cudaDataType_t c_type, int64_t ldc,    \
     long long stride_c, int64_t batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)) \
  XRT_CUBLAS_BATCHED_LU(X)

// The batched LU routines of small matrices (linalg on CUDA), typed S/D/C/Z with void*
// arrays of device pointers; pivots and info are 32-bit, per matrix, on the device
// (getrsBatched's info is one host int that flags a bad argument).
#define XRT_CUBLAS_TYPED(X, s, d, c, z, params) \
  X(s, #s, params) X(d, #d, params) X(c, #c, params) X(z, #z, params)
#define XRT_CUBLAS_BATCHED_LU(X)                                                             \
  XRT_CUBLAS_TYPED(X, cublasSgetrfBatched, cublasDgetrfBatched, cublasCgetrfBatched,        \
                   cublasZgetrfBatched,                                                      \
                   (cublasHandle_t handle, int n, void* const* a, int lda, int* pivots,     \
                    int* info, int batch))                                                   \
  XRT_CUBLAS_TYPED(X, cublasSgetrsBatched, cublasDgetrsBatched, cublasCgetrsBatched,        \
                   cublasZgetrsBatched,                                                      \
                   (cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs,        \
                    const void* const* a, int lda, const int* pivots, void* const* b,       \
                    int ldb, int* host_info, int batch))                                     \
  XRT_CUBLAS_TYPED(X, cublasSgetriBatched, cublasDgetriBatched, cublasCgetriBatched,        \
                   cublasZgetriBatched,                                                      \
                   (cublasHandle_t handle, int n, const void* const* a, int lda,            \
                    const int* pivots, void* const* c, int ldc, int* info, int batch))

// The cuBLASLt functions xpuruntime calls.
#define XRT_CUBLASLT_FUNCTIONS(X)                                                            \
  X(cublasLtCreate, "cublasLtCreate", (cublasLtHandle_t * handle))                           \
  X(cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate",                                    \
    (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute, cudaDataType_t scale_type))   \
  X(cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute",                        \
    (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const void* value, \
     size_t bytes))                                                                          \
  X(cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy", (cublasLtMatmulDesc_t desc))     \
  X(cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate",                                \
    (cublasLtMatrixLayout_t * layout, cudaDataType_t type, uint64_t rows, uint64_t cols,     \
     int64_t ld))                                                                            \
  X(cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute",                    \
    (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,               \
     const void* value, size_t bytes))                                                       \
  X(cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy", (cublasLtMatrixLayout_t layout)) \
  X(cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate",                        \
    (cublasLtMatmulPreference_t * preference))                                               \
  X(cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute",            \
    (cublasLtMatmulPreference_t preference, cublasLtMatmulPreferenceAttributes_t attribute,  \
     const void* value, size_t bytes))                                                       \
  X(cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy",                      \
    (cublasLtMatmulPreference_t preference))                                                 \
  X(cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic",                        \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,           \
     cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,           \
     cublasLtMatmulPreference_t preference, int requested,                                   \
     cublasLtMatmulHeuristicResult_t* results, int* returned))                               \
  X(cublasLtMatmul, "cublasLtMatmul",                                                        \
    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* a,   \
     cublasLtMatrixLayout_t a_layout, const void* b, cublasLtMatrixLayout_t b_layout,        \
     const void* beta, const void* c, cublasLtMatrixLayout_t c_layout, void* d,              \
     cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t* algo, void* workspace,     \
     size_t workspace_bytes, CUstream stream))

/// The loaded libraries: one function pointer per entry of the tables above.
struct CublasApi {
#define XRT_DECLARE_CUBLAS_FN(name, symbol, params) cublasStatus_t (*name) params = nullptr;
  XRT_CUBLAS_FUNCTIONS(XRT_DECLARE_CUBLAS_FN)
};
struct CublasLtApi {
  XRT_CUBLASLT_FUNCTIONS(XRT_DECLARE_CUBLAS_FN)
#undef XRT_DECLARE_CUBLAS_FN
};

/// cuBLAS / cuBLASLt, resolved on first use; CudaError saying which library is missing and
/// how to install it when it cannot be loaded.
const CublasApi& cublas();
const CublasLtApi& cublaslt();

/// Throws CudaError ("<what> failed: CUBLAS_STATUS_... (n)"), or OutOfMemoryError for
/// CUBLAS_STATUS_ALLOC_FAILED, unless status is CUBLAS_STATUS_SUCCESS.
void check_cublas(cublasStatus_t status, const char* what);

/// The calling thread's handles on one device, bound to the stream of the last bind().
/// Handles are created once per (device, thread) and go back to a pool when the thread
/// ends; the workspace belongs to (handles, stream), so work ordered on one stream never
/// shares scratch with another stream.
struct BlasHandles {
  cublasHandle_t blas = nullptr;      ///< null until first asked for (cuBLASLt-only use)
  cublasLtHandle_t lt = nullptr;      ///< null until first asked for
  void* workspace = nullptr;          ///< for stream
  size_t workspace_bytes = 0;
  CUstream stream = nullptr;
};

/// Makes device current and returns the calling thread's handles bound to stream, with the
/// workspace for that stream (allocated from the device allocator on first use). `want_lt`
/// says which library the caller is about to use; only that one is created.
const BlasHandles& blas_handles(int device, CUstream stream, bool want_lt);

}  // namespace xrt::cuda

#define XRT_CUBLAS(table, call_name, ...) \
  ::xrt::cuda::check_cublas(::xrt::cuda::table().call_name(__VA_ARGS__), #call_name)
