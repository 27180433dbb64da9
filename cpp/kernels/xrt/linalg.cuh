// cpp/kernels/xrt/linalg.cuh: the small kernels around cuSOLVER in linalg on CUDA
// (cuda/linalg_*.cpp): pointer arrays for the batched routines, identities, non-finite
// flags per matrix, determinants from LU factors, the SVD's tolerance steps (pinv,
// matrix_rank), the unpacking of real eigenvectors and tiled transposes between the
// row-major tensors and cuSOLVER's column-major matrices.
//
// T is float, double or xrt::ew::Complex<float/double>; every matrix stack is contiguous
// (the host made it so) unless a kernel takes strides. Arithmetic is the elementwise
// family's (complex_math.cuh), so a product rounds as the CPU's std::complex one does.
#pragma once
#include "xrt/complex_math.cuh"

namespace xrt::linalg {

using i64 = long long;
using u64 = unsigned long long;

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<ew::Complex<R>> { using type = R; };
template <class T> using real_t = typename real_of<T>::type;

/// The value v of type T (a real value for complex T).
template <class T> XRT_FN T value_of(real_t<T> v) {
  if constexpr (ew::is_complex<T>) return T{v, real_t<T>(0)};
  else return v;
}

template <class T> XRT_FN real_t<T> magnitude(T v) {
  if constexpr (ew::is_complex<T>) return ew::cabs(v);
  else return ew::fabs(v);
}

/// 0 finite, 1 infinite, 2 NaN (the larger code of the two parts of a complex value).
template <class R> XRT_FN int nonfinite_code(R v) {
  return ew::isnan(v) ? 2 : ew::isinf(v) ? 1 : 0;
}
template <class T> XRT_FN int nonfinite(T v) {
  if constexpr (ew::is_complex<T>) {
    int a = nonfinite_code(v.re), b = nonfinite_code(v.im);
    return a > b ? a : b;
  } else {
    return nonfinite_code(v);
  }
}

#define XRT_GRID_LOOP(i, n)                                               \
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += i64(gridDim.x) * blockDim.x)

/// out[i] = base + i * stride (bytes): the device pointer arrays of the batched routines.
__device__ __forceinline__ void pointer_array(u64* out, u64 base, i64 stride, i64 count) {
  XRT_GRID_LOOP(i, count) out[i] = base + u64(i * stride);
}

/// Identities in a contiguous stack of rows x cols matrices (total elements in all).
template <class T> __device__ __forceinline__ void identity(T* out, i64 rows, i64 cols, i64 total) {
  XRT_GRID_LOOP(e, total) {
    i64 j = e % cols, i = (e / cols) % rows;
    out[e] = value_of<T>(real_t<T>(i == j ? 1 : 0));
  }
}

/// flags[s] = the largest non-finite code of matrix s's elements (rows x cols, element
/// strides; matrix s at a + s * matrix_stride), over the lower triangle (triangle 1, i >= j),
/// the upper one (2) or all (0). flags start at zero; grid.y walks the stack.
template <class T>
__device__ __forceinline__ void nonfinite_flags(const T* a, i64 matrix_stride, i64 rows, i64 cols,
                                                i64 row_stride, i64 col_stride, int triangle,
                                                i64 count, int* flags) {
  const i64 per = rows * cols;
  for (i64 s = blockIdx.y; s < count; s += gridDim.y) {
    int code = 0;
    XRT_GRID_LOOP(e, per) {
      i64 i = e / cols, j = e - i * cols;
      if ((triangle == 1 && j > i) || (triangle == 2 && j < i)) continue;
      int c = nonfinite(a[s * matrix_stride + i * row_stride + j * col_stride]);
      code = c > code ? c : code;
    }
    if (code) atomicMax(flags + s, code);  // rare: no contention worth a block reduction
  }
}

/// *first = the smallest s with a[s] != 0 or b[s] != 0 (b may be null); *first starts at
/// all ones. Lets the host read 8 bytes, not an info code per matrix, when all is well.
__device__ __forceinline__ void first_nonzero(const int* a, const int* b, i64 count, u64* first) {
  XRT_GRID_LOOP(s, count) {
    if (a[s] != 0 || (b && b[s] != 0)) atomicMin(first, u64(s));
  }
}

/// The pivots' permutation is odd (LAPACK's 1-based row interchanges).
template <class P> XRT_FN bool odd_permutation(const P* pivots, i64 n) {
  bool odd = false;
  for (i64 i = 0; i < n; ++i) odd ^= i64(pivots[i]) != i + 1;
  return odd;
}

/// det of each matrix from its LU factors (n x n, the diagonal at stride n + 1), in the
/// CPU's order: the pivot sign times the diagonal from the first element.
template <class T, class P>
__device__ __forceinline__ void determinant(const T* lu, i64 n, const P* pivots, i64 count,
                                            T* det) {
  XRT_GRID_LOOP(s, count) {
    const T* a = lu + s * n * n;
    T d = value_of<T>(odd_permutation(pivots + s * n, n) ? -1 : 1);
    for (i64 i = 0; i < n; ++i) d = d * a[i * (n + 1)];
    det[s] = d;
  }
}

/// sign and log|det| of each matrix from its LU factors: a zero pivot gives (0, -inf).
template <class T, class P>
__device__ __forceinline__ void log_determinant(const T* lu, i64 n, const P* pivots, i64 count,
                                                T* sign_out, real_t<T>* logabs_out) {
  using R = real_t<T>;
  XRT_GRID_LOOP(s, count) {
    const T* a = lu + s * n * n;
    T sign = value_of<T>(odd_permutation(pivots + s * n, n) ? -1 : 1);
    R logabs = 0;
    for (i64 i = 0; i < n; ++i) {
      T u = a[i * (n + 1)];
      R m = magnitude(u);
      if (m == 0) {
        sign = value_of<T>(0);
        logabs = -ew::limits<R>::infinity();
        break;
      }
      if constexpr (ew::is_complex<T>) sign = sign * T{u.re / m, u.im / m};
      else sign = sign * (u / m);
      logabs += ew::log(m);
    }
    sign_out[s] = sign;
    logabs_out[s] = logabs;
  }
}

/// pinv's middle step: row i of each k x n matrix Vh times 1/s_i where s_i > rtol * s_0,
/// else times 0 (s sorted descending, k per matrix; rtol one per matrix).
template <class T>
__device__ __forceinline__ void scale_rows(T* vh, const real_t<T>* s, const real_t<T>* rtol, i64 k,
                                           i64 n, i64 total) {
  using R = real_t<T>;
  XRT_GRID_LOOP(e, total) {
    i64 b = e / (k * n), i = (e / n) % k;
    R si = s[b * k + i], cutoff = rtol[b] * s[b * k];
    R f = si > cutoff ? R(1) / si : R(0);
    if constexpr (ew::is_complex<T>) vh[e] = T{vh[e].re * f, vh[e].im * f};
    else vh[e] = vh[e] * f;
  }
}

/// matrix_rank: how many of each matrix's k singular values exceed rtol * s_0.
template <class R>
__device__ __forceinline__ void rank(const R* s, const R* rtol, i64 k, i64 count, i64* out) {
  XRT_GRID_LOOP(b, count) {
    R cutoff = rtol[b] * s[b * k];
    i64 r = 0;
    for (i64 i = 0; i < k; ++i) r += s[b * k + i] > cutoff;
    out[b] = r;
  }
}

/// geev's right eigenvectors of a real matrix (column-major n x n: a complex pair j, j+1
/// is stored as its real and imaginary columns) as complex row-major ones; one thread per
/// (matrix, row), walking the columns as the CPU does.
template <class R>
__device__ __forceinline__ void real_eigenvectors(const R* vr, const ew::Complex<R>* w, i64 n,
                                                  i64 count, ew::Complex<R>* out) {
  XRT_GRID_LOOP(t, count * n) {
    i64 b = t / n, i = t - b * n;
    const R* v = vr + b * n * n;
    const ew::Complex<R>* values = w + b * n;
    ew::Complex<R>* row = out + b * n * n + i * n;
    for (i64 j = 0; j < n; ++j) {
      if (values[j].im == 0 || j + 1 == n) {
        row[j] = {v[i + j * n], R(0)};
      } else {
        R re = v[i + j * n], im = v[i + (j + 1) * n];
        row[j] = {re, im};
        row[j + 1] = {re, -im};
        ++j;
      }
    }
  }
}

/// out(r, c) = in(c, r) for the rows x cols matrices of out (element (r, c) at
/// r * out_ld + c; in's (c, r) at c * in_ld + r), conjugated when conj is set and zero
/// outside the triangle asked for (1: lower, c <= r; 2: upper, c >= r). 32 x 32 tiles go
/// through shared memory so that reads and writes are both coalesced (a strided copy
/// reads one element per 32-byte sector); blocks of 32 x 8 threads, grid (column tiles,
/// row tiles, matrices), grid.z walking a stack longer than it.
template <class T>
__device__ __forceinline__ void transpose(const T* in, T* out, i64 rows, i64 cols, i64 in_ld,
                                          i64 out_ld, i64 in_stride, i64 out_stride,
                                          i64 count, int triangle, int conj) {
  __shared__ T tile[32][33];  // the extra column keeps a tile's columns in distinct banks
  const i64 r0 = i64(blockIdx.y) * 32, c0 = i64(blockIdx.x) * 32;
  const int tx = threadIdx.x;
  // A tile wholly outside the triangle reads nothing.
  const bool zero_tile = (triangle == 1 && c0 > r0 + 31) || (triangle == 2 && c0 + 31 < r0);
  for (i64 b = blockIdx.z; b < count; b += gridDim.z) {
    const T* src = in + b * in_stride;
    T* dst = out + b * out_stride;
    if (!zero_tile)
      for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        i64 c = c0 + i, r = r0 + tx;
        if (c < cols && r < rows) tile[i][tx] = src[c * in_ld + r];
      }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
      i64 r = r0 + i, c = c0 + tx;
      if (r >= rows || c >= cols) continue;
      T v = value_of<T>(real_t<T>(0));
      if (!((triangle == 1 && c > r) || (triangle == 2 && c < r))) {
        v = tile[tx][i];
        if constexpr (ew::is_complex<T>)
          if (conj) v.im = -v.im;
      }
      dst[r * out_ld + c] = v;
    }
    __syncthreads();
  }
}

#undef XRT_GRID_LOOP

}  // namespace xrt::linalg
