// cpp/kernels/xrt/copy.cuh: copy with dtype conversion (copy, astype) and fill, contiguous
// or strided (cuda/copy_kernels.cpp generates the kernels).
#pragma once
#include "xrt/cast.cuh"

namespace xrt {

/// Elements per thread per pass of the contiguous loops: independent loads in flight.
constexpr int kCopyUnroll = 4;

/// 16 bytes moved as one (complex128 copied without conversion, fill of any 16-byte value).
struct alignas(16) bytes16 {
  uint64_t word[2];
};

/// out[i] = cast(in[i]) for i < n, grid-stride, kCopyUnroll elements per thread per pass.
/// Note: the host bounds the grid so that base + stride cannot wrap U.
template <class To, class From, class U>
__device__ __forceinline__ void copy_contiguous(To* out, const From* in, U n) {
  const U stride = U(gridDim.x) * blockDim.x * kCopyUnroll;
  for (U base = U(blockIdx.x) * blockDim.x * kCopyUnroll + threadIdx.x; base < n;
       base += stride) {
#pragma unroll
    for (int k = 0; k < kCopyUnroll; ++k) {
      U i = base + U(k) * blockDim.x;
      if (i < n) out[i] = cast_value<To>(in[i]);
    }
  }
}

template <class To, class From, int ND, class U, class S>
__device__ __forceinline__ void copy_strided(char* out, const char* in,
                                             const StridedLayout<ND, 2>& layout, U n) {
  const U stride = U(gridDim.x) * blockDim.x;
  for (U i = U(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    S offset[2];
    layout.offsets(i, offset);
    *at<To>(out, offset[0]) = cast_value<To>(*at<From>(in, offset[1]));
  }
}

template <class T, class U>
__device__ __forceinline__ void fill_contiguous(T* out, T value, U n) {
  const U stride = U(gridDim.x) * blockDim.x * kCopyUnroll;
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
  for (U i = U(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    S offset[1];
    layout.offsets(i, offset);
    *at<T>(out, offset[0]) = value;
  }
}

}  // namespace xrt
