// cpp/src/cpu/lapack.h: the LAPACK routines of scipy-openblas64 that linalg uses, with
// one typed wrapper per routine whatever the element type.
//
// Note [LAPACK symbols]: scipy-openblas64 exports the Fortran routines with a scipy_ prefix,
// a 64_ suffix and 64-bit integers (scipy_dgetrf_64_). Fortran takes every argument by
// reference and appends a hidden length for each CHARACTER argument (size_t in gfortran);
// the declarations below include those lengths so that each call matches its callee.
// Matrices are column-major: callers copy each matrix of a stack into a column-major
// buffer first (see linalg_common.h).
#pragma once
#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace xrt::cpu::lapack {

using Int = int64_t;
using c32 = std::complex<float>;
using c64 = std::complex<double>;

extern "C" {
// Routines with the same arguments for the four types (T element, R its real type).
#define XRT_LAPACK_COMMON(p, T, R)                                                          \
  void scipy_##p##potrf_64_(const char*, const Int*, T*, const Int*, Int*, size_t);         \
  void scipy_##p##getrf_64_(const Int*, const Int*, T*, const Int*, Int*, Int*);            \
  void scipy_##p##gesv_64_(const Int*, const Int*, T*, const Int*, Int*, T*, const Int*,    \
                           Int*);                                                           \
  void scipy_##p##geqrf_64_(const Int*, const Int*, T*, const Int*, T*, T*, const Int*, Int*);
XRT_LAPACK_COMMON(s, float, float)
XRT_LAPACK_COMMON(d, double, double)
XRT_LAPACK_COMMON(c, c32, float)
XRT_LAPACK_COMMON(z, c64, double)
#undef XRT_LAPACK_COMMON

// Real-only routines.
#define XRT_LAPACK_REAL(p, T)                                                              \
  void scipy_##p##orgqr_64_(const Int*, const Int*, const Int*, T*, const Int*, const T*,  \
                            T*, const Int*, Int*);                                         \
  void scipy_##p##syevd_64_(const char*, const char*, const Int*, T*, const Int*, T*, T*,  \
                            const Int*, Int*, const Int*, Int*, size_t, size_t);           \
  void scipy_##p##geev_64_(const char*, const char*, const Int*, T*, const Int*, T*, T*,    \
                           T*, const Int*, T*, const Int*, T*, const Int*, Int*, size_t,   \
                           size_t);                                                        \
  void scipy_##p##gesdd_64_(const char*, const Int*, const Int*, T*, const Int*, T*, T*,   \
                            const Int*, T*, const Int*, T*, const Int*, Int*, Int*, size_t);
XRT_LAPACK_REAL(s, float)
XRT_LAPACK_REAL(d, double)
#undef XRT_LAPACK_REAL

// Complex-only routines (R: the real type of rwork, eigenvalues and singular values).
#define XRT_LAPACK_COMPLEX(p, T, R)                                                        \
  void scipy_##p##ungqr_64_(const Int*, const Int*, const Int*, T*, const Int*, const T*,  \
                            T*, const Int*, Int*);                                         \
  void scipy_##p##heevd_64_(const char*, const char*, const Int*, T*, const Int*, R*, T*,  \
                            const Int*, R*, const Int*, Int*, const Int*, Int*, size_t,    \
                            size_t);                                                       \
  void scipy_##p##geev_64_(const char*, const char*, const Int*, T*, const Int*, T*, T*,   \
                           const Int*, T*, const Int*, T*, const Int*, R*, Int*, size_t,   \
                           size_t);                                                        \
  void scipy_##p##gesdd_64_(const char*, const Int*, const Int*, T*, const Int*, R*, T*,   \
                            const Int*, T*, const Int*, T*, const Int*, R*, Int*, Int*,    \
                            size_t);
XRT_LAPACK_COMPLEX(c, c32, float)
XRT_LAPACK_COMPLEX(z, c64, double)
#undef XRT_LAPACK_COMPLEX
}  // extern "C"

template <class T> struct RealOf { using type = T; };
template <class T> struct RealOf<std::complex<T>> { using type = T; };
template <class T> using real_t = typename RealOf<T>::type;
template <class T> inline constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>>;

// Calls scipy_<letter><routine>_64_ for the letter of T (s, d, c, z).
#define XRT_LAPACK_CALL(T, routine, ...)                                           \
  do {                                                                             \
    if constexpr (std::is_same_v<T, float>) scipy_s##routine##_64_(__VA_ARGS__);   \
    else if constexpr (std::is_same_v<T, double>) scipy_d##routine##_64_(__VA_ARGS__); \
    else if constexpr (std::is_same_v<T, c32>) scipy_c##routine##_64_(__VA_ARGS__); \
    else scipy_z##routine##_64_(__VA_ARGS__);                                       \
  } while (0)
#define XRT_LAPACK_REAL_CALL(T, routine, ...)                                      \
  do {                                                                             \
    if constexpr (std::is_same_v<T, float>) scipy_s##routine##_64_(__VA_ARGS__);   \
    else scipy_d##routine##_64_(__VA_ARGS__);                                       \
  } while (0)
#define XRT_LAPACK_COMPLEX_CALL(T, routine, ...)                                   \
  do {                                                                             \
    if constexpr (std::is_same_v<T, c32>) scipy_c##routine##_64_(__VA_ARGS__);     \
    else scipy_z##routine##_64_(__VA_ARGS__);                                       \
  } while (0)

/// Scratch a routine asks for, sized by a workspace query on first use. A kernel keeps one
/// per routine for the whole stack (every matrix of a stack has the same size).
template <class T> struct Workspace {
  std::vector<T> work;
  std::vector<real_t<T>> rwork;
  std::vector<Int> iwork;
  bool sized = false;

  static Int size_of(T query) { return std::max<Int>(1, static_cast<Int>(std::real(query))); }
};

template <class T> Int potrf(char uplo, Int n, T* a, Int lda) {
  Int info = 0;
  XRT_LAPACK_CALL(T, potrf, &uplo, &n, a, &lda, &info, 1);
  return info;
}

template <class T> Int getrf(Int m, Int n, T* a, Int lda, Int* ipiv) {
  Int info = 0;
  XRT_LAPACK_CALL(T, getrf, &m, &n, a, &lda, ipiv, &info);
  return info;
}

template <class T> Int gesv(Int n, Int nrhs, T* a, Int lda, Int* ipiv, T* b, Int ldb) {
  Int info = 0;
  XRT_LAPACK_CALL(T, gesv, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info);
  return info;
}

template <class T> Int geqrf(Int m, Int n, T* a, Int lda, T* tau, Workspace<T>& ws) {
  Int info = 0, lwork = -1;
  if (!ws.sized) {
    T query{};
    XRT_LAPACK_CALL(T, geqrf, &m, &n, a, &lda, tau, &query, &lwork, &info);
    ws.work.resize(static_cast<size_t>(Workspace<T>::size_of(query)));
    ws.sized = true;
  }
  lwork = static_cast<Int>(ws.work.size());
  XRT_LAPACK_CALL(T, geqrf, &m, &n, a, &lda, tau, ws.work.data(), &lwork, &info);
  return info;
}

/// orgqr (real) / ungqr (complex): the first n columns of Q from geqrf's reflectors.
template <class T> Int orgqr(Int m, Int n, Int k, T* a, Int lda, const T* tau, Workspace<T>& ws) {
  Int info = 0, lwork = -1;
  auto call = [&](T* work) {
    if constexpr (is_complex_v<T>) XRT_LAPACK_COMPLEX_CALL(T, ungqr, &m, &n, &k, a, &lda, tau, work, &lwork, &info);
    else XRT_LAPACK_REAL_CALL(T, orgqr, &m, &n, &k, a, &lda, tau, work, &lwork, &info);
  };
  if (!ws.sized) {
    T query{};
    call(&query);
    ws.work.resize(static_cast<size_t>(Workspace<T>::size_of(query)));
    ws.sized = true;
  }
  lwork = static_cast<Int>(ws.work.size());
  call(ws.work.data());
  return info;
}

/// syevd (real) / heevd (complex) on the lower triangle; jobz 'V' also computes vectors.
template <class T> Int heevd(char jobz, Int n, T* a, Int lda, real_t<T>* w, Workspace<T>& ws) {
  char uplo = 'L';
  Int info = 0, lwork = -1, lrwork = -1, liwork = -1;
  auto call = [&](T* work, real_t<T>* rwork, Int* iwork) {
    if constexpr (is_complex_v<T>)
      XRT_LAPACK_COMPLEX_CALL(T, heevd, &jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork,
                              &lrwork, iwork, &liwork, &info, 1, 1);
    else
      XRT_LAPACK_REAL_CALL(T, syevd, &jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork,
                           &liwork, &info, 1, 1);
  };
  if (!ws.sized) {
    T work{};
    real_t<T> rwork{};
    Int iwork = 0;
    call(&work, &rwork, &iwork);
    ws.work.resize(static_cast<size_t>(Workspace<T>::size_of(work)));
    ws.rwork.resize(static_cast<size_t>(std::max<Int>(1, static_cast<Int>(rwork))));
    ws.iwork.resize(static_cast<size_t>(std::max<Int>(1, iwork)));
    ws.sized = true;
  }
  lwork = static_cast<Int>(ws.work.size());
  lrwork = static_cast<Int>(ws.rwork.size());
  liwork = static_cast<Int>(ws.iwork.size());
  call(ws.work.data(), ws.rwork.data(), ws.iwork.data());
  return info;
}

/// geev with right eigenvectors only (jobvr 'V' or 'N'). Complex T: w holds the
/// eigenvalues. Real T: w holds the real parts, wi the imaginary parts, and a complex
/// pair's vectors are stored as (real part, imaginary part) in two columns of vr.
template <class T>
Int geev(char jobvr, Int n, T* a, Int lda, T* w, T* wi, T* vr, Int ldvr, Workspace<T>& ws) {
  char jobvl = 'N';
  Int info = 0, lwork = -1, ldvl = 1;
  auto call = [&](T* work) {
    if constexpr (is_complex_v<T>)
      XRT_LAPACK_COMPLEX_CALL(T, geev, &jobvl, &jobvr, &n, a, &lda, w, nullptr, &ldvl, vr,
                              &ldvr, work, &lwork, ws.rwork.data(), &info, 1, 1);
    else
      XRT_LAPACK_REAL_CALL(T, geev, &jobvl, &jobvr, &n, a, &lda, w, wi, nullptr, &ldvl, vr,
                           &ldvr, work, &lwork, &info, 1, 1);
  };
  if (!ws.sized) {
    if constexpr (is_complex_v<T>) ws.rwork.resize(static_cast<size_t>(std::max<Int>(1, 2 * n)));
    T query{};
    call(&query);
    ws.work.resize(static_cast<size_t>(Workspace<T>::size_of(query)));
    ws.sized = true;
  }
  lwork = static_cast<Int>(ws.work.size());
  call(ws.work.data());
  return info;
}

/// gesdd: singular values s; with jobz 'A' or 'S' also u (m x m or m x k) and vt
/// (n x n or k x n); 'N' computes values only.
template <class T>
Int gesdd(char jobz, Int m, Int n, T* a, Int lda, real_t<T>* s, T* u, Int ldu, T* vt,
          Int ldvt, Workspace<T>& ws) {
  Int info = 0, lwork = -1;
  auto call = [&](T* work) {
    if constexpr (is_complex_v<T>)
      XRT_LAPACK_COMPLEX_CALL(T, gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work,
                              &lwork, ws.rwork.data(), ws.iwork.data(), &info, 1);
    else
      XRT_LAPACK_REAL_CALL(T, gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work,
                           &lwork, ws.iwork.data(), &info, 1);
  };
  if (!ws.sized) {
    Int mn = std::min(m, n), mx = std::max(m, n);
    ws.iwork.resize(static_cast<size_t>(std::max<Int>(1, 8 * mn)));
    if constexpr (is_complex_v<T>) {  // LAPACK 3.7's documented sizes
      Int lrwork = jobz == 'N' ? 7 * mn
                               : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
      ws.rwork.resize(static_cast<size_t>(std::max<Int>(1, lrwork)));
    }
    T query{};
    call(&query);
    ws.work.resize(static_cast<size_t>(Workspace<T>::size_of(query)));
    ws.sized = true;
  }
  lwork = static_cast<Int>(ws.work.size());
  call(ws.work.data());
  return info;
}

}  // namespace xrt::cpu::lapack
