// cpp/src/cuda/linalg_svd_kernels.cpp: the SVD on CUDA (svd, svdvals) and what is built on
// it (pinv, matrix_rank: device kernels and a cuBLAS product after it, no host round trip
// of the data).
//
// Note [SVD drivers on CUDA]: cuSOLVER has three routines that fit, and each wins
// somewhere (times on an H200, CUDA 13, reduced SVD of Gaussian matrices, Xgesvd / gesvdj):
//  - gesvdjBatched (Jacobi, one launch for the stack): stacks of matrices up to 32 x 32;
//  - gesvdj (Jacobi, one call per matrix): the singular vectors of larger matrices, as in
//    PyTorch: 2048^2 float32 287 / 215 ms, float64 427 / 356 ms, 4096 x 1024 float32
//    130 / 53 ms, 64 matrices 512^2 2269 / 1153 ms;
//  - Xgesvd (QR iteration after a bidiagonal reduction, one call per matrix): the 64-bit
//    sizes that gesvdj's 32-bit interface cannot take, and the fallback.
// For the values alone the choice follows benchmarks/sweep_cuda_svdvals.py (H100, CUDA 13,
// Xgesvd / gesvdj in ms): in single precision Jacobi wins from order 128 up to a smaller
// side of 1536 (128^2 3.3 / 2.9, 512^2 24.6 / 18.9, 1536^2 113 / 104, 2048 x 1024
// 67 / 56, a stack of 16 512^2 397 / 295, 4096 x 1024 73 / 58) and loses below (64^2
// 0.84 / 1.38) and above (3072^2 325-424 / 523); in double precision Xgesvd wins nearly
// everywhere (512^2 26 / 30, 2048^2 169 / 343, 4096 x 1024 72 / 92, a stack of 16 512^2
// 431 / 463; 128^2 and 8192 x 512 are ties). Complex types follow their real precision
// (not measured).
// Jacobi stops after a number of sweeps; a matrix it leaves unconverged (info > 0) is
// done again by Xgesvd, as PyTorch does. Its tolerance is the dtype's epsilon, as in
// PyTorch: cuSOLVER's default left pinv of a matrix of condition 1e12 (test_linalg)
// 2x outside the test's tolerance. The "cusolver" kernel chooses as above; the kernels
// "cusolver_gesvd" and "cusolver_gesvdj" run one routine for every shape (a KernelPolicy
// pin, e.g. for ill-conditioned matrices, where Jacobi can need many more sweeps).
//
// All of them wait for their info codes (Note [Linalg errors on CUDA]) and follow the CPU
// where a matrix is not finite: a NaN raises LinAlgError (LAPACK's gesdd refuses it), an
// infinity gives NaN singular values.
#include <algorithm>
#include <climits>
#include <limits>
#include <vector>

#include "core/host/matrix_stack.h"
#include "cuda/linalg_common.h"
#include "cuda/kernels.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/linalg.h"
#include "xpuruntime/ops.h"

namespace xrt::cuda {
namespace {

using namespace solver;
using host::stack_position;

enum class Driver { Auto, Qr, Jacobi };

/// The SVD's outputs: contiguous buffers s (count, k) and, for the vectors, u (count, m, m
/// or k) and vh (count, n or k, n).
struct SvdOut {
  Tensor& s;
  Tensor* u;
  Tensor* vh;
  bool full;
  bool vectors() const { return u != nullptr; }
};

/// Matrix `index` of the contiguous stack t (its last `core` dimensions) as a stack of one.
Tensor stack_item(const Tensor& t, int core, int64_t index) {
  Dims shape{1}, strides{0};
  int64_t per = 1;
  for (int d = t.ndim() - core; d < t.ndim(); ++d) {
    shape.push_back(t.shape()[d]);
    per *= t.shape()[d];
  }
  for (int d = 1; d <= core; ++d) {
    int64_t stride = 1;
    for (int e = d + 1; e <= core; ++e) stride *= shape[e];
    strides.push_back(stride);
  }
  strides[0] = per;
  return t.as_strided(shape, strides, t.byte_offset() + index * per * int64_t(t.itemsize()));
}

char* matrix_at(const Tensor& t, int64_t index, int64_t elements) {
  return t.data() + index * elements * int64_t(t.itemsize());
}

// ---- the three routines ---------------------------------------------------------------------

// gesvdjBatched of A^T (n x m) = U' S V'^H: Vh = U'^T is U' read row-major, U = conj(V').
// Note: U' and V' are passed for singular values alone too: a run that passed null
// pointers there made an illegal memory access (H200, CUDA 13, a stack of 7 x 3).
void jacobi_batched_svd(const Context& ctx, const Tensor& x, const SvdOut& out, int* codes) {
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back(), k = std::min(m, n);
  const int64_t count = stack_count(x, 2);
  const DType dtype = x.dtype();
  const SolverHandles& h = ctx.solver();
  Tensor a = row_major_copy(x);
  Tensor u1 = empty(stack_shape(x, {n, n}), dtype, ctx.where);
  Tensor v1 = empty(stack_shape(x, {m, m}), dtype, ctx.where);
  const cusolverEigMode_t jobz =
      out.vectors() ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const CusolverApi& api = cusolver();
  auto size = typed(dtype, api.cusolverDnSgesvdjBatched_bufferSize,
                    api.cusolverDnDgesvdjBatched_bufferSize,
                    api.cusolverDnCgesvdjBatched_bufferSize,
                    api.cusolverDnZgesvdjBatched_bufferSize);
  auto gesvdj = typed(dtype, api.cusolverDnSgesvdjBatched, api.cusolverDnDgesvdjBatched,
                      api.cusolverDnCgesvdjBatched, api.cusolverDnZgesvdjBatched);
  int lwork = 0;
  check_cusolver(size(h.dn, jobz, int(n), int(m), a.data(), int(n), out.s.data(), u1.data(),
                      int(n), v1.data(), int(m), &lwork, h.gesvdj, int(count)),
                 "cusolverDnXgesvdjBatched_bufferSize");
  auto work = workspace(ctx, static_cast<size_t>(std::max(lwork, 1)) * x.itemsize());
  check_cusolver(gesvdj(h.dn, jobz, int(n), int(m), a.data(), int(n), out.s.data(), u1.data(),
                        int(n), v1.data(), int(m), work->data(), lwork, codes, h.gesvdj,
                        int(count)),
                 "cusolverDnXgesvdjBatched");
  if (!out.vectors()) return;
  const int64_t u_cols = out.full ? m : k, vh_rows = out.full ? n : k;
  Dims rows = u1.shape();
  rows[rows.size() - 2] = vh_rows;  // the first vh_rows rows of U' read row-major
  copy_into(*out.vh, u1.as_strided(rows, u1.strides(), u1.byte_offset()));
  copy_matrices(*out.u, column_major_view(v1, m, u_cols), Triangle::All, true);
}

// gesvdj per matrix, on a column-major rows x cols matrix with rows >= cols = k (which it
// handles either way; this keeps the copies fewest):
//  - m <= n: A^T as it is (n x m). A^T = U' S V'^H gives Vh = U'^T, which is U' read
//    row-major (written in place), and U = conj(V'), a transposed copy of V';
//  - m > n: a column-major copy of A = U S V^H. U comes back through a transposed copy;
//    Vh = V^H is conj(V read row-major), V written in place into Vh.
void jacobi_svd(const Context& ctx, const Tensor& x, const SvdOut& out, int* codes) {
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back(), k = std::min(m, n);
  const int64_t count = stack_count(x, 2);
  const DType dtype = x.dtype();
  const bool vectors = out.vectors(), wide = m <= n, complex = is_complex(dtype);
  const int64_t rows = wide ? n : m, cols = k;
  const int64_t left_cols = vectors && out.full ? rows : k;
  const int64_t real_item = int64_t(itemsize(out.s.dtype()));
  const SolverHandles& h = ctx.solver();
  Tensor a = wide ? row_major_copy(x) : column_major_copy(x);
  // The left vectors (rows x left_cols) and the right ones (cols x cols), column-major;
  // one matrix of scratch each when only the values are wanted (see jacobi_batched_svd).
  Tensor left, right;
  if (vectors && wide) left = *out.vh;
  else left = empty(vectors ? stack_shape(x, {left_cols, rows}) : Dims{left_cols, rows}, dtype,
                    ctx.where);
  if (vectors && !wide) right = *out.vh;
  else right = empty(vectors ? stack_shape(x, {cols, cols}) : Dims{cols, cols}, dtype, ctx.where);
  const int64_t left_step = vectors ? rows * left_cols : 0, right_step = vectors ? cols * cols : 0;
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int econ = vectors && out.full ? 0 : 1;
  const CusolverApi& api = cusolver();
  auto size = typed(dtype, api.cusolverDnSgesvdj_bufferSize, api.cusolverDnDgesvdj_bufferSize,
                    api.cusolverDnCgesvdj_bufferSize, api.cusolverDnZgesvdj_bufferSize);
  auto gesvdj = typed(dtype, api.cusolverDnSgesvdj, api.cusolverDnDgesvdj, api.cusolverDnCgesvdj,
                      api.cusolverDnZgesvdj);
  int lwork = 0;
  check_cusolver(size(h.dn, jobz, econ, int(rows), int(cols), a.data(), int(rows), out.s.data(),
                      left.data(), int(rows), right.data(), int(cols), &lwork, h.gesvdj),
                 "cusolverDnXgesvdj_bufferSize");
  auto work = workspace(ctx, static_cast<size_t>(std::max(lwork, 1)) * x.itemsize());
  for (int64_t i = 0; i < count; ++i)
    check_cusolver(gesvdj(h.dn, jobz, econ, int(rows), int(cols), matrix_at(a, i, rows * cols),
                          int(rows), out.s.data() + i * k * real_item,
                          matrix_at(left, i, left_step), int(rows),
                          matrix_at(right, i, right_step), int(cols), work->data(), lwork,
                          codes + i, h.gesvdj),
                   "cusolverDnXgesvdj");
  if (!vectors) return;
  if (wide) {
    copy_matrices(*out.u, column_major_view(right, m, m), Triangle::All, true);
  } else {
    copy_matrices(*out.u, column_major_view(left, m, left_cols));
    if (complex) conj_into(*out.vh, *out.vh);
  }
}

// Xgesvd per matrix; it takes rows >= columns only.
void qr_svd(const Context& ctx, const Tensor& x, const SvdOut& out, int* codes) {
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back(), k = std::min(m, n);
  const int64_t count = stack_count(x, 2);
  const bool vectors = out.vectors();
  const int64_t u_cols = out.full ? m : k, vh_rows = out.full ? n : k;
  const DType dtype = x.dtype();
  const int64_t real_item = int64_t(itemsize(out.s.dtype()));
  const cudaDataType_t type = data_type(dtype), real = real_data_type(dtype);
  const SolverHandles& h = ctx.solver();
  const signed char job = !vectors ? 'N' : out.full ? 'A' : 'S';
  char* s = out.s.data();
  if (n >= m) {
    // gesvd of A^T (n x m): its U' is Vh read row-major and its V'^H is U (Note [Row-major
    // matrices through cuSOLVER]), so both are written where they belong.
    Tensor a = row_major_copy(x);
    const int64_t ldvt = vectors ? u_cols : 1;
    char* vh = vectors ? out.vh->data() : nullptr;
    char* u = vectors ? out.u->data() : nullptr;
    size_t device_bytes = 0, host_bytes = 0;
    XRT_CUSOLVER(cusolverDnXgesvd_bufferSize, h.dn, h.params, job, job, n, m, type, a.data(), n,
                 real, s, type, vh, n, type, u, ldvt, type, &device_bytes, &host_bytes);
    auto work = workspace(ctx, device_bytes);
    HostWorkspace host(ctx, host_bytes);
    for (int64_t i = 0; i < count; ++i)
      XRT_CUSOLVER(cusolverDnXgesvd, h.dn, h.params, job, job, n, m, type,
                   matrix_at(a, i, m * n), n, real, s + i * k * real_item, type,
                   vectors ? matrix_at(*out.vh, i, vh_rows * n) : nullptr, n, type,
                   vectors ? matrix_at(*out.u, i, m * u_cols) : nullptr, ldvt, type,
                   work->data(), device_bytes, host.data(), host_bytes, codes + i);
    return;
  }
  // Tall: gesvd of a column-major copy, the factors copied back.
  Tensor a = column_major_copy(x);
  Tensor u1 = vectors ? empty(stack_shape(x, {u_cols, m}), dtype, ctx.where) : Tensor();
  Tensor vt1 = vectors ? empty(stack_shape(x, {n, vh_rows}), dtype, ctx.where) : Tensor();
  const int64_t ldvt = vectors ? vh_rows : 1;
  size_t device_bytes = 0, host_bytes = 0;
  XRT_CUSOLVER(cusolverDnXgesvd_bufferSize, h.dn, h.params, job, job, m, n, type, a.data(), m,
               real, s, type, vectors ? u1.data() : nullptr, m, type,
               vectors ? vt1.data() : nullptr, ldvt, type, &device_bytes, &host_bytes);
  auto work = workspace(ctx, device_bytes);
  HostWorkspace host(ctx, host_bytes);
  for (int64_t i = 0; i < count; ++i)
    XRT_CUSOLVER(cusolverDnXgesvd, h.dn, h.params, job, job, m, n, type, matrix_at(a, i, m * n),
                 m, real, s + i * k * real_item, type,
                 vectors ? matrix_at(u1, i, m * u_cols) : nullptr, m, type,
                 vectors ? matrix_at(vt1, i, vh_rows * n) : nullptr, ldvt, type, work->data(),
                 device_bytes, host.data(), host_bytes, codes + i);
  if (vectors) {
    copy_matrices(*out.u, column_major_view(u1, m, u_cols));
    copy_matrices(*out.vh, column_major_view(vt1, vh_rows, n));
  }
}

// ---- the choice -----------------------------------------------------------------------------

enum class Routine { JacobiBatched, Jacobi, Qr };

// gesvdj's interface is 32-bit: a matrix (and a full U or V) must have fewer than 2^31
// elements.
bool jacobi_fits(int64_t m, int64_t n) {
  const int64_t order = std::max(m, n);
  return order <= INT_MAX / order;
}

Routine routine_for(Driver driver, DType dtype, int64_t count, int64_t m, int64_t n,
                    bool vectors) {
  if (driver == Driver::Qr || !jacobi_fits(m, n)) return Routine::Qr;
  if (driver == Driver::Jacobi) return Routine::Jacobi;
  if (jacobi_batched(count, std::max(m, n))) return Routine::JacobiBatched;
  if (vectors) return Routine::Jacobi;
  // Values alone: Xgesvd's 'N' job skips the vectors' work that Jacobi cannot; where
  // Jacobi still wins is measured (the Note above).
  const bool single = dtype == DType::Float32 || dtype == DType::Complex64;
  const int64_t small = std::min(m, n), large = std::max(m, n);
  return single && large >= 128 && (small <= 1536 || large >= 4 * small) ? Routine::Jacobi
                                                                           : Routine::Qr;
}

// The SVD of x's count matrices (m x n, k = min(m, n) > 0) into out's buffers. Waits for
// the info codes, does again with Xgesvd what Jacobi left unconverged, and raises as the
// CPU does (see the top of this file).
void svd_into(const Context& ctx, const Tensor& x, const SvdOut& out, const char* op,
              Driver driver = Driver::Auto) {
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back();
  const int64_t count = stack_count(x, 2);
  Tensor info = info_buffer(ctx, count);
  int* codes = reinterpret_cast<int*>(info.data());
  Tensor flags = nonfinite_flags(x, Triangle::All);
  const Routine routine = routine_for(driver, x.dtype(), count, m, n, out.vectors());
  if (routine != Routine::Qr) {
    // The machine epsilon of the dtype, as PyTorch sets it.
    const bool single = x.dtype() == DType::Float32 || x.dtype() == DType::Complex64;
    const int sweeps = svd_jacobi_max_sweeps();
    const gesvdjInfo_t params = ctx.solver().gesvdj;
    XRT_CUSOLVER(cusolverDnXgesvdjSetTolerance, params,
                 single ? double(std::numeric_limits<float>::epsilon())
                        : std::numeric_limits<double>::epsilon());
    XRT_CUSOLVER(cusolverDnXgesvdjSetMaxSweeps, params, sweeps ? sweeps : 100);
  }
  switch (routine) {
    case Routine::JacobiBatched: jacobi_batched_svd(ctx, x, out, codes); break;
    case Routine::Jacobi: jacobi_svd(ctx, x, out, codes); break;
    case Routine::Qr: qr_svd(ctx, x, out, codes); break;
  }
  if (first_nonzero(info, &flags) < 0) return;
  std::vector<int32_t> failed = read_back(info), bad = read_back(flags);
  Tensor matrices;  // x's matrices, contiguous, for the fallback
  for (int64_t i = 0; i < count; ++i) {
    if (routine == Routine::Qr || bad[i] != 0 || failed[i] == 0) continue;
    // Jacobi did not converge: Xgesvd on this matrix, into the same outputs.
    if (!matrices.defined()) matrices = contiguous(x);
    Tensor s_i = stack_item(out.s, 1, i), u_i, vh_i;
    if (out.vectors()) {
      u_i = stack_item(*out.u, 2, i);
      vh_i = stack_item(*out.vh, 2, i);
    }
    Tensor retry = info_buffer(ctx, 1);
    qr_svd(ctx, stack_item(matrices, 2, i),
           SvdOut{s_i, out.vectors() ? &u_i : nullptr, out.vectors() ? &vh_i : nullptr, out.full},
           reinterpret_cast<int*>(retry.data()));
    failed[i] = read_back(retry)[0];
  }
  for (int64_t i = 0; i < count; ++i) {
    if (bad[i] == 2 || (bad[i] == 0 && failed[i] != 0))
      throw LinAlgError(std::string(op) + ": the SVD did not converge (NaN in the matrix?)" +
                        stack_position(x, 2, i));
    if (bad[i] == 1) fill_nan(out.s, i);
  }
}

// svd (U, S, Vh) or svdvals (S); full or reduced follows from the shapes of U and Vh.
template <Driver driver> void svd_kernel(const KernelCall& call) {
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
    svd_into(ctx, x, SvdOut{s.buffer, nullptr, nullptr, false}, "svdvals", driver);
    s.finish();
    return;
  }
  const bool full = call.out(0).shape().back() == m && call.out(2).shape()[x.ndim() - 2] == n;
  Output u(call.out(0)), s(call.out(1)), vh(call.out(2));
  svd_into(ctx, x, SvdOut{s.buffer, &u.buffer, &vh.buffer, full}, "svd", driver);
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
  svd_into(ctx, x, SvdOut{s, &u, &vh, false}, "pinv");
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
  svd_into(ctx, x, SvdOut{s, nullptr, nullptr, false}, "matrix_rank");
  Tensor tolerance = contiguous(rtol);
  void *sv = s.data(), *t = tolerance.data(), *o = result.data();
  long long kk = k, matrices = count;
  launch_helper(ctx, Helper::Rank, x.dtype(), false, count, {&sv, &t, &kk, &matrices, &o});
  result.finish();
}

}  // namespace

void register_linalg_svd_kernels(KernelRegistry& registry) {
  add_solver_kernel(registry, "svd", svd_kernel<Driver::Auto>,
                    "cuSOLVER gesvdj for the vectors; for values alone gesvdj in single "
                    "precision from order 128 to a smaller side of 1536, else Xgesvd; "
                    "gesvdjBatched for stacks of matrices up to 32 (Note [SVD drivers on CUDA])");
  // Below "cusolver": chosen by a KernelPolicy pin (or BestPerformance) only.
  add_solver_kernel(registry, "svd", svd_kernel<Driver::Qr>, "cuSOLVER Xgesvd for every shape",
                    {}, -10, "cusolver_gesvd");
  add_solver_kernel(registry, "svd", svd_kernel<Driver::Jacobi>,
                    "cuSOLVER gesvdj for every shape (Xgesvd where Jacobi does not converge "
                    "or the sizes pass 32 bits)", {}, -10, "cusolver_gesvdj");
  add_solver_kernel(registry, "pinv", pinv_kernel,
                    "the SVD, rows scaled on the device, cuBLAS gemm");
  add_solver_kernel(registry, "matrix_rank", matrix_rank_kernel,
                    "the SVD, singular values counted on the device");
}

}  // namespace xrt::cuda
