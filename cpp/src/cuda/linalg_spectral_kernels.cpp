// cpp/src/cuda/linalg_spectral_kernels.cpp: eigen- and singular value kernels of linalg on
// CUDA (eigh, eig, svd) and those built on the SVD (pinv, matrix_rank: device kernels and a
// cuBLAS product after it, no host round trip of the data).
//
// Stacks of matrices up to 32 x 32 go through the batched Jacobi routines (syevjBatched,
// gesvdjBatched), larger ones through one Xsyevd / Xgesvd / Xgeev call per matrix.
// All of these wait for their info codes (Note [Linalg errors on CUDA]) and follow the
// CPU where a matrix is not finite:
//  - svd, pinv, matrix_rank: a NaN raises LinAlgError (LAPACK's gesdd refuses it), an
//    infinity gives NaN singular values;
//  - eigh: a matrix with a NaN or an infinity in its lower triangle gets NaN eigenvalues
//    (LAPACK's heevd returns NaN there), never an error;
//  - eig: NaN or infinity raises before anything runs, as on the CPU.
#include <climits>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/linalg_common.h"
#include "cuda/linalg_common.h"
#include "cuda/kernels.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/linalg.h"
#include "xpuruntime/ops.h"

namespace xrt::cuda {
namespace {

using namespace solver;
using cpu::stack_position;

constexpr int64_t kJacobiOrder = 32;  // the batched Jacobi routines' limit

bool jacobi_batched(int64_t count, int64_t order) {
  return count > 1 && count <= INT_MAX && order <= kJacobiOrder;
}

// Row `index` of the contiguous (count, k) tensor values set to NaN.
void fill_nan(Tensor& values, int64_t index) {
  const int64_t k = values.shape().back();
  Tensor row = values.as_strided(Dims{k}, Dims{1},
                                 values.byte_offset() + index * k * int64_t(values.itemsize()));
  copy_into(row, full(Dims{}, Scalar::from_float(std::numeric_limits<double>::quiet_NaN()),
                      values.dtype(), values.device()));
}

// ---- eigh -----------------------------------------------------------------------------------

// The rare end of eigh: some matrix is not finite or did not converge.
void finish_eigh(Tensor& values, const Tensor& x, const Tensor& info, const Tensor& flags) {
  std::vector<int32_t> failed = read_back(info), bad = read_back(flags);
  for (int64_t s = 0; s < stack_count(x, 2); ++s) {
    if (bad[s] != 0)
      fill_nan(values, s);
    else if (failed[s] != 0)
      throw LinAlgError("eigh: the eigenvalue algorithm did not converge" +
                        stack_position(x, 2, s));
  }
}

// eigh (values, vectors) or eigvalsh (values) of the lower triangle of a column-major copy
// of A, as the CPU; the vectors are copied back row-major.
void eigh_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const bool vectors = call.num_outputs == 2;
  const int64_t n = x.shape().back(), count = stack_count(x, 2);
  if (count == 0 || n == 0) return;
  Context ctx(x);
  const DType dtype = x.dtype();
  const int64_t item = static_cast<int64_t>(x.itemsize());
  Output values(call.out(0));
  Tensor a = column_major_copy(x);
  Tensor flags = nonfinite_flags(a, count, {n, n, 1, n, n * n}, Triangle::Lower);
  const cublasFillMode_t fill = CUBLAS_FILL_MODE_LOWER;
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  Tensor info = info_buffer(ctx, count);
  int* codes = reinterpret_cast<int*>(info.data());
  const SolverHandles& h = ctx.solver();
  const int64_t value_bytes = n * item / (is_complex(dtype) ? 2 : 1);
  if (jacobi_batched(count, n)) {
    const CusolverApi& api = cusolver();
    auto size = typed(dtype, api.cusolverDnSsyevjBatched_bufferSize,
                      api.cusolverDnDsyevjBatched_bufferSize,
                      api.cusolverDnCheevjBatched_bufferSize,
                      api.cusolverDnZheevjBatched_bufferSize);
    auto syevj = typed(dtype, api.cusolverDnSsyevjBatched, api.cusolverDnDsyevjBatched,
                       api.cusolverDnCheevjBatched, api.cusolverDnZheevjBatched);
    int lwork = 0;
    check_cusolver(size(h.dn, jobz, fill, int(n), a.data(), int(n), values.data(), &lwork, h.syevj,
                        int(count)),
                   "cusolverDnXsyevjBatched_bufferSize");
    auto work = workspace(ctx, static_cast<size_t>(std::max(lwork, 1)) * item);
    check_cusolver(syevj(h.dn, jobz, fill, int(n), a.data(), int(n), values.data(), work->data(),
                         lwork, codes, h.syevj, int(count)),
                   "cusolverDnXsyevjBatched");
  } else {
    const cudaDataType_t type = data_type(dtype), real = real_data_type(dtype);
    size_t device_bytes = 0, host_bytes = 0;
    XRT_CUSOLVER(cusolverDnXsyevd_bufferSize, h.dn, h.params, jobz, fill, n, type, a.data(), n,
                 real, values.data(), type, &device_bytes, &host_bytes);
    auto work = workspace(ctx, device_bytes);
    HostWorkspace host(ctx, host_bytes);
    for (int64_t s = 0; s < count; ++s)
      XRT_CUSOLVER(cusolverDnXsyevd, h.dn, h.params, jobz, fill, n, type,
                   a.data() + s * n * n * item, n, real, values.data() + s * value_bytes, type,
                   work->data(), device_bytes, host.data(), host_bytes, codes + s);
  }
  if (vectors) copy_matrices(call.out(1), column_major_view(a, n, n));
  if (first_nonzero(info, &flags) >= 0) finish_eigh(values.buffer, x, info, flags);
  values.finish();
}

// ---- eig ------------------------------------------------------------------------------------

// Xgeev (CUDA 12.6 and newer); values alone from A^T as it is (same eigenvalues), vectors
// from a column-major copy of A. Real matrices give geev's packed conjugate pairs, unpacked
// on the device into complex vectors as the CPU does.
void eig_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const bool vectors = call.num_outputs == 2;
  const int64_t n = x.shape().back(), count = stack_count(x, 2);
  if (count == 0 || n == 0) return;
  Tensor flags = nonfinite_flags(x, Triangle::All);
  if (int64_t s = first_nonzero(flags); s >= 0)
    throw LinAlgError("eig: the matrix contains NaN or infinity" + stack_position(x, 2, s));
  Context ctx(x);
  const DType dtype = x.dtype(), complex = call.out(0).dtype();
  const int64_t item = static_cast<int64_t>(x.itemsize());
  const int64_t complex_item = static_cast<int64_t>(itemsize(complex));
  const bool real_input = !is_complex(dtype);
  Tensor a = vectors ? column_major_copy(x) : row_major_copy(x);
  Output values(call.out(0));
  Tensor vr = vectors ? empty(stack_shape(x, {n, n}), dtype, ctx.where) : Tensor();
  const cusolverEigMode_t jobvr = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cudaDataType_t type = data_type(dtype), w_type = data_type(complex);
  Tensor info = info_buffer(ctx, count);
  int* codes = reinterpret_cast<int*>(info.data());
  const SolverHandles& h = ctx.solver();
  const CusolverApi& api = cusolver();
  size_t device_bytes = 0, host_bytes = 0;
  check_cusolver(api.cusolverDnXgeev_bufferSize(
                     h.dn, h.params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, type, a.data(), n,
                     w_type, values.data(), type, nullptr, n, type,
                     vectors ? vr.data() : nullptr, n, type, &device_bytes, &host_bytes),
                 "cusolverDnXgeev_bufferSize");
  auto work = workspace(ctx, device_bytes);
  HostWorkspace host(ctx, host_bytes);
  for (int64_t s = 0; s < count; ++s)
    check_cusolver(api.cusolverDnXgeev(h.dn, h.params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, type,
                                       a.data() + s * n * n * item, n, w_type,
                                       values.data() + s * n * complex_item, type, nullptr, n,
                                       type, vectors ? vr.data() + s * n * n * item : nullptr, n,
                                       type, work->data(), device_bytes, host.data(), host_bytes,
                                       codes + s),
                   "cusolverDnXgeev");
  if (int64_t s = first_nonzero(info); s >= 0)
    throw LinAlgError("eig: the QR algorithm did not converge" + stack_position(x, 2, s));
  if (vectors && real_input) {
    Output out(call.out(1));
    void *v = vr.data(), *w = values.data(), *o = out.data();
    long long order = n, matrices = count;
    launch_helper(ctx, Helper::RealEigenvectors, dtype, false, count * n,
                  {&v, &w, &order, &matrices, &o});
    out.finish();
  } else if (vectors) {
    copy_into(call.out(1), column_major_view(vr, n, n));
  }
  values.finish();
}

// Xgeev is optional in the table: without it eig stays with the host fallback. When
// cuSOLVER cannot be loaded at all, the kernel runs and says how to install it.
bool geev_available(const KernelCall&) {
  try {
    return cusolver().cusolverDnXgeev != nullptr;
  } catch (const CudaError&) {
    return true;
  }
}

// ---- svd ------------------------------------------------------------------------------------

// The SVD of x's count matrices (m x n, k = min(m, n) > 0) into contiguous buffers: s
// (count, k) and, when u and vh are given, u (count, m, m or k) and vh (count, n or k, n).
// Waits for the info codes and raises as the CPU does (see the top of this file).
void svd_into(const Context& ctx, const Tensor& x, Tensor& s, Tensor* u, Tensor* vh, bool full,
              const char* op) {
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back(), k = std::min(m, n);
  const int64_t count = stack_count(x, 2);
  const bool vectors = u != nullptr;
  const int64_t u_cols = full ? m : k, vh_rows = full ? n : k;
  const DType dtype = x.dtype();
  const int64_t item = static_cast<int64_t>(x.itemsize()), real_item = int64_t(itemsize(s.dtype()));
  const cudaDataType_t type = data_type(dtype), real = real_data_type(dtype);
  const SolverHandles& h = ctx.solver();
  Tensor info = info_buffer(ctx, count);
  int* codes = reinterpret_cast<int*>(info.data());
  const signed char job = !vectors ? 'N' : full ? 'A' : 'S';
  Tensor flags;
  auto device_part = [&](Tensor& t, int64_t index, int64_t elements) {
    return t.data() + index * elements * int64_t(t.itemsize());
  };
  if (jacobi_batched(count, std::max(m, n))) {
    // gesvdjBatched of A^T (n x m) = U' S V'^H: Vh = U'^T is U' read row-major, U = conj(V').
    // Note: U' and V' are passed for singular values alone too: a run that passed null
    // pointers there made an illegal memory access (H200, CUDA 13, a stack of 7 x 3).
    Tensor a = row_major_copy(x);
    flags = nonfinite_flags(a, count, {m, n, n, 1, m * n}, Triangle::All);
    Tensor u1 = empty(stack_shape(x, {n, n}), dtype, ctx.where);
    Tensor v1 = empty(stack_shape(x, {m, m}), dtype, ctx.where);
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const CusolverApi& api = cusolver();
    auto size = typed(dtype, api.cusolverDnSgesvdjBatched_bufferSize,
                      api.cusolverDnDgesvdjBatched_bufferSize,
                      api.cusolverDnCgesvdjBatched_bufferSize,
                      api.cusolverDnZgesvdjBatched_bufferSize);
    auto gesvdj = typed(dtype, api.cusolverDnSgesvdjBatched, api.cusolverDnDgesvdjBatched,
                        api.cusolverDnCgesvdjBatched, api.cusolverDnZgesvdjBatched);
    void* u_ptr = u1.data();
    void* v_ptr = v1.data();
    int lwork = 0;
    check_cusolver(size(h.dn, jobz, int(n), int(m), a.data(), int(n), s.data(), u_ptr, int(n),
                        v_ptr, int(m), &lwork, h.gesvdj, int(count)),
                   "cusolverDnXgesvdjBatched_bufferSize");
    auto work = workspace(ctx, static_cast<size_t>(std::max(lwork, 1)) * item);
    check_cusolver(gesvdj(h.dn, jobz, int(n), int(m), a.data(), int(n), s.data(), u_ptr, int(n),
                          v_ptr, int(m), work->data(), lwork, codes, h.gesvdj, int(count)),
                   "cusolverDnXgesvdjBatched");
    if (vectors) {
      Dims rows = u1.shape();
      rows[rows.size() - 2] = vh_rows;  // the first vh_rows rows of U' read row-major
      copy_into(*vh, u1.as_strided(rows, u1.strides(), u1.byte_offset()));
      Tensor v = column_major_view(v1, m, u_cols);
      if (is_complex(dtype))
        conj_into(*u, v);
      else
        copy_into(*u, v);
    }
  } else if (n >= m) {
    // gesvd of A^T (n x m): its U' is Vh read row-major and its V'^H is U (Note [Row-major
    // matrices through cuSOLVER]), so both are written where they belong.
    Tensor a = row_major_copy(x);
    flags = nonfinite_flags(a, count, {m, n, n, 1, m * n}, Triangle::All);
    const int64_t ldvt = vectors ? u_cols : 1;
    size_t device_bytes = 0, host_bytes = 0;
    XRT_CUSOLVER(cusolverDnXgesvd_bufferSize, h.dn, h.params, job, job, n, m, type, a.data(), n,
                 real, s.data(), type, vectors ? vh->data() : nullptr, n, type,
                 vectors ? u->data() : nullptr, ldvt, type, &device_bytes, &host_bytes);
    auto work = workspace(ctx, device_bytes);
    HostWorkspace host(ctx, host_bytes);
    for (int64_t i = 0; i < count; ++i)
      XRT_CUSOLVER(cusolverDnXgesvd, h.dn, h.params, job, job, n, m, type, device_part(a, i, m * n),
                   n, real, s.data() + i * k * real_item, type,
                   vectors ? device_part(*vh, i, vh_rows * n) : nullptr, n, type,
                   vectors ? device_part(*u, i, m * u_cols) : nullptr, ldvt, type, work->data(),
                   device_bytes, host.data(), host_bytes, codes + i);
  } else {
    // Tall: gesvd (rows >= columns only) of a column-major copy, the factors copied back.
    Tensor a = column_major_copy(x);
    flags = nonfinite_flags(a, count, {m, n, 1, m, m * n}, Triangle::All);
    Tensor u1 = vectors ? empty(stack_shape(x, {u_cols, m}), dtype, ctx.where) : Tensor();
    Tensor vt1 = vectors ? empty(stack_shape(x, {n, vh_rows}), dtype, ctx.where) : Tensor();
    const int64_t ldvt = vectors ? vh_rows : 1;
    size_t device_bytes = 0, host_bytes = 0;
    XRT_CUSOLVER(cusolverDnXgesvd_bufferSize, h.dn, h.params, job, job, m, n, type, a.data(), m,
                 real, s.data(), type, vectors ? u1.data() : nullptr, m, type,
                 vectors ? vt1.data() : nullptr, ldvt, type, &device_bytes, &host_bytes);
    auto work = workspace(ctx, device_bytes);
    HostWorkspace host(ctx, host_bytes);
    for (int64_t i = 0; i < count; ++i)
      XRT_CUSOLVER(cusolverDnXgesvd, h.dn, h.params, job, job, m, n, type, device_part(a, i, m * n),
                   m, real, s.data() + i * k * real_item, type,
                   vectors ? device_part(u1, i, m * u_cols) : nullptr, m, type,
                   vectors ? device_part(vt1, i, vh_rows * n) : nullptr, ldvt, type, work->data(),
                   device_bytes, host.data(), host_bytes, codes + i);
    if (vectors) {
      copy_matrices(*u, column_major_view(u1, m, u_cols));
      copy_matrices(*vh, column_major_view(vt1, vh_rows, n));
    }
  }
  if (first_nonzero(info, &flags) < 0) return;
  std::vector<int32_t> failed = read_back(info), bad = read_back(flags);
  for (int64_t i = 0; i < count; ++i) {
    if (bad[i] == 2 || (bad[i] == 0 && failed[i] != 0))
      throw LinAlgError(std::string(op) + ": the SVD did not converge (NaN in the matrix?)" +
                        stack_position(x, 2, i));
    if (bad[i] == 1) fill_nan(s, i);
  }
}

// svd (U, S, Vh) or svdvals (S); full or reduced follows from the shapes of U and Vh.
void svd_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const bool vectors = call.num_outputs == 3;
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back();
  if (stack_count(x, 2) == 0) return;
  if (std::min(m, n) == 0) {  // an empty matrix: U and Vh are empty or identities
    if (vectors)
      for (int i : {0, 2}) {
        Output identity(call.out(i));
        set_identity(identity.buffer);
        identity.finish();
      }
    return;
  }
  Context ctx(x);
  if (!vectors) {
    Output s(call.out(0));
    svd_into(ctx, x, s.buffer, nullptr, nullptr, false, "svdvals");
    s.finish();
    return;
  }
  const bool full = call.out(0).shape().back() == m && call.out(2).shape()[x.ndim() - 2] == n;
  Output u(call.out(0)), s(call.out(1)), vh(call.out(2));
  svd_into(ctx, x, s.buffer, &u.buffer, &vh.buffer, full, "svd");
  u.finish();
  s.finish();
  vh.finish();
}

// ---- pinv, matrix_rank ----------------------------------------------------------------------

// pinv(x) = V diag(1/s) U^H over the singular values above rtol * max(s): Vh's rows scaled
// on the device, then one strided batched product. Column-major, the output (n x m
// row-major) is the m x n matrix conj(U) conj(Vh') = op_C(U^T) op_C(Vh'^T), where U^T and
// Vh'^T are U and Vh' read column-major.
void pinv_kernel(const KernelCall& call) {
  const Tensor &x = call.in(0), &rtol = call.in(1);
  Tensor& out = call.out();
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back(), k = std::min(m, n);
  const int64_t count = stack_count(x, 2);
  if (count == 0 || k == 0) return;  // k = 0: the output is empty
  Context ctx(x);
  const DType dtype = x.dtype();
  Tensor s = empty(stack_shape(x, {k}), real_dtype(dtype), ctx.where);
  Tensor u = empty(stack_shape(x, {m, k}), dtype, ctx.where);
  Tensor vh = empty(stack_shape(x, {k, n}), dtype, ctx.where);
  svd_into(ctx, x, s, &u, &vh, false, "pinv");
  Tensor tolerance = contiguous(rtol);
  void *v = vh.data(), *sv = s.data(), *t = tolerance.data();
  long long rows = k, cols = n, total = count * k * n;
  launch_helper(ctx, Helper::ScaleRows, dtype, false, total, {&v, &sv, &t, &rows, &cols, &total});
  Output result(out);
  alignas(16) static const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  alignas(16) static const double one_d[2] = {1.0, 0.0}, zero_d[2] = {0.0, 0.0};
  const bool single = dtype == DType::Float32 || dtype == DType::Complex64;
  const cudaDataType_t type = data_type(dtype);
  check_cublas(cublas().cublasGemmStridedBatchedEx(
                   ctx.blas(), CUBLAS_OP_C, CUBLAS_OP_C, m, n, k,
                   single ? static_cast<const void*>(one_f) : one_d, u.data(), type, k, m * k,
                   vh.data(), type, n, k * n, single ? static_cast<const void*>(zero_f) : zero_d,
                   result.data(), type, m, m * n, count,
                   single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
  result.finish();
}

// The number of singular values above rtol * max(s) (int64), counted on the device.
void matrix_rank_kernel(const KernelCall& call) {
  const Tensor &x = call.in(0), &rtol = call.in(1);
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back(), k = std::min(m, n);
  const int64_t count = stack_count(x, 2);
  if (count == 0) return;
  Context ctx(x);
  Output result(call.out());
  if (k == 0) {
    XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(result.data()), 0,
           static_cast<size_t>(count) * 8, ctx.stream);
    result.finish();
    return;
  }
  Tensor s = empty(stack_shape(x, {k}), real_dtype(x.dtype()), ctx.where);
  svd_into(ctx, x, s, nullptr, nullptr, false, "matrix_rank");
  Tensor tolerance = contiguous(rtol);
  void *sv = s.data(), *t = tolerance.data(), *o = result.data();
  long long kk = k, matrices = count;
  launch_helper(ctx, Helper::Rank, x.dtype(), false, count, {&sv, &t, &kk, &matrices, &o});
  result.finish();
}

}  // namespace

void register_linalg_spectral_kernels(KernelRegistry& registry) {
  add_solver_kernel(registry, "eigh", eigh_kernel,
                    "cuSOLVER Xsyevd (syevjBatched for stacks of matrices up to 32)");
  add_solver_kernel(registry, "eig", eig_kernel, "cuSOLVER Xgeev (CUDA 12.6 and newer)",
                    geev_available);
  add_solver_kernel(registry, "svd", svd_kernel,
                    "cuSOLVER Xgesvd (gesvdjBatched for stacks of matrices up to 32)");
  add_solver_kernel(registry, "pinv", pinv_kernel,
                    "the SVD, rows scaled on the device, cuBLAS gemm");
  add_solver_kernel(registry, "matrix_rank", matrix_rank_kernel,
                    "the SVD, singular values counted on the device");
}

}  // namespace xrt::cuda
