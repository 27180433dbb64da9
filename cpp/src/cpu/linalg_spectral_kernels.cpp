// cpp/src/cpu/linalg_spectral_kernels.cpp: eigen- and singular value kernels of linalg
// (eigh, eig, svd) and those built on the SVD (pinv, matrix_rank), from scipy-openblas64.
//
// A LAPACK failure (no convergence; gesdd also refuses NaN) raises LinAlgError, as NumPy
// does; eig checks first that the matrix is finite, since geev may iterate for long on
// NaN before it gives up.
#include <cblas.h>

#include <cmath>

#include "cpu/kernels.h"
#include "cpu/lapack.h"
#include "cpu/linalg_common.h"
#include "xpuruntime/linalg.h"

namespace xrt::cpu {
namespace {

using lapack::real_t;

template <class T> bool all_finite(const std::vector<T>& values) {
  for (const T& v : values)
    if (!std::isfinite(std::real(v)) || !std::isfinite(std::imag(v))) return false;
  return true;
}

// eigh (values, vectors) or eigvalsh (values): syevd/heevd on the lower triangle.
template <class T> void eigh_typed(const KernelCall& call) {
  using R = real_t<T>;
  const Tensor& x = call.in(0);
  const bool vectors = call.num_outputs == 2;
  const int64_t n = x.shape().back(), ld = leading_dim(n);
  std::vector<T> a(static_cast<size_t>(ld * n));
  lapack::Workspace<T> ws;
  for (int64_t s = 0, count = stack_size(call.out(0), 1); s < count && n > 0; ++s) {
    load_column_major(matrix_at<T>(x, s), a.data(), ld);
    R* values = reinterpret_cast<R*>(stack_item(call.out(0), 1, s));
    if (lapack::heevd(vectors ? 'V' : 'N', n, a.data(), ld, values, ws) != 0)
      throw LinAlgError("eigh: the eigenvalue algorithm did not converge" +
                        stack_position(x, 2, s));
    if (vectors) store_column_major(a.data(), ld, matrix_at<T>(call.out(1), s));
  }
}

// eig (values, vectors) or eigvals (values) through geev; outputs are complex.
template <class T> void eig_typed(const KernelCall& call) {
  using C = std::complex<real_t<T>>;
  const Tensor& x = call.in(0);
  const bool vectors = call.num_outputs == 2;
  const int64_t n = x.shape().back(), ld = leading_dim(n);
  std::vector<T> a(static_cast<size_t>(ld * n)), w(static_cast<size_t>(ld)),
      wi(static_cast<size_t>(ld)), vr(static_cast<size_t>(vectors ? ld * n : 1));
  lapack::Workspace<T> ws;
  for (int64_t s = 0, count = stack_size(call.out(0), 1); s < count && n > 0; ++s) {
    load_column_major(matrix_at<T>(x, s), a.data(), ld);
    if (!all_finite(a))
      throw LinAlgError("eig: the matrix contains NaN or infinity" + stack_position(x, 2, s));
    if (lapack::geev(vectors ? 'V' : 'N', n, a.data(), ld, w.data(), wi.data(), vr.data(),
                     vectors ? ld : 1, ws) != 0)
      throw LinAlgError("eig: the QR algorithm did not converge" + stack_position(x, 2, s));
    C* values = reinterpret_cast<C*>(stack_item(call.out(0), 1, s));
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (lapack::is_complex_v<T>) values[i] = w[static_cast<size_t>(i)];
      else values[i] = C(w[static_cast<size_t>(i)], wi[static_cast<size_t>(i)]);
    }
    if (!vectors) continue;
    MatrixRef<C> out = matrix_at<C>(call.out(1), s);
    for (int64_t j = 0; j < n; ++j) {
      const T* column = vr.data() + j * ld;
      if constexpr (lapack::is_complex_v<T>) {
        for (int64_t i = 0; i < n; ++i) out(i, j) = column[i];
      } else if (wi[static_cast<size_t>(j)] == 0 || j + 1 == n) {
        for (int64_t i = 0; i < n; ++i) out(i, j) = C(column[i], 0);
      } else {  // a conjugate pair: columns j and j+1 hold the real and imaginary parts
        for (int64_t i = 0; i < n; ++i) {
          out(i, j) = C(column[i], column[i + ld]);
          out(i, j + 1) = C(column[i], -column[i + ld]);
        }
        ++j;
      }
    }
  }
}

// The SVD of one matrix of a stack, in buffers sized once for the whole stack. jobz 'N'
// computes s only; 'S' (reduced) and 'A' (full) also u (m x u_cols) and vt (vt_rows x n).
template <class T> struct SvdBuffers {
  int64_t m, n, k, u_cols, vt_rows;
  char jobz;
  std::vector<T> a, u, vt;
  std::vector<real_t<T>> s;
  lapack::Workspace<T> ws;

  SvdBuffers(int64_t rows, int64_t cols, char job) : m(rows), n(cols), k(std::min(rows, cols)), jobz(job) {
    u_cols = jobz == 'A' ? m : jobz == 'S' ? k : 0;
    vt_rows = jobz == 'A' ? n : jobz == 'S' ? k : 0;
    a.resize(static_cast<size_t>(leading_dim(m) * n));
    u.resize(static_cast<size_t>(std::max<int64_t>(1, leading_dim(m) * u_cols)));
    vt.resize(static_cast<size_t>(std::max<int64_t>(1, leading_dim(vt_rows) * n)));
    s.resize(static_cast<size_t>(std::max<int64_t>(1, k)));
  }

  /// Factors stack item `index` of x; LinAlgError when LAPACK fails.
  void factor(const Tensor& x, int64_t index, const char* op) {
    load_column_major(matrix_at<T>(x, index), a.data(), leading_dim(m));
    if (lapack::gesdd(jobz, m, n, a.data(), leading_dim(m), s.data(), u.data(), leading_dim(m),
                      vt.data(), leading_dim(vt_rows), ws) != 0)
      throw LinAlgError(std::string(op) + ": the SVD did not converge (NaN in the matrix?)" +
                        stack_position(x, 2, index));
  }
};

// svd (U, S, Vh) or svdvals (S). Full or reduced follows from the shapes of U and Vh.
template <class T> void svd_typed(const KernelCall& call) {
  using R = real_t<T>;
  const Tensor& x = call.in(0);
  const bool vectors = call.num_outputs == 3;
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back();
  char jobz = 'N';
  if (vectors) jobz = call.out(0).shape().back() == m && call.out(2).shape()[x.ndim() - 2] == n ? 'A' : 'S';
  SvdBuffers<T> svd(m, n, jobz);
  Tensor& values = call.out(vectors ? 1 : 0);
  for (int64_t s = 0, count = stack_size(values, 1); s < count; ++s) {
    if (svd.k == 0) {  // an empty matrix: U and Vh are empty or identities
      if (vectors) set_identity(matrix_at<T>(call.out(0), s)), set_identity(matrix_at<T>(call.out(2), s));
      continue;
    }
    svd.factor(x, s, vectors ? "svd" : "svdvals");
    std::copy(svd.s.begin(), svd.s.begin() + svd.k, reinterpret_cast<R*>(stack_item(values, 1, s)));
    if (!vectors) continue;
    store_column_major(svd.u.data(), leading_dim(m), matrix_at<T>(call.out(0), s));
    store_column_major(svd.vt.data(), leading_dim(svd.vt_rows), matrix_at<T>(call.out(2), s));
  }
}

// C (column-major, m x n) = A^H B^H with A (k x m) and B (n x k) column-major.
template <class T>
void gemm_adjoint_adjoint(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                          int64_t ldb, T* c, int64_t ldc) {
  const auto op = CblasConjTrans;
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_sgemm64_(CblasColMajor, op, op, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_cblas_dgemm64_(CblasColMajor, op, op, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  } else {
    const T one(1), zero(0);
    if constexpr (std::is_same_v<T, std::complex<float>>)
      scipy_cblas_cgemm64_(CblasColMajor, op, op, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
    else
      scipy_cblas_zgemm64_(CblasColMajor, op, op, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  }
}

// pinv(x) = V diag(1/s) U^H over the singular values above rtol * max(s); inputs x and
// rtol (one real value per matrix).
template <class T> void pinv_typed(const KernelCall& call) {
  using R = real_t<T>;
  const Tensor &x = call.in(0), &rtol = call.in(1);
  Tensor& out = call.out();
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back();
  SvdBuffers<T> svd(m, n, 'S');
  std::vector<T> c(static_cast<size_t>(leading_dim(n) * m));
  for (int64_t s = 0, count = stack_size(out, 2); s < count; ++s) {
    MatrixRef<T> result = matrix_at<T>(out, s);
    if (svd.k == 0) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) result(i, j) = T(0);
      continue;
    }
    svd.factor(x, s, "pinv");
    const R cutoff = *reinterpret_cast<const R*>(stack_item(rtol, 0, s)) * svd.s[0];
    const int64_t ldvt = leading_dim(svd.k);
    for (int64_t i = 0; i < svd.k; ++i) {  // rows of Vh scaled by 1/s_i (or 0)
      R si = svd.s[static_cast<size_t>(i)];
      T factor = T(si > cutoff ? R(1) / si : R(0));
      for (int64_t j = 0; j < n; ++j) svd.vt[static_cast<size_t>(i + j * ldvt)] *= factor;
    }
    gemm_adjoint_adjoint(n, m, svd.k, svd.vt.data(), ldvt, svd.u.data(), leading_dim(m),
                         c.data(), leading_dim(n));
    store_column_major(c.data(), leading_dim(n), result);
  }
}

// matrix_rank: the number of singular values above rtol * max(s) (int64 output).
template <class T> void matrix_rank_typed(const KernelCall& call) {
  using R = real_t<T>;
  const Tensor &x = call.in(0), &rtol = call.in(1);
  Tensor& out = call.out();
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape().back();
  SvdBuffers<T> svd(m, n, 'N');
  for (int64_t s = 0, count = stack_size(out, 0); s < count; ++s) {
    int64_t rank = 0;
    if (svd.k > 0) {
      svd.factor(x, s, "matrix_rank");
      const R cutoff = *reinterpret_cast<const R*>(stack_item(rtol, 0, s)) * svd.s[0];
      for (int64_t i = 0; i < svd.k; ++i) rank += svd.s[static_cast<size_t>(i)] > cutoff;
    }
    *reinterpret_cast<int64_t*>(stack_item(out, 0, s)) = rank;
  }
}

void eigh_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(), [&](auto t) { eigh_typed<typename decltype(t)::type>(call); });
}
void eig_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(), [&](auto t) { eig_typed<typename decltype(t)::type>(call); });
}
void svd_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(), [&](auto t) { svd_typed<typename decltype(t)::type>(call); });
}
void pinv_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(), [&](auto t) { pinv_typed<typename decltype(t)::type>(call); });
}
void matrix_rank_kernel(const KernelCall& call) {
  visit_lapack_dtype(call.in(0).dtype(), [&](auto t) { matrix_rank_typed<typename decltype(t)::type>(call); });
}

}  // namespace

void register_linalg_spectral_kernels(KernelRegistry& registry) {
  add_linalg_kernel(registry, "eigh", "openblas", eigh_kernel, "LAPACK ?syevd/?heevd",
                    is_lapack_dtype);
  add_linalg_kernel(registry, "eig", "openblas", eig_kernel, "LAPACK ?geev", is_lapack_dtype);
  add_linalg_kernel(registry, "svd", "openblas", svd_kernel, "LAPACK ?gesdd", is_lapack_dtype);
  add_linalg_kernel(registry, "pinv", "openblas", pinv_kernel, "LAPACK ?gesdd + cblas ?gemm",
                    is_lapack_dtype);
  add_linalg_kernel(registry, "matrix_rank", "openblas", matrix_rank_kernel,
                    "LAPACK ?gesdd, singular values above the tolerance", is_lapack_dtype);
}

}  // namespace xrt::cpu
