// cpp/src/cuda/linalg_kernels.cpp: the LU, Cholesky and QR kernels of linalg on CUDA
// (cuSOLVER, and cuBLAS's batched LU for stacks of small matrices), and the registration
// of every CUDA linalg kernel.
//
// Inputs arrive in the compute dtype (float32/64, complex64/128), broadcast to the stack
// shape; outputs are allocated by the op. Layouts: Note [Row-major matrices through
// cuSOLVER]; errors: Note [Linalg errors on CUDA] (both in linalg_common.h).
#include <climits>
#include <vector>

#include "core/host/matrix_stack.h"
#include "cuda/kernels.h"
#include "cuda/linalg_common.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/linalg.h"
#include "xpuruntime/ops.h"

namespace xrt::cuda {
namespace {

using namespace solver;
using host::stack_position;

// Stacks of matrices up to this order go through the batched routines (one launch for the
// stack) rather than one cuSOLVER call per matrix.
constexpr int64_t kBatchedLuOrder = 32;
constexpr int64_t kBatchedCholeskyOrder = 128;

bool batched(int64_t count, int64_t n, int64_t largest) {
  return count > 1 && count <= INT_MAX && n <= largest;
}

// ---- LU -------------------------------------------------------------------------------------

// The LU factors of the count n x n matrices of the contiguous buffer a, in place (a holds
// A^T column-major), with their 1-based pivots and info codes.
struct LuFactors {
  Tensor pivots;    // int32 (batched) or int64, n per matrix
  Tensor info;      // int32 per matrix: i > 0 when U(i, i) is exactly zero
  Tensor pointers;  // the batched routines' pointer array over a
  bool batched = false;
};

LuFactors lu_factor(const Context& ctx, Tensor& a, int64_t count, int64_t n) {
  LuFactors lu;
  const DType dtype = a.dtype();
  const int64_t item = static_cast<int64_t>(a.itemsize());
  lu.info = info_buffer(ctx, count);
  lu.batched = batched(count, n, kBatchedLuOrder);
  if (lu.batched) {
    lu.pivots = empty(Dims{count * n}, DType::Int32, ctx.where);
    lu.pointers = pointer_array(ctx, a.data(), n * n * item, count);
    const CublasApi& api = cublas();
    auto getrf = typed(dtype, api.cublasSgetrfBatched, api.cublasDgetrfBatched,
                       api.cublasCgetrfBatched, api.cublasZgetrfBatched);
    check_cublas(getrf(ctx.blas(), int(n), reinterpret_cast<void* const*>(lu.pointers.data()),
                       int(n), reinterpret_cast<int*>(lu.pivots.data()),
                       reinterpret_cast<int*>(lu.info.data()), int(count)),
                 "cublasXgetrfBatched");
    return lu;
  }
  lu.pivots = empty(Dims{count * n}, DType::Int64, ctx.where);
  const SolverHandles& h = ctx.solver();
  const cudaDataType_t type = data_type(dtype);
  size_t device_bytes = 0, host_bytes = 0;
  XRT_CUSOLVER(cusolverDnXgetrf_bufferSize, h.dn, h.params, n, n, type, a.data(), n, type,
               &device_bytes, &host_bytes);
  auto work = workspace(ctx, device_bytes);
  HostWorkspace host(ctx, host_bytes);
  for (int64_t s = 0; s < count; ++s)
    XRT_CUSOLVER(cusolverDnXgetrf, h.dn, h.params, n, n, type, a.data() + s * n * n * item, n,
                 reinterpret_cast<int64_t*>(lu.pivots.data()) + s * n, type, work->data(),
                 device_bytes, host.data(), host_bytes,
                 reinterpret_cast<int*>(lu.info.data()) + s);
  return lu;
}

// det (one output) or slogdet (sign, logabsdet) from the LU of A^T (det(A^T) = det(A));
// never waits: a singular matrix has a zero pivot, hence det 0 (sign 0, -inf).
void determinant_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const bool log_form = call.num_outputs == 2;
  const int64_t n = x.shape().back(), count = stack_count(x, 2);
  if (count == 0) return;
  Context ctx(x);
  Tensor a;
  LuFactors lu;
  if (n > 0) {
    a = row_major_copy(x);
    lu = lu_factor(ctx, a, count, n);
  }
  void* lu_ptr = n > 0 ? a.data() : nullptr;
  void* pivots = n > 0 ? lu.pivots.data() : nullptr;
  long long order = n, matrices = count;
  Output first(call.out(0));
  void* first_ptr = first.data();
  if (!log_form) {
    launch_helper(ctx, Helper::Det, x.dtype(), !lu.batched, count,
                  {&lu_ptr, &order, &pivots, &matrices, &first_ptr});
    first.finish();
    return;
  }
  Output second(call.out(1));
  void* second_ptr = second.data();
  launch_helper(ctx, Helper::LogDet, x.dtype(), !lu.batched, count,
                {&lu_ptr, &order, &pivots, &matrices, &first_ptr, &second_ptr});
  first.finish();
  second.finish();
}

// inv (one input: the inverse of A^T, in place, is inv(A) row-major) and solve (A, B: the
// LU of A^T solves A X = B with op T; B column-major).
void solve_kernel(const KernelCall& call) {
  const bool inverse = call.num_inputs == 1;
  const Tensor& a_in = call.in(0);
  Tensor& out = call.out();
  const int64_t n = a_in.shape().back(), k = out.shape().back(), count = stack_count(out, 2);
  if (count == 0 || n == 0 || k == 0) return;
  Context ctx(a_in);
  const DType dtype = a_in.dtype();
  const int64_t item = static_cast<int64_t>(a_in.itemsize());
  Tensor a = row_major_copy(a_in);
  LuFactors lu = lu_factor(ctx, a, count, n);
  Output result(out);
  Tensor scratch_info = info_buffer(ctx, lu.batched && !inverse ? 1 : count);  // bad arguments
  int* scratch = reinterpret_cast<int*>(scratch_info.data());
  const CublasApi* blas = lu.batched ? &cublas() : nullptr;
  const SolverHandles* h = lu.batched ? nullptr : &ctx.solver();
  const cudaDataType_t type = data_type(dtype);
  auto pivots64 = [&](int64_t s) {
    return reinterpret_cast<const int64_t*>(lu.pivots.data()) + s * n;
  };
  if (inverse) {
    if (lu.batched) {
      Tensor c = pointer_array(ctx, result.data(), n * n * item, count);
      auto getri = typed(dtype, blas->cublasSgetriBatched, blas->cublasDgetriBatched,
                         blas->cublasCgetriBatched, blas->cublasZgetriBatched);
      check_cublas(getri(ctx.blas(), int(n),
                         reinterpret_cast<const void* const*>(lu.pointers.data()), int(n),
                         reinterpret_cast<const int*>(lu.pivots.data()),
                         reinterpret_cast<void* const*>(c.data()), int(n), scratch, int(count)),
                   "cublasXgetriBatched");
    } else {
      set_identity(result.buffer);
      for (int64_t s = 0; s < count; ++s)
        XRT_CUSOLVER(cusolverDnXgetrs, h->dn, h->params, CUBLAS_OP_N, n, n, type,
                     a.data() + s * n * n * item, n, pivots64(s), type,
                     result.data() + s * n * n * item, n, scratch + s);
    }
  } else {
    // A single column is its own transpose: it is solved in the output itself.
    Tensor b;
    if (k == 1) {
      copy_into(result.buffer, call.in(1));
      b = result.buffer;
    } else {
      b = column_major_copy(call.in(1));
    }
    if (lu.batched) {
      Tensor b_pointers = pointer_array(ctx, b.data(), n * k * item, count);
      auto getrs = typed(dtype, blas->cublasSgetrsBatched, blas->cublasDgetrsBatched,
                         blas->cublasCgetrsBatched, blas->cublasZgetrsBatched);
      int host_info = 0;
      check_cublas(getrs(ctx.blas(), CUBLAS_OP_T, int(n), int(k),
                         reinterpret_cast<const void* const*>(lu.pointers.data()), int(n),
                         reinterpret_cast<const int*>(lu.pivots.data()),
                         reinterpret_cast<void* const*>(b_pointers.data()), int(n), &host_info,
                         int(count)),
                   "cublasXgetrsBatched");
      if (host_info != 0)
        throw CudaError("cublasXgetrsBatched rejected its argument " + std::to_string(-host_info));
    } else {
      for (int64_t s = 0; s < count; ++s)
        XRT_CUSOLVER(cusolverDnXgetrs, h->dn, h->params, CUBLAS_OP_T, n, k, type,
                     a.data() + s * n * n * item, n, pivots64(s), type,
                     b.data() + s * n * k * item, n, scratch + s);
    }
    if (k != 1) copy_matrices(result.buffer, column_major_view(b, n, k));
  }
  result.finish();
  int64_t s = first_failure(lu.info, a_in, Triangle::All, "getrf");
  if (s >= 0)
    throw LinAlgError(std::string(inverse ? "inv" : "solve") + ": the matrix is singular" +
                      stack_position(out, 2, s));
}

// ---- Cholesky -------------------------------------------------------------------------------

// potrf with the lower triangle: with the upper one (CuPy's choice, and this kernel's at
// first) a 4096 x 4096 factor took 2.4 times PyTorch's time on an H200. upper: potrf of A^T
// (A as it is, read column-major) reads A's upper triangle and leaves U^T column-major,
// which is U row-major; lower: potrf of a column-major copy of A, whose L is copied back
// row-major (Note [Row-major matrices through cuSOLVER]). The other triangle is zeroed by
// the same copy. Both copies of the lower factor are tiled transposes (copy_matrices):
// PyTorch makes one strided copy and zeroes in place, as its result stays column-major;
// with strided copies here too (one element read per 32-byte sector), 4096 x 4096 float32
// took 1.05 times PyTorch's time, with the tiled ones 0.92 (H200, potrf unchanged).
void cholesky_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  Tensor& out = call.out();
  const bool upper = call.attrs->value.to<bool>();
  const int64_t n = x.shape().back(), count = stack_count(x, 2);
  if (count == 0 || n == 0) return;
  Context ctx(x);
  const DType dtype = x.dtype();
  const int64_t item = static_cast<int64_t>(x.itemsize());
  Output result(out);
  Tensor a;
  if (upper) {
    copy_into(result.buffer, x);
    a = result.buffer;
  } else {
    a = column_major_copy(x);
  }
  const cublasFillMode_t fill = CUBLAS_FILL_MODE_LOWER;
  Tensor info = info_buffer(ctx, count);
  int* codes = reinterpret_cast<int*>(info.data());
  const SolverHandles& h = ctx.solver();
  if (batched(count, n, kBatchedCholeskyOrder)) {
    Tensor pointers = pointer_array(ctx, a.data(), n * n * item, count);
    const CusolverApi& api = cusolver();
    auto potrf = typed(dtype, api.cusolverDnSpotrfBatched, api.cusolverDnDpotrfBatched,
                       api.cusolverDnCpotrfBatched, api.cusolverDnZpotrfBatched);
    check_cusolver(potrf(h.dn, fill, int(n), reinterpret_cast<void**>(pointers.data()), int(n),
                         codes, int(count)),
                   "cusolverDnXpotrfBatched");
  } else {
    const cudaDataType_t type = data_type(dtype);
    size_t device_bytes = 0, host_bytes = 0;
    XRT_CUSOLVER(cusolverDnXpotrf_bufferSize, h.dn, h.params, fill, n, type, a.data(), n, type,
                 &device_bytes, &host_bytes);
    auto work = workspace(ctx, device_bytes);
    HostWorkspace host(ctx, host_bytes);
    for (int64_t s = 0; s < count; ++s)
      XRT_CUSOLVER(cusolverDnXpotrf, h.dn, h.params, fill, n, type, a.data() + s * n * n * item,
                   n, type, work->data(), device_bytes, host.data(), host_bytes, codes + s);
  }
  if (upper)
    triangle_into(result.buffer, result.buffer, false);
  else
    copy_matrices(result.buffer, column_major_view(a, n, n), Triangle::Lower);
  result.finish();
  int64_t s = first_failure(info, x, upper ? Triangle::Upper : Triangle::Lower, "potrf");
  if (s >= 0)
    throw LinAlgError("cholesky: the matrix is not positive definite" + stack_position(out, 2, s));
}

// ---- QR -------------------------------------------------------------------------------------

// geqrf and orgqr/ungqr on a column-major copy (one call each per matrix); the shapes of
// the outputs say which mode was asked for, as on the CPU. Never waits.
void qr_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  Tensor &q = call.out(0), &r = call.out(1);
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back(), k = std::min(m, n);
  const int64_t q_cols = q.shape().back(), r_rows = r.shape()[r.ndim() - 2];
  const int64_t count = stack_count(x, 2);
  if (count == 0) return;
  if (k == 0) {  // R is empty; Q is empty or (complete, n = 0) the identity
    Output identity(q);
    set_identity(identity.buffer);
    identity.finish();
    return;
  }
  Context ctx(x);
  const DType dtype = x.dtype();
  const int64_t item = static_cast<int64_t>(x.itemsize());
  const int64_t width = std::max(n, q_cols), stride = width * m;  // the buffer's matrices
  Tensor a;
  if (q_cols > n) {  // complete Q of a tall matrix: the columns past x's start as I's
    a = empty(stack_shape(x, {width, m}), dtype, ctx.where);
    set_identity(a);
    Tensor view = column_major_view(a, m, n);
    copy_matrices(view, x);
  } else {
    a = column_major_copy(x);
  }
  Tensor tau = empty(Dims{count * k}, dtype, ctx.where);
  Tensor info = info_buffer(ctx, count);  // bad arguments only
  int* codes = reinterpret_cast<int*>(info.data());
  const SolverHandles& h = ctx.solver();
  const cudaDataType_t type = data_type(dtype);
  auto matrix = [&](int64_t s) { return a.data() + s * stride * item; };
  auto tau_of = [&](int64_t s) { return tau.data() + s * k * item; };
  size_t device_bytes = 0, host_bytes = 0;
  XRT_CUSOLVER(cusolverDnXgeqrf_bufferSize, h.dn, h.params, m, n, type, a.data(), m, type,
               tau.data(), type, &device_bytes, &host_bytes);
  {
    auto work = workspace(ctx, device_bytes);
    HostWorkspace host(ctx, host_bytes);
    for (int64_t s = 0; s < count; ++s)
      XRT_CUSOLVER(cusolverDnXgeqrf, h.dn, h.params, m, n, type, matrix(s), m, type, tau_of(s),
                   type, work->data(), device_bytes, host.data(), host_bytes, codes + s);
  }
  Tensor r_view = column_major_view(a, r_rows, n);
  copy_matrices(r, r_view, Triangle::Upper);
  const CusolverApi& api = cusolver();
  auto size = typed(dtype, api.cusolverDnSorgqr_bufferSize, api.cusolverDnDorgqr_bufferSize,
                    api.cusolverDnCungqr_bufferSize, api.cusolverDnZungqr_bufferSize);
  auto orgqr = typed(dtype, api.cusolverDnSorgqr, api.cusolverDnDorgqr, api.cusolverDnCungqr,
                     api.cusolverDnZungqr);
  int lwork = 0;
  check_cusolver(size(h.dn, int(m), int(q_cols), int(k), a.data(), int(m), tau.data(), &lwork),
                 "cusolverDnXorgqr_bufferSize");
  auto work = workspace(ctx, static_cast<size_t>(std::max(lwork, 1)) * a.itemsize());
  for (int64_t s = 0; s < count; ++s)
    check_cusolver(orgqr(h.dn, int(m), int(q_cols), int(k), matrix(s), int(m), tau_of(s),
                         work->data(), lwork, codes + s),
                   "cusolverDnXorgqr");
  copy_matrices(q, column_major_view(a, m, q_cols));
}

// orgqr/ungqr take 32-bit sizes: larger matrices stay with the host fallback.
bool qr_fits(const KernelCall& call) {
  const Tensor& x = call.in(0);
  return x.shape()[x.ndim() - 2] <= INT_MAX && x.shape().back() <= INT_MAX;
}

}  // namespace

void register_linalg_kernels(KernelRegistry& registry) {
  add_solver_kernel(registry, "cholesky", cholesky_kernel,
                    "cuSOLVER Xpotrf (potrfBatched for stacks of matrices up to 128)");
  add_solver_kernel(registry, "det", determinant_kernel,
                    "LU (cuSOLVER Xgetrf; cuBLAS getrfBatched for stacks up to 32), product of "
                    "the pivots on the device");
  add_solver_kernel(registry, "slogdet", determinant_kernel,
                    "LU (cuSOLVER Xgetrf; cuBLAS getrfBatched for stacks up to 32), sum of the "
                    "pivots' logarithms on the device");
  add_solver_kernel(registry, "inv", solve_kernel,
                    "cuSOLVER Xgetrf + Xgetrs against I (cuBLAS getrf/getriBatched for stacks up "
                    "to 32)");
  add_solver_kernel(registry, "solve", solve_kernel,
                    "cuSOLVER Xgetrf + Xgetrs (cuBLAS getrf/getrsBatched for stacks up to 32)");
  add_solver_kernel(registry, "qr", qr_kernel, "cuSOLVER Xgeqrf + orgqr/ungqr", qr_fits);
  register_linalg_spectral_kernels(registry);
  register_linalg_svd_kernels(registry);
  register_linalg_vector_kernels(registry);
  register_helper_samples();
}

}  // namespace xrt::cuda
