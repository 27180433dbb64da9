// cpp/kernels/xrt/norm.cuh: the row ops (softmax, log_softmax, layer_norm, rms_norm; Note
// [Row ops] in cpp/src/core/norm_ops.cpp) on CUDA: a group of GROUP threads per row of a
// contiguous (rows, cols) matrix, a warp (32) for rows of up to 1024 elements, the block
// (256) for longer ones, walking the row once per statistic (the later walks hit L1).
// Each thread combines its elements in order; the group combines the threads' values with
// a fixed pattern of shuffles (and, for a block, its warps' values in order), so results
// do not depend on timing.
// Note: holding a warp's row in registers (one read instead of one per statistic) measured
// slower on an H200 (softmax of 8x12x512x512 float32: 95 us against 61, torch 55). Where
// the rows allow it (aligned, cols a multiple of 16 bytes), each access moves 16 bytes.
#pragma once
#include "xrt/common.cuh"

namespace xrt {
namespace norm {

enum { kSoftmax = 0, kLogSoftmax = 1, kLayerNorm = 2, kRmsNorm = 3 };
constexpr int kBlock = 256;

template <class T> __device__ __forceinline__ T minus_infinity();
template <> __device__ __forceinline__ float minus_infinity<float>() {
  return __int_as_float(0xff800000);
}
template <> __device__ __forceinline__ double minus_infinity<double>() {
  return __longlong_as_double(0xfff0000000000000ll);
}
__device__ __forceinline__ float exp_of(float v) { return expf(v); }
__device__ __forceinline__ double exp_of(double v) { return ::exp(v); }
__device__ __forceinline__ float log_of(float v) { return logf(v); }
__device__ __forceinline__ double log_of(double v) { return ::log(v); }
__device__ __forceinline__ float sqrt_of(float v) { return sqrtf(v); }
__device__ __forceinline__ double sqrt_of(double v) { return ::sqrt(v); }

struct Max {
  template <class T> __device__ T operator()(T a, T b) const { return b > a ? b : a; }
};
struct Add {
  template <class T> __device__ T operator()(T a, T b) const { return a + b; }
};

/// v combined over the group (every thread of it gets the result). GROUP == kBlock: every
/// thread of the block calls it.
template <int GROUP, class T, class F> __device__ T group_combine(T v, F f, T* scratch) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  if constexpr (GROUP == 32) {
    return v;
  } else {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();  // the scratch of the previous call is read
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    T r = scratch[0];
#pragma unroll
    for (int w = 1; w < GROUP / 32; ++w) r = f(r, scratch[w]);
    return r;
  }
}

/// The type a row of S computes in: float, or double for double.
template <class S> struct Compute { typedef float type; };
template <> struct Compute<double> { typedef double type; };

/// VEC elements of S, 16 bytes or fewer, loaded and stored as one access.
template <class S, int VEC> struct alignas(sizeof(S) * VEC) Pack {
  S e[VEC];
};

/// Row r of y = OP(row r of x); w and b (cols each) may be null; eps for the norms. S: the
/// stored type (float16 and bfloat16 compute in float: loads widen, stores round once).
/// A norm with a residual r writes x + r (rounded to S) to s and normalises that: each
/// thread reads back only the elements it wrote. VEC > 1: every pointer is aligned to VEC
/// elements and cols is a multiple of VEC, so each thread moves VEC elements per access
/// (thread t the packs t, t + GROUP, ...; in a pack, its elements in order).
template <class S, int OP, int GROUP, int VEC = 1>
__device__ void rows(const S* __restrict__ x, S* __restrict__ y, const S* __restrict__ w,
                     const S* __restrict__ b, const S* __restrict__ r, S* s, index_t nrows,
                     index_t cols, double eps) {
  typedef typename Compute<S>::type T;
  typedef Pack<S, VEC> P;
  __shared__ T scratch[GROUP / 32];
  constexpr int kRowsPerBlock = kBlock / GROUP;
  const index_t t = threadIdx.x % GROUP;
  const index_t packs = cols / VEC;
  const P* wp = reinterpret_cast<const P*>(w);
  const P* bp = reinterpret_cast<const P*>(b);
  for (index_t row = index_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / GROUP; row < nrows;
       row += index_t(gridDim.x) * kRowsPerBlock) {
    const P* xr = reinterpret_cast<const P*>(x + row * cols);
    P* yr = reinterpret_cast<P*>(y + row * cols);
    if constexpr (OP == kSoftmax || OP == kLogSoftmax) {
      T m = minus_infinity<T>();
      for (index_t i = t; i < packs; i += GROUP) {
        const P v = xr[i];
#pragma unroll
        for (int j = 0; j < VEC; ++j) m = Max()(m, T(v.e[j]));
      }
      m = group_combine<GROUP>(m, Max(), scratch);
      T sum = 0;
      for (index_t i = t; i < packs; i += GROUP) {
        const P v = xr[i];
#pragma unroll
        for (int j = 0; j < VEC; ++j) sum += exp_of(T(v.e[j]) - m);
      }
      sum = group_combine<GROUP>(sum, Add(), scratch);
      const T ls = OP == kLogSoftmax ? log_of(sum) : T(0);
      const T inv = T(1) / sum;
      for (index_t i = t; i < packs; i += GROUP) {
        const P v = xr[i];
        P o;
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          o.e[j] = OP == kLogSoftmax ? S((T(v.e[j]) - m) - ls) : S(exp_of(T(v.e[j]) - m) * inv);
        yr[i] = o;
      }
    } else {
      if (r) {  // the sum first, as the Add would write it; then its norm
        P* sr = reinterpret_cast<P*>(s + row * cols);
        const P* rr = reinterpret_cast<const P*>(r + row * cols);
        for (index_t i = t; i < packs; i += GROUP) {
          const P a = xr[i], c = rr[i];
          P o;
#pragma unroll
          for (int j = 0; j < VEC; ++j) o.e[j] = S(T(a.e[j]) + T(c.e[j]));
          sr[i] = o;
        }
        xr = sr;
      }
      T mean = 0, inv;
      if constexpr (OP == kRmsNorm) {
        T q = 0;
        for (index_t i = t; i < packs; i += GROUP) {
          const P v = xr[i];
#pragma unroll
          for (int j = 0; j < VEC; ++j) q += T(v.e[j]) * T(v.e[j]);
        }
        q = group_combine<GROUP>(q, Add(), scratch);
        inv = T(1) / sqrt_of(q / T(cols) + T(eps));
      } else {
        T sum = 0;
        for (index_t i = t; i < packs; i += GROUP) {
          const P v = xr[i];
#pragma unroll
          for (int j = 0; j < VEC; ++j) sum += T(v.e[j]);
        }
        mean = group_combine<GROUP>(sum, Add(), scratch) / T(cols);
        T q = 0;  // the variance from the deviations: no cancellation
        for (index_t i = t; i < packs; i += GROUP) {
          const P v = xr[i];
#pragma unroll
          for (int j = 0; j < VEC; ++j) {
            const T d = T(v.e[j]) - mean;
            q += d * d;
          }
        }
        q = group_combine<GROUP>(q, Add(), scratch);
        inv = T(1) / sqrt_of(q / T(cols) + T(eps));
      }
      for (index_t i = t; i < packs; i += GROUP) {
        const P v = xr[i];
        P wv, bv, o;
        if (w) wv = wp[i];
        if (b) bv = bp[i];
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          T e = (T(v.e[j]) - mean) * inv;
          if (w) e = e * T(wv.e[j]);
          if (b) e = e + T(bv.e[j]);
          o.e[j] = S(e);
        }
        yr[i] = o;
      }
    }
  }
}

}  // namespace norm
}  // namespace xrt
