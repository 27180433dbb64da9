// cpp/kernels/xrt/norm.cuh: the row ops (softmax, log_softmax, layer_norm, rms_norm; Note
// [Row ops] in cpp/src/core/norm_ops.cpp) on CUDA, over a contiguous (rows, cols) matrix:
// - warp_rows: a warp per row of up to 32 * V elements, held in registers (lane l has
//   elements l, l + 32, ...): one read of the row, one write;
// - rows: a group of GROUP threads (the block) per longer row, walked once per statistic.
// Each thread combines its elements in order; the group combines the threads' values with
// a fixed pattern of shuffles (and, for a block, its warps' values in order), so results
// do not depend on timing.
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

/// Row r of y = OP(row r of x); w and b (cols each) may be null; eps for the norms. S: the
/// stored type (float16 and bfloat16 compute in float: loads widen, stores round once).
template <class S, int OP, int GROUP>
__device__ void rows(const S* __restrict__ x, S* __restrict__ y, const S* __restrict__ w,
                     const S* __restrict__ b, index_t nrows, index_t cols, double eps) {
  typedef typename Compute<S>::type T;
  __shared__ T scratch[GROUP / 32];
  constexpr int kRowsPerBlock = kBlock / GROUP;
  const index_t t = threadIdx.x % GROUP;
  for (index_t r = index_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / GROUP; r < nrows;
       r += index_t(gridDim.x) * kRowsPerBlock) {
    const S* xr = x + r * cols;
    S* yr = y + r * cols;
    if constexpr (OP == kSoftmax || OP == kLogSoftmax) {
      T m = minus_infinity<T>();
      for (index_t i = t; i < cols; i += GROUP) m = Max()(m, T(xr[i]));
      m = group_combine<GROUP>(m, Max(), scratch);
      T s = 0;
      for (index_t i = t; i < cols; i += GROUP) s += exp_of(T(xr[i]) - m);
      s = group_combine<GROUP>(s, Add(), scratch);
      if constexpr (OP == kLogSoftmax) {
        const T ls = log_of(s);
        for (index_t i = t; i < cols; i += GROUP) yr[i] = S((T(xr[i]) - m) - ls);
      } else {
        const T inv = T(1) / s;
        for (index_t i = t; i < cols; i += GROUP) yr[i] = S(exp_of(T(xr[i]) - m) * inv);
      }
    } else {
      T mean = 0, inv;
      if constexpr (OP == kRmsNorm) {
        T q = 0;
        for (index_t i = t; i < cols; i += GROUP) q += T(xr[i]) * T(xr[i]);
        q = group_combine<GROUP>(q, Add(), scratch);
        inv = T(1) / sqrt_of(q / T(cols) + T(eps));
      } else {
        T s = 0;
        for (index_t i = t; i < cols; i += GROUP) s += T(xr[i]);
        mean = group_combine<GROUP>(s, Add(), scratch) / T(cols);
        T q = 0;  // the variance from the deviations: no cancellation
        for (index_t i = t; i < cols; i += GROUP) {
          T d = T(xr[i]) - mean;
          q += d * d;
        }
        q = group_combine<GROUP>(q, Add(), scratch);
        inv = T(1) / sqrt_of(q / T(cols) + T(eps));
      }
      for (index_t i = t; i < cols; i += GROUP) {
        T v = (T(xr[i]) - mean) * inv;
        if (w) v = v * T(w[i]);
        if (b) v = v + T(b[i]);
        yr[i] = S(v);
      }
    }
  }
}

/// rows for rows of at most 32 * V elements, a warp each, the row in registers.
template <class S, int OP, int V>
__device__ void warp_rows(const S* __restrict__ x, S* __restrict__ y, const S* __restrict__ w,
                          const S* __restrict__ b, index_t nrows, index_t cols, double eps) {
  typedef typename Compute<S>::type T;
  constexpr int kRowsPerBlock = kBlock / 32;
  const int lane = threadIdx.x & 31;
  for (index_t r = index_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32; r < nrows;
       r += index_t(gridDim.x) * kRowsPerBlock) {
    const S* xr = x + r * cols;
    S* yr = y + r * cols;
    T v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const index_t i = lane + 32 * k;
      v[k] = i < cols ? T(xr[i]) : T(0);
    }
    if constexpr (OP == kSoftmax || OP == kLogSoftmax) {
      T m = minus_infinity<T>();
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (lane + 32 * k < cols) m = Max()(m, v[k]);
      m = group_combine<32>(m, Max(), (T*)nullptr);
      T s = 0;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        v[k] = v[k] - m;
        if (lane + 32 * k < cols) s += exp_of(v[k]);
      }
      s = group_combine<32>(s, Add(), (T*)nullptr);
      if constexpr (OP == kLogSoftmax) {
        const T ls = log_of(s);
#pragma unroll
        for (int k = 0; k < V; ++k)
          if (lane + 32 * k < cols) yr[lane + 32 * k] = S(v[k] - ls);
      } else {
        const T inv = T(1) / s;
#pragma unroll
        for (int k = 0; k < V; ++k)
          if (lane + 32 * k < cols) yr[lane + 32 * k] = S(exp_of(v[k]) * inv);
      }
    } else {
      T mean = 0, q = 0;
      if constexpr (OP == kRmsNorm) {
#pragma unroll
        for (int k = 0; k < V; ++k) q += v[k] * v[k];  // the padding is 0
      } else {
        T s = 0;
#pragma unroll
        for (int k = 0; k < V; ++k) s += v[k];
        mean = group_combine<32>(s, Add(), (T*)nullptr) / T(cols);
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const T d = v[k] - mean;
          if (lane + 32 * k < cols) q += d * d;
        }
      }
      q = group_combine<32>(q, Add(), (T*)nullptr);
      const T inv = T(1) / sqrt_of(q / T(cols) + T(eps));
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const index_t i = lane + 32 * k;
        if (i < cols) {
          T o = (v[k] - mean) * inv;
          if (w) o = o * T(w[i]);
          if (b) o = o + T(b[i]);
          yr[i] = S(o);
        }
      }
    }
  }
}

}  // namespace norm
}  // namespace xrt
