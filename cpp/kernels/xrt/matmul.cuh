// cpp/kernels/xrt/matmul.cuh: integer matrix products (cuBLAS has no exact int64 GEMM).
//
// A plain shared-memory tiled product: each 16 x 16 block computes a 16 x 16 tile of one
// matrix of the batch (blockIdx.z), staging 16 x 16 tiles of a and b through shared memory.
// Operands may have any element strides (0 where broadcast, negative where flipped); c is
// contiguous. Sums wrap like the host's: every dtype accumulates in unsigned 64-bit
// arithmetic (modulo 2^64, no signed overflow) and the result is truncated to the dtype,
// which equals wrapping at every step.
#pragma once

namespace xrt {
namespace matmul {

constexpr int kTile = 16;

template <class T>
__device__ __forceinline__ void integer_tile(const T* __restrict__ a, const T* __restrict__ b,
                                             T* __restrict__ c, long long m, long long n,
                                             long long k, long long a_row, long long a_col,
                                             long long a_batch, long long b_row,
                                             long long b_col, long long b_batch,
                                             long long c_batch) {
  __shared__ unsigned long long tile_a[kTile][kTile];
  __shared__ unsigned long long tile_b[kTile][kTile];
  const long long z = blockIdx.z;
  a += z * a_batch;
  b += z * b_batch;
  c += z * c_batch;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long row = (long long)blockIdx.y * kTile + ty;
  const long long col = (long long)blockIdx.x * kTile + tx;
  unsigned long long sum = 0;
  for (long long p0 = 0; p0 < k; p0 += kTile) {
    const long long pa = p0 + tx, pb = p0 + ty;
    tile_a[ty][tx] = row < m && pa < k ? (unsigned long long)a[row * a_row + pa * a_col] : 0ull;
    tile_b[ty][tx] = pb < k && col < n ? (unsigned long long)b[pb * b_row + col * b_col] : 0ull;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kTile; ++q) sum += tile_a[ty][q] * tile_b[q][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = (T)sum;
}

}  // namespace matmul
}  // namespace xrt

// One kernel per integer dtype, named xrt_matmul_<dtype>.
#define XRT_MATMUL_INTEGER(name, T)                                                          \
  extern "C" __global__ void __launch_bounds__(256) xrt_matmul_##name(                       \
      const T* a, const T* b, T* c, long long m, long long n, long long k, long long a_row, \
      long long a_col, long long a_batch, long long b_row, long long b_col,                 \
      long long b_batch, long long c_batch) {                                                \
    xrt::matmul::integer_tile<T>(a, b, c, m, n, k, a_row, a_col, a_batch, b_row, b_col,     \
                                 b_batch, c_batch);                                          \
  }

XRT_MATMUL_INTEGER(int8, signed char)
XRT_MATMUL_INTEGER(int16, short)
XRT_MATMUL_INTEGER(int32, int)
XRT_MATMUL_INTEGER(int64, long long)
XRT_MATMUL_INTEGER(uint8, unsigned char)
XRT_MATMUL_INTEGER(uint16, unsigned short)
XRT_MATMUL_INTEGER(uint32, unsigned int)
XRT_MATMUL_INTEGER(uint64, unsigned long long)
