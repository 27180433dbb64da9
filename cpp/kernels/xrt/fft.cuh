// cpp/kernels/xrt/fft.cuh: device code of the CUDA fft family (cuda/fft_kernels.cpp): the
// strided conversion around cuFFT's transforms (zero-padding, real <-> complex,
// conjugation, the norm's scale) and the sample frequencies.
#pragma once
#include "xrt/common.cuh"

namespace xrt {

template <class T> struct fft_real { typedef T type; };
template <class T> struct fft_real<complex<T>> { typedef T type; };

template <class R> __device__ __forceinline__ complex<R> fft_load(const float* p) {
  return complex<R>(R(*p));
}
template <class R> __device__ __forceinline__ complex<R> fft_load(const double* p) {
  return complex<R>(R(*p));
}
template <class R, class T> __device__ __forceinline__ complex<R> fft_load(const complex<T>* p) {
  complex<T> v = *p;
  return complex<R>(R(v.re), R(v.im));
}

// A real destination keeps the real part.
template <class R> __device__ __forceinline__ void fft_store(float* p, complex<R> v) {
  *p = float(v.re);
}
template <class R> __device__ __forceinline__ void fft_store(double* p, complex<R> v) {
  *p = double(v.re);
}
template <class R, class T> __device__ __forceinline__ void fft_store(complex<T>* p, complex<R> v) {
  *p = complex<T>(T(v.re), T(v.im));
}

/// Flags of fft_convert.
enum : int {
  kFftConjugate = 1,    ///< conjugate each value
  kFftRealEnds = 2,     ///< drop the imaginary part at line positions 0 and `nyquist`
};

/// dst = conj?(src) * scale over ND dimensions (innermost last; layout row 0: dst's byte
/// strides, row 1: src's). Along the innermost dimension src holds only `pad_len` values:
/// positions past them read as zero (src is not touched there). With kFftRealEnds the
/// innermost dimension is one line (C2R's input: its first value, and the middle one of an
/// even length, are taken as real, as NumPy does). dst and src may be the same elements
/// (each is read before it is written, by one thread).
template <class Dst, class Src, int ND, class U, class S>
__device__ __forceinline__ void fft_convert(char* dst, const char* src,
                                            const StridedLayout<ND, 2>& layout, U n, U pad_len,
                                            U nyquist, typename fft_real<Dst>::type scale,
                                            int flags) {
  typedef typename fft_real<Dst>::type R;
  const U step = U(gridDim.x) * U(blockDim.x);
  for (U i = U(blockIdx.x) * U(blockDim.x) + U(threadIdx.x); i < n; i += step) {
    U rest = i, position = 0;
    S to = 0, from = 0;
#pragma unroll
    for (int d = ND - 1; d >= 0; --d) {
      U size = U(layout.size[d]);
      U quotient = d > 0 ? rest / size : U(0);
      U coordinate = rest - quotient * size;
      rest = quotient;
      if (d == ND - 1) position = coordinate;
      to += S(coordinate) * S(layout.stride[0][d]);
      from += S(coordinate) * S(layout.stride[1][d]);
    }
    complex<R> v = position >= pad_len ? complex<R>(R(0)) : fft_load<R>(at<Src>(src, from));
    if (flags & kFftConjugate) v.im = -v.im;
    if ((flags & kFftRealEnds) && (position == 0 || position == nyquist)) v.im = R(0);
    fft_store(at<Dst>(dst, to), complex<R>(v.re * scale, v.im * scale));
  }
}

/// out[i * stride] = k_i * value, k = 0, 1, ..., first_negative - 1, then k - n: the
/// integer times the double 1/(n*d) rounded once, as the CPU computes it.
template <class T, class U>
__device__ __forceinline__ void fft_frequencies(char* out, index_t stride_bytes, U count,
                                                index_t n, index_t first_negative, double value) {
  const U step = U(gridDim.x) * U(blockDim.x);
  for (U i = U(blockIdx.x) * U(blockDim.x) + U(threadIdx.x); i < count; i += step) {
    index_t k = index_t(i) < first_negative ? index_t(i) : index_t(i) - n;
    *at<T>(out, index_t(i) * stride_bytes) = T(double(k) * value);
  }
}

}  // namespace xrt
