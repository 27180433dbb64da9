// cpp/src/cuda/linalg_spectral_kernels.cpp: eigenvalue kernels of linalg on CUDA (eigh,
// eig; the SVD is in linalg_svd_kernels.cpp).
//
// Stacks of symmetric matrices up to 32 x 32 go through the batched Jacobi routine
// (syevjBatched), larger ones through one Xsyevd call per matrix; eig through Xgeev.
// Both wait for their info codes (Note [Linalg errors on CUDA]) and follow the CPU where
// a matrix is not finite:
//  - eigh: a matrix with a NaN or an infinity in its lower triangle gets NaN eigenvalues
//    (LAPACK's heevd returns NaN there), never an error;
//  - eig: NaN or infinity raises before anything runs, as on the CPU.
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

}  // namespace

void register_linalg_spectral_kernels(KernelRegistry& registry) {
  add_solver_kernel(registry, "eigh", eigh_kernel,
                    "cuSOLVER Xsyevd (syevjBatched for stacks of matrices up to 32)");
  add_solver_kernel(registry, "eig", eig_kernel, "cuSOLVER Xgeev (CUDA 12.6 and newer)",
                    geev_available);
}

}  // namespace xrt::cuda
