// cpp/kernels/xrt/copy.cuh: copy with dtype conversion (copy, astype) and fill, contiguous
// or strided (cuda/copy_kernels.cpp generates the kernels).
#pragma once
#include "xrt/cast.cuh"

namespace xrt {

/// Elements per thread per pass: loads in flight before the first store.
constexpr int kCopyUnroll = 4;

/// 16 bytes moved as one (complex128 copied without conversion, fill of any 16-byte value).
struct alignas(16) bytes16 {
  uint64_t word[2];
};

/// N consecutive elements, loaded and stored as one access (at most 16 bytes wide).
template <class T, int N> struct alignas(sizeof(T) * N < 16 ? sizeof(T) * N : 16) vec {
  T v[N];
};

template <class T> __device__ __forceinline__ bool aligned_to(const T* p, unsigned bytes) {
  return reinterpret_cast<unsigned long long>(p) % bytes == 0;
}

/// out[i] = cast(in[i]) for i < n, grid-stride. Each thread converts kCopyUnroll consecutive
/// elements per pass with vector accesses when both pointers allow it (a view at an odd
/// offset may not), else kCopyUnroll strided ones, all loaded before any is stored.
/// Note: the host bounds the grid so that an index plus the grid's stride cannot wrap U.
template <class To, class From, class U>
__device__ __forceinline__ void copy_contiguous(To* __restrict__ out,
                                                const From* __restrict__ in, U n) {
  constexpr int N = kCopyUnroll;
  typedef vec<From, N> InVec;
  typedef vec<To, N> OutVec;
  const U thread = U(blockIdx.x) * blockDim.x + threadIdx.x;
  const U threads = U(gridDim.x) * blockDim.x;
  if (aligned_to(in, alignof(InVec)) && aligned_to(out, alignof(OutVec))) {
    const U tiles = n / N;
#pragma unroll 1  // Note [Grid-stride loops stay rolled] (elementwise.cuh)
    for (U t = thread; t < tiles; t += threads) {
      InVec a = reinterpret_cast<const InVec*>(in)[t];
      OutVec b;
#pragma unroll
      for (int k = 0; k < N; ++k) b.v[k] = cast_value<To>(a.v[k]);
      reinterpret_cast<OutVec*>(out)[t] = b;
    }
    const U i = tiles * N + thread;  // the last n % N elements
    if (i < n) out[i] = cast_value<To>(in[i]);
    return;
  }
#pragma unroll 1  // Note [Grid-stride loops stay rolled] (elementwise.cuh)
  for (U base = U(blockIdx.x) * blockDim.x * N + threadIdx.x; base < n; base += threads * N) {
    From a[N];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      U i = base + U(k) * blockDim.x;
      if (i < n) a[k] = in[i];
    }
#pragma unroll
    for (int k = 0; k < N; ++k) {
      U i = base + U(k) * blockDim.x;
      if (i < n) out[i] = cast_value<To>(a[k]);
    }
  }
}

/// The strided twin: kCopyUnroll elements per thread per pass, loaded before any is stored.
template <class To, class From, int ND, class U, class S>
__device__ __forceinline__ void copy_strided(char* __restrict__ out, const char* __restrict__ in,
                                             const StridedLayout<ND, 2>& layout, U n) {
  constexpr int N = kCopyUnroll;
  const U threads = U(gridDim.x) * blockDim.x;
#pragma unroll 1  // Note [Grid-stride loops stay rolled] (elementwise.cuh)
  for (U base = U(blockIdx.x) * blockDim.x * N + threadIdx.x; base < n; base += threads * N) {
    From a[N];
    S offset[N][2];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      U i = base + U(k) * blockDim.x;
      if (i < n) {
        layout.offsets(i, offset[k]);
        a[k] = *at<From>(in, offset[k][1]);
      }
    }
#pragma unroll
    for (int k = 0; k < N; ++k) {
      U i = base + U(k) * blockDim.x;
      if (i < n) *at<To>(out, offset[k][0]) = cast_value<To>(a[k]);
    }
  }
}

template <class T, class U>
__device__ __forceinline__ void fill_contiguous(T* out, T value, U n) {
  const U stride = U(gridDim.x) * blockDim.x * kCopyUnroll;
#pragma unroll 1  // Note [Grid-stride loops stay rolled] (elementwise.cuh)
  for (U base = U(blockIdx.x) * blockDim.x * kCopyUnroll + threadIdx.x; base < n;
       base += stride) {
#pragma unroll
    for (int k = 0; k < kCopyUnroll; ++k) {
      U i = base + U(k) * blockDim.x;
      if (i < n) out[i] = value;
    }
  }
}

template <class T, int ND, class U, class S>
__device__ __forceinline__ void fill_strided(char* out, T value,
                                             const StridedLayout<ND, 1>& layout, U n) {
  const U stride = U(gridDim.x) * blockDim.x;
#pragma unroll 1  // Note [Grid-stride loops stay rolled] (elementwise.cuh)
  for (U i = U(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    S offset[1];
    layout.offsets(i, offset);
    *at<T>(out, offset[0]) = value;
  }
}

}  // namespace xrt
