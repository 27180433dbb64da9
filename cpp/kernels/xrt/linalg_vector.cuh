// cpp/kernels/xrt/linalg_vector.cuh: cross and outer on CUDA (cuda/linalg_vector_kernels.cpp),
// the twins of the CPU's linalg_vector_kernels.cpp: every product and difference is the
// elementwise multiply / subtract of the stored type (integers wrap, 16-bit floats round
// after each step, complex products as libgcc's), so the results are the CPU's bit for bit.
#pragma once
#include "xrt/common.cuh"
#include "xrt/elementwise_ops.cuh"

namespace xrt::linalg {

template <class T> __device__ __forceinline__ T load_at(const char* p, index_t offset) {
  return *reinterpret_cast<const T*>(p + offset);
}

template <class T> __device__ __forceinline__ T product(T a, T b) {
  return ew::binary_value<ew::op::multiply>(a, b);
}

/// out = a x b along an axis of length 3: the layout walks the other dimensions of the three
/// operands (out, a, b; byte strides), axis_* are the byte strides along the axis.
template <class T, int ND, class U>
__device__ __forceinline__ void cross(char* out, const char* a, const char* b,
                                      const StridedLayout<ND, 3>& layout, U n, index_t axis_out,
                                      index_t axis_a, index_t axis_b) {
  for (U i = U(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += U(gridDim.x) * blockDim.x) {
    index_t offset[3];
    layout.offsets(i, offset);
    const char* x = a + offset[1];
    const char* y = b + offset[2];
    T xs[3], ys[3];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      xs[c] = load_at<T>(x, c * axis_a);
      ys[c] = load_at<T>(y, c * axis_b);
    }
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      int c1 = (c + 1) % 3, c2 = (c + 2) % 3;
      T value = ew::binary_value<ew::op::subtract>(product(xs[c1], ys[c2]),
                                                   product(xs[c2], ys[c1]));
      *reinterpret_cast<T*>(out + offset[0] + c * axis_out) = value;
    }
  }
}

/// out[i, j] = a[i] * b[j] (out contiguous rows x cols; a and b by byte stride).
template <class T, class U>
__device__ __forceinline__ void outer(T* out, const char* a, index_t stride_a, const char* b,
                                      index_t stride_b, U rows, U cols) {
  const U n = rows * cols;
  for (U e = U(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += U(gridDim.x) * blockDim.x) {
    U i = e / cols, j = e - i * cols;
    out[e] = product(load_at<T>(a, index_t(i) * stride_a), load_at<T>(b, index_t(j) * stride_b));
  }
}

}  // namespace xrt::linalg
