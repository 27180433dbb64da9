// cpp/src/cuda/cusolver.h: cuSOLVER's dense API, declared here (only what is used) and
// loaded from the library cuda_loader.h opens on first use; per-thread handles bound to
// the current stream. Nothing includes cusolverDn.h: the build never needs the toolkit.
#pragma once
#include <cstddef>
#include <cstdint>

#include "xpuruntime/cuda/libraries.h"
#include "cuda/cublas.h"

namespace xrt::cuda {

using cusolverStatus_t = int;
using cusolverDnHandle_t = struct cusolverDnContext*;
using cusolverDnParams_t = struct cusolverDnParams*;
using syevjInfo_t = struct syevjInfo*;
using gesvdjInfo_t = struct gesvdjInfo*;

inline constexpr cusolverStatus_t CUSOLVER_STATUS_SUCCESS = 0;
inline constexpr cusolverStatus_t CUSOLVER_STATUS_ALLOC_FAILED = 2;

// Enum values from cusolver_common.h and cublas_api.h (CUDA 12/13).
enum cusolverEigMode_t : int { CUSOLVER_EIG_MODE_NOVECTOR = 0, CUSOLVER_EIG_MODE_VECTOR = 1 };
enum cublasFillMode_t : int { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1 };

// The typed (legacy) entry points take float*, double*, cuComplex* or cuDoubleComplex*
// by dtype; all are declared with void* here, so the four of a routine share one type.
#define XRT_CUSOLVER_TYPED(X, name_s, name_d, name_c, name_z, params) \
  X(name_s, #name_s, params) X(name_d, #name_d, params) X(name_c, #name_c, params) \
  X(name_z, #name_z, params)

// X(name, symbol, parameters): the cuSOLVER functions xpuruntime calls. The 64-bit generic
// API (cusolverDnX*) where it exists; orgqr/ungqr and the batched Jacobi and Cholesky
// routines have only the typed 32-bit one.
#define XRT_CUSOLVER_FUNCTIONS(X)                                                            \
  X(cusolverDnCreate, "cusolverDnCreate", (cusolverDnHandle_t * handle))                     \
  X(cusolverDnSetStream, "cusolverDnSetStream", (cusolverDnHandle_t handle, CUstream stream)) \
  X(cusolverDnCreateParams, "cusolverDnCreateParams", (cusolverDnParams_t * params))         \
  X(cusolverDnXpotrf_bufferSize, "cusolverDnXpotrf_bufferSize",                              \
    (cusolverDnHandle_t h, cusolverDnParams_t p, cublasFillMode_t uplo, int64_t n,           \
     cudaDataType_t a_type, const void* a, int64_t lda, cudaDataType_t compute,              \
     size_t* device_bytes, size_t* host_bytes))                                              \
  X(cusolverDnXpotrf, "cusolverDnXpotrf",                                                    \
    (cusolverDnHandle_t h, cusolverDnParams_t p, cublasFillMode_t uplo, int64_t n,           \
     cudaDataType_t a_type, void* a, int64_t lda, cudaDataType_t compute, void* device_work, \
     size_t device_bytes, void* host_work, size_t host_bytes, int* info))                    \
  X(cusolverDnXgetrf_bufferSize, "cusolverDnXgetrf_bufferSize",                              \
    (cusolverDnHandle_t h, cusolverDnParams_t p, int64_t m, int64_t n, cudaDataType_t a_type, \
     const void* a, int64_t lda, cudaDataType_t compute, size_t* device_bytes,               \
     size_t* host_bytes))                                                                    \
  X(cusolverDnXgetrf, "cusolverDnXgetrf",                                                    \
    (cusolverDnHandle_t h, cusolverDnParams_t p, int64_t m, int64_t n, cudaDataType_t a_type, \
     void* a, int64_t lda, int64_t* pivots, cudaDataType_t compute, void* device_work,       \
     size_t device_bytes, void* host_work, size_t host_bytes, int* info))                    \
  X(cusolverDnXgetrs, "cusolverDnXgetrs",                                                    \
    (cusolverDnHandle_t h, cusolverDnParams_t p, cublasOperation_t trans, int64_t n,         \
     int64_t nrhs, cudaDataType_t a_type, const void* a, int64_t lda, const int64_t* pivots, \
     cudaDataType_t b_type, void* b, int64_t ldb, int* info))                                \
  X(cusolverDnXgeqrf_bufferSize, "cusolverDnXgeqrf_bufferSize",                              \
    (cusolverDnHandle_t h, cusolverDnParams_t p, int64_t m, int64_t n, cudaDataType_t a_type, \
     const void* a, int64_t lda, cudaDataType_t tau_type, const void* tau,                   \
     cudaDataType_t compute, size_t* device_bytes, size_t* host_bytes))                      \
  X(cusolverDnXgeqrf, "cusolverDnXgeqrf",                                                    \
    (cusolverDnHandle_t h, cusolverDnParams_t p, int64_t m, int64_t n, cudaDataType_t a_type, \
     void* a, int64_t lda, cudaDataType_t tau_type, void* tau, cudaDataType_t compute,       \
     void* device_work, size_t device_bytes, void* host_work, size_t host_bytes, int* info)) \
  X(cusolverDnXsyevd_bufferSize, "cusolverDnXsyevd_bufferSize",                              \
    (cusolverDnHandle_t h, cusolverDnParams_t p, cusolverEigMode_t jobz,                     \
     cublasFillMode_t uplo, int64_t n, cudaDataType_t a_type, const void* a, int64_t lda,    \
     cudaDataType_t w_type, const void* w, cudaDataType_t compute, size_t* device_bytes,     \
     size_t* host_bytes))                                                                    \
  X(cusolverDnXsyevd, "cusolverDnXsyevd",                                                    \
    (cusolverDnHandle_t h, cusolverDnParams_t p, cusolverEigMode_t jobz,                     \
     cublasFillMode_t uplo, int64_t n, cudaDataType_t a_type, void* a, int64_t lda,          \
     cudaDataType_t w_type, void* w, cudaDataType_t compute, void* device_work,              \
     size_t device_bytes, void* host_work, size_t host_bytes, int* info))                    \
  X(cusolverDnXgesvd_bufferSize, "cusolverDnXgesvd_bufferSize",                              \
    (cusolverDnHandle_t h, cusolverDnParams_t p, signed char jobu, signed char jobvt,        \
     int64_t m, int64_t n, cudaDataType_t a_type, const void* a, int64_t lda,                \
     cudaDataType_t s_type, const void* s, cudaDataType_t u_type, const void* u,             \
     int64_t ldu, cudaDataType_t vt_type, const void* vt, int64_t ldvt,                      \
     cudaDataType_t compute, size_t* device_bytes, size_t* host_bytes))                      \
  X(cusolverDnXgesvd, "cusolverDnXgesvd",                                                    \
    (cusolverDnHandle_t h, cusolverDnParams_t p, signed char jobu, signed char jobvt,        \
     int64_t m, int64_t n, cudaDataType_t a_type, void* a, int64_t lda,                      \
     cudaDataType_t s_type, void* s, cudaDataType_t u_type, void* u, int64_t ldu,            \
     cudaDataType_t vt_type, void* vt, int64_t ldvt, cudaDataType_t compute,                 \
     void* device_work, size_t device_bytes, void* host_work, size_t host_bytes, int* info)) \
  XRT_CUSOLVER_TYPED(X, cusolverDnSorgqr_bufferSize, cusolverDnDorgqr_bufferSize,           \
                     cusolverDnCungqr_bufferSize, cusolverDnZungqr_bufferSize,              \
                     (cusolverDnHandle_t h, int m, int n, int k, const void* a, int lda,    \
                      const void* tau, int* lwork))                                          \
  XRT_CUSOLVER_TYPED(X, cusolverDnSorgqr, cusolverDnDorgqr, cusolverDnCungqr,               \
                     cusolverDnZungqr,                                                       \
                     (cusolverDnHandle_t h, int m, int n, int k, void* a, int lda,          \
                      const void* tau, void* work, int lwork, int* info))                    \
  XRT_CUSOLVER_TYPED(X, cusolverDnSpotrfBatched, cusolverDnDpotrfBatched,                   \
                     cusolverDnCpotrfBatched, cusolverDnZpotrfBatched,                       \
                     (cusolverDnHandle_t h, cublasFillMode_t uplo, int n, void** a, int lda, \
                      int* info, int batch))                                                 \
  X(cusolverDnCreateSyevjInfo, "cusolverDnCreateSyevjInfo", (syevjInfo_t * info))           \
  X(cusolverDnXsyevjSetSortEig, "cusolverDnXsyevjSetSortEig", (syevjInfo_t info, int sort))  \
  XRT_CUSOLVER_TYPED(X, cusolverDnSsyevjBatched_bufferSize, cusolverDnDsyevjBatched_bufferSize, \
                     cusolverDnCheevjBatched_bufferSize, cusolverDnZheevjBatched_bufferSize, \
                     (cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo,  \
                      int n, const void* a, int lda, const void* w, int* lwork,             \
                      syevjInfo_t params, int batch))                                        \
  XRT_CUSOLVER_TYPED(X, cusolverDnSsyevjBatched, cusolverDnDsyevjBatched,                   \
                     cusolverDnCheevjBatched, cusolverDnZheevjBatched,                       \
                     (cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo,  \
                      int n, void* a, int lda, void* w, void* work, int lwork, int* info,   \
                      syevjInfo_t params, int batch))                                        \
  X(cusolverDnCreateGesvdjInfo, "cusolverDnCreateGesvdjInfo", (gesvdjInfo_t * info))        \
  X(cusolverDnXgesvdjSetSortEig, "cusolverDnXgesvdjSetSortEig", (gesvdjInfo_t info, int sort)) \
  X(cusolverDnXgesvdjSetMaxSweeps, "cusolverDnXgesvdjSetMaxSweeps",                         \
    (gesvdjInfo_t info, int max_sweeps))                                                     \
  X(cusolverDnXgesvdjSetTolerance, "cusolverDnXgesvdjSetTolerance",                         \
    (gesvdjInfo_t info, double tolerance))                                                   \
  XRT_CUSOLVER_TYPED(X, cusolverDnSgesvdj_bufferSize, cusolverDnDgesvdj_bufferSize,         \
                     cusolverDnCgesvdj_bufferSize, cusolverDnZgesvdj_bufferSize,            \
                     (cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, \
                      const void* a, int lda, const void* s, const void* u, int ldu,        \
                      const void* v, int ldv, int* lwork, gesvdjInfo_t params))              \
  XRT_CUSOLVER_TYPED(X, cusolverDnSgesvdj, cusolverDnDgesvdj, cusolverDnCgesvdj,            \
                     cusolverDnZgesvdj,                                                      \
                     (cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, \
                      void* a, int lda, void* s, void* u, int ldu, void* v, int ldv,        \
                      void* work, int lwork, int* info, gesvdjInfo_t params))                \
  XRT_CUSOLVER_TYPED(X, cusolverDnSgesvdjBatched_bufferSize, cusolverDnDgesvdjBatched_bufferSize, \
                     cusolverDnCgesvdjBatched_bufferSize, cusolverDnZgesvdjBatched_bufferSize, \
                     (cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n,           \
                      const void* a, int lda, const void* s, const void* u, int ldu,        \
                      const void* v, int ldv, int* lwork, gesvdjInfo_t params, int batch))  \
  XRT_CUSOLVER_TYPED(X, cusolverDnSgesvdjBatched, cusolverDnDgesvdjBatched,                 \
                     cusolverDnCgesvdjBatched, cusolverDnZgesvdjBatched,                     \
                     (cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, void* a,  \
                      int lda, void* s, void* u, int ldu, void* v, int ldv, void* work,     \
                      int lwork, int* info, gesvdjInfo_t params, int batch))

// Entry points that older libraries lack: null when absent (Xgeev came with CUDA 12.6).
#define XRT_CUSOLVER_OPTIONAL_FUNCTIONS(X)                                                   \
  X(cusolverDnXgeev_bufferSize, "cusolverDnXgeev_bufferSize",                                \
    (cusolverDnHandle_t h, cusolverDnParams_t p, cusolverEigMode_t jobvl,                    \
     cusolverEigMode_t jobvr, int64_t n, cudaDataType_t a_type, const void* a, int64_t lda,  \
     cudaDataType_t w_type, const void* w, cudaDataType_t vl_type, const void* vl,           \
     int64_t ldvl, cudaDataType_t vr_type, const void* vr, int64_t ldvr,                     \
     cudaDataType_t compute, size_t* device_bytes, size_t* host_bytes))                      \
  X(cusolverDnXgeev, "cusolverDnXgeev",                                                      \
    (cusolverDnHandle_t h, cusolverDnParams_t p, cusolverEigMode_t jobvl,                    \
     cusolverEigMode_t jobvr, int64_t n, cudaDataType_t a_type, void* a, int64_t lda,        \
     cudaDataType_t w_type, void* w, cudaDataType_t vl_type, void* vl, int64_t ldvl,         \
     cudaDataType_t vr_type, void* vr, int64_t ldvr, cudaDataType_t compute,                 \
     void* device_work, size_t device_bytes, void* host_work, size_t host_bytes, int* info))

/// The loaded library: one function pointer per entry of the tables above.
struct CusolverApi {
#define XRT_DECLARE_CUSOLVER_FN(name, symbol, params) cusolverStatus_t (*name) params = nullptr;
  XRT_CUSOLVER_FUNCTIONS(XRT_DECLARE_CUSOLVER_FN)
  XRT_CUSOLVER_OPTIONAL_FUNCTIONS(XRT_DECLARE_CUSOLVER_FN)
#undef XRT_DECLARE_CUSOLVER_FN
};

/// cuSOLVER, resolved on first use; CudaError saying how to install it when it cannot be
/// loaded (or lacks one of the required functions).
const CusolverApi& cusolver();

/// Throws CudaError ("<what> failed: CUSOLVER_STATUS_... (n)"), or OutOfMemoryError for
/// CUSOLVER_STATUS_ALLOC_FAILED, unless status is CUSOLVER_STATUS_SUCCESS.
void check_cusolver(cusolverStatus_t status, const char* what);

/// The calling thread's cuSOLVER objects on one device, the handle bound to one stream.
struct SolverHandles {
  cusolverDnHandle_t dn = nullptr;
  cusolverDnParams_t params = nullptr;   ///< defaults (algorithm 0) for the generic API
  syevjInfo_t syevj = nullptr;           ///< Jacobi defaults, eigenvalues sorted
  gesvdjInfo_t gesvdj = nullptr;         ///< Jacobi defaults, singular values sorted
  CUstream stream = nullptr;
};

// gesvdj's and gesvdjBatched's sweep limit: set_svd_jacobi_max_sweeps
// (xpuruntime/cuda/libraries.h), 0 by default, which keeps cuSOLVER's own (100).

/// Makes device current and returns the calling thread's handles on it, bound to stream.
/// Created once per (device, thread) and handed to the next thread when this one ends, as
/// the cuBLAS handles are (Note [cuBLAS handles]).
const SolverHandles& solver_handles(int device, CUstream stream);

}  // namespace xrt::cuda

#define XRT_CUSOLVER(call_name, ...) \
  ::xrt::cuda::check_cusolver(::xrt::cuda::cusolver().call_name(__VA_ARGS__), #call_name)
