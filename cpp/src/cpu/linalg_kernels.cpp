// cpp/src/cpu/linalg_kernels.cpp: the LU, Cholesky and QR kernels of linalg (LAPACK from
// scipy-openblas64), and the registration of every linalg kernel.
//
// Each kernel walks the stack one matrix at a time: copy into a column-major buffer, call
// LAPACK, copy the results out. Inputs arrive in the compute dtype (float32/64,
// complex64/128), broadcast to the stack shape; outputs are allocated by the op.
#include <cmath>
#include <limits>

#include "cpu/kernels.h"
#include "cpu/lapack.h"
#include "cpu/linalg_common.h"
#include "xpuruntime/linalg.h"

namespace xrt::cpu {
namespace {

using lapack::real_t;

template <class T>
void cholesky_typed(const KernelCall& call) {
  const Tensor& x = call.in(0);
  Tensor& out = call.out();
  const bool upper = call.attrs->value.to<bool>();
  const int64_t n = x.shape().back(), ld = leading_dim(n);
  std::vector<T> a(static_cast<size_t>(ld * n));
  for (int64_t s = 0, count = stack_size(out, 2); s < count; ++s) {
    load_column_major(matrix_at<T>(x, s), a.data(), ld);
    if (lapack::potrf(upper ? 'U' : 'L', n, a.data(), ld) != 0)
      throw LinAlgError("cholesky: the matrix is not positive definite" +
                        stack_position(out, 2, s));
    for (int64_t j = 0; j < n; ++j)  // potrf leaves the other triangle as it was
      for (int64_t i = 0; i < n; ++i)
        if (upper ? i > j : i < j) a[i + j * ld] = T(0);
    store_column_major(a.data(), ld, matrix_at<T>(out, s));
  }
}

// det (one output) or slogdet (sign, logabsdet) from an LU factorisation. An exactly
// singular matrix (getrf's info > 0) still has its U, whose zero pivot makes det 0.
template <class T>
void determinant_typed(const KernelCall& call) {
  using R = real_t<T>;
  const Tensor& x = call.in(0);
  const bool log_form = call.num_outputs == 2;
  const int64_t n = x.shape().back(), ld = leading_dim(n);
  std::vector<T> a(static_cast<size_t>(ld * n));
  std::vector<lapack::Int> pivots(static_cast<size_t>(std::max<int64_t>(1, n)));
  for (int64_t s = 0, count = stack_size(call.out(0), 0); s < count; ++s) {
    load_column_major(matrix_at<T>(x, s), a.data(), ld);
    if (n > 0) lapack::getrf(n, n, a.data(), ld, pivots.data());
    bool odd = false;
    for (int64_t i = 0; i < n; ++i) odd ^= pivots[static_cast<size_t>(i)] != i + 1;
    T* first = reinterpret_cast<T*>(stack_item(call.out(0), 0, s));
    if (!log_form) {
      T det = T(odd ? -1 : 1);
      for (int64_t i = 0; i < n; ++i) det *= a[static_cast<size_t>(i * ld + i)];
      *first = det;
      continue;
    }
    T sign = T(odd ? -1 : 1);
    R logabs = 0;
    for (int64_t i = 0; i < n; ++i) {
      T u = a[static_cast<size_t>(i * ld + i)];
      R magnitude = std::abs(u);
      if (magnitude == 0) {
        sign = T(0);
        logabs = -std::numeric_limits<R>::infinity();
        break;
      }
      sign *= u / magnitude;
      logabs += std::log(magnitude);
    }
    *first = sign;
    *reinterpret_cast<R*>(stack_item(call.out(1), 0, s)) = logabs;
  }
}

// inv (one input: solves A X = I) and solve (A, B): gesv on each matrix of the stack.
template <class T>
void solve_typed(const KernelCall& call) {
  const bool inverse = call.num_inputs == 1;
  const Tensor& a_in = call.in(0);
  Tensor& out = call.out();
  const int64_t n = a_in.shape().back(), k = out.shape().back(), ld = leading_dim(n);
  std::vector<T> a(static_cast<size_t>(ld * n)), b(static_cast<size_t>(ld * k));
  std::vector<lapack::Int> pivots(static_cast<size_t>(std::max<int64_t>(1, n)));
  for (int64_t s = 0, count = stack_size(out, 2); s < count; ++s) {
    if (n == 0 || k == 0) break;
    load_column_major(matrix_at<T>(a_in, s), a.data(), ld);
    if (inverse)
      set_identity(MatrixRef<T>{b.data(), n, n, 1, ld});
    else
      load_column_major(matrix_at<T>(call.in(1), s), b.data(), ld);
    if (lapack::gesv(n, k, a.data(), ld, pivots.data(), b.data(), ld) > 0)
      throw LinAlgError(std::string(inverse ? "inv" : "solve") + ": the matrix is singular" +
                        stack_position(out, 2, s));
    store_column_major(b.data(), ld, matrix_at<T>(out, s));
  }
}

// Q and R from geqrf + orgqr/ungqr; the shapes of the outputs say which mode was asked
// for (reduced: Q is m x k and R k x n; complete: Q is m x m and R m x n).
template <class T>
void qr_typed(const KernelCall& call) {
  const Tensor& x = call.in(0);
  Tensor &q = call.out(0), &r = call.out(1);
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back(), k = std::min(m, n);
  const int64_t q_cols = q.shape().back(), r_rows = r.shape()[r.ndim() - 2];
  const int64_t ld = leading_dim(m);
  std::vector<T> a(static_cast<size_t>(ld * std::max(n, q_cols)));
  std::vector<T> tau(static_cast<size_t>(std::max<int64_t>(1, k)));
  lapack::Workspace<T> factor_ws, q_ws;
  for (int64_t s = 0, count = stack_size(q, 2); s < count; ++s) {
    load_column_major(matrix_at<T>(x, s), a.data(), ld);
    if (k > 0) lapack::geqrf(m, n, a.data(), ld, tau.data(), factor_ws);
    MatrixRef<T> rs = matrix_at<T>(r, s);
    for (int64_t i = 0; i < r_rows; ++i)
      for (int64_t j = 0; j < n; ++j) rs(i, j) = i <= j ? a[static_cast<size_t>(i + j * ld)] : T(0);
    if (m == 0 || q_cols == 0) continue;
    lapack::orgqr(m, q_cols, k, a.data(), ld, tau.data(), q_ws);
    store_column_major(a.data(), ld, matrix_at<T>(q, s));
  }
}

void cholesky_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(),
                     [&](auto t) { cholesky_typed<typename decltype(t)::type>(call); });
}
void determinant_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(),
                     [&](auto t) { determinant_typed<typename decltype(t)::type>(call); });
}
void solve_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(),
                     [&](auto t) { solve_typed<typename decltype(t)::type>(call); });
}
void qr_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(),
                     [&](auto t) { qr_typed<typename decltype(t)::type>(call); });
}

}  // namespace

void register_linalg_kernels(KernelRegistry& registry) {
  add_linalg_kernel(registry, "cholesky", "openblas", cholesky_kernel, "LAPACK ?potrf",
                    is_lapack_dtype);
  add_linalg_kernel(registry, "det", "openblas", determinant_kernel,
                    "LAPACK ?getrf, product of the pivots", is_lapack_dtype);
  add_linalg_kernel(registry, "slogdet", "openblas", determinant_kernel,
                    "LAPACK ?getrf, sum of the pivots' logarithms", is_lapack_dtype);
  add_linalg_kernel(registry, "inv", "openblas", solve_kernel, "LAPACK ?gesv against I",
                    is_lapack_dtype);
  add_linalg_kernel(registry, "solve", "openblas", solve_kernel, "LAPACK ?gesv", is_lapack_dtype);
  add_linalg_kernel(registry, "qr", "openblas", qr_kernel, "LAPACK ?geqrf + ?orgqr/?ungqr",
                    is_lapack_dtype);
  register_linalg_spectral_kernels(registry);
  register_linalg_vector_kernels(registry);
}

}  // namespace xrt::cpu
