// cpp/kernels/xrt/block_scan.cuh: an exclusive sum over a block, shared by the radix
// sort's passes (radix_sort.cuh) and nonzero's runs (mask.cuh).
#pragma once
#include "xrt/common.cuh"

namespace xrt {

/// Exclusive sum of v over the block (all threads call it); total gets the sum.
template <int THREADS>
__device__ __forceinline__ uint32_t block_exclusive_sum(uint32_t v, uint32_t& total) {
  constexpr int kWarps = THREADS / 32;
  __shared__ uint32_t warp_sums[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint32_t x = v;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    uint32_t y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  uint32_t before = 0, sum = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    uint32_t s = warp_sums[w];
    before += w < warp ? s : 0u;
    sum += s;
  }
  __syncthreads();  // warp_sums may be reused by the next call
  total = sum;
  return before + x - v;
}

}  // namespace xrt
