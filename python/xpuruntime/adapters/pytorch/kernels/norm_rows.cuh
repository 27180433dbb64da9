// python/xpuruntime/adapters/pytorch/kernels/norm_rows.cuh: how the norm kernels (norms.cu)
// hold, reduce and stream their rows: vectors of a row, sums and moments over its threads,
// the ring of rows in flight, the block's partial column sums.
#pragma once

// Note [Rows of a norm block]: a row is spread over `tpr` threads (a multiple of 32, a
// run-time argument), and a block of blockDim.x threads holds blockDim.x / tpr rows at once.
// Short rows (tpr = 32: a warp each, reduced by shuffles alone) would otherwise leave a
// block of one warp per multiprocessor slot, far from enough loads in flight (the backward
// pass of 2048 x 256 bf16 rows ran 7.5 us with 4 warps per multiprocessor). The weights
// (and bias) may be float32 under bf16/fp16 rows (W = float, autocast's fp32 parameters):
// no cast before the call, and their gradients come out in their own dtype.

/// VEC elements at p into v: 16-byte pieces where VEC * sizeof(T) is a multiple of 16.
template <typename T, int VEC>
__device__ __forceinline__ void load_vec(const T* p, float (&v)[VEC]) {
  if constexpr ((VEC * sizeof(T)) % 16 == 0) {
    constexpr int PER = 16 / sizeof(T);
#pragma unroll
    for (int piece = 0; piece < VEC / PER; ++piece) {
      uint4 raw = *reinterpret_cast<const uint4*>(p + piece * PER);
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int j = 0; j < PER; ++j) v[piece * PER + j] = to_float(e[j]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) v[j] = to_float(p[j]);
  }
}

template <typename T, int VEC>
__device__ __forceinline__ void store_vec(T* p, const float (&v)[VEC]) {
  if constexpr ((VEC * sizeof(T)) % 16 == 0) {
    constexpr int PER = 16 / sizeof(T);
#pragma unroll
    for (int piece = 0; piece < VEC / PER; ++piece) {
      uint4 raw;
      T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
      for (int j = 0; j < PER; ++j) e[j] = from_float<T>(v[piece * PER + j]);
      *reinterpret_cast<uint4*>(p + piece * PER) = raw;
    }
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) p[j] = from_float<T>(v[j]);
  }
}

/// ITERS vectors of VEC elements of a row of n, from column (it * tpr + lane) * VEC; zeros
/// past n.
template <typename T, int VEC, int ITERS>
__device__ __forceinline__ void load_row(const T* row, int n, int lane, int tpr,
                                         float (&v)[ITERS][VEC]) {
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    int col = (it * tpr + lane) * VEC;
    if (col < n) {
      load_vec<T, VEC>(row + col, v[it]);
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j) v[it][j] = 0.f;
    }
  }
}

template <typename T, int VEC, int ITERS>
__device__ __forceinline__ void store_row(T* row, int n, int lane, int tpr,
                                          const float (&v)[ITERS][VEC]) {
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    int col = (it * tpr + lane) * VEC;
    if (col < n) store_vec<T, VEC>(row + col, v[it]);
  }
}

__device__ __forceinline__ bool in_row(int it, int n, int lane, int tpr, int VEC) {
  return (it * tpr + lane) * VEC < n;
}

/// The sum over the tpr threads of this thread's row, returned to each of them. Every
/// thread of the block calls it together when tpr > 32 (it meets two barriers); `shared`
/// holds a float per warp and may be reused by the next call.
__device__ __forceinline__ float row_sum(float v, float* shared, int tpr) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (tpr == 32) return v;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, per = tpr >> 5;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float s = 0.f;
  for (int i = warp / per * per, end = i + per; i < end; ++i) s += shared[i];
  return s;
}

/// a and b summed over the tpr threads of this thread's row in one round (one pair of
/// barriers where tpr > 32); `shared` holds 64 floats.
__device__ __forceinline__ void row_sum2(float& a, float& b, float* shared, int tpr) {
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  if (tpr == 32) return;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, per = tpr >> 5;
  __syncthreads();
  if (lane == 0) {
    shared[warp] = a;
    shared[32 + warp] = b;
  }
  __syncthreads();
  a = b = 0.f;
  for (int i = warp / per * per, end = i + per; i < end; ++i) {
    a += shared[i];
    b += shared[32 + i];
  }
}

// Note [Row moments]: layer norm's mean and variance come from one reduction, not two (a
// pass for the mean, then one for the squared deviations, each with its barriers; RMS norm,
// with one, moved 30% more bytes a second). Each thread takes the count, mean and sum of
// squared deviations of its own elements (two passes over registers or the ring, exact),
// and the threads' triples merge by Chan's formula, which keeps the deviations' precision
// (E[x^2] - E[x]^2 would cancel for rows far from zero). A warp merges into lane 0 and
// broadcasts, and every thread merges the warps in one order, so a row's threads agree.
__device__ __forceinline__ void merge_moments(float& c, float& m, float& q, float c2, float m2,
                                              float q2) {
  if (c2 == c) {  // equal halves, the usual case: no division
    const float d = m2 - m;
    m += 0.5f * d;
    q += q2 + 0.5f * d * d * c;
    c += c2;
    return;
  }
  const float total = c + c2;
  if (total == 0.f) return;
  const float d = m2 - m, w = c2 / total;
  m += d * w;
  q += q2 + d * d * c * w;
  c = total;
}

/// (count, mean, sum of squared deviations) of this thread's row, from each thread's own;
/// `shared` holds 96 floats.
__device__ __forceinline__ void row_moments(float& c, float& m, float& q, float* shared,
                                            int tpr) {
  for (int o = 16; o > 0; o >>= 1) {
    const float c2 = __shfl_down_sync(0xffffffffu, c, o);
    const float m2 = __shfl_down_sync(0xffffffffu, m, o);
    const float q2 = __shfl_down_sync(0xffffffffu, q, o);
    merge_moments(c, m, q, c2, m2, q2);  // lanes past 31 - o merge garbage nobody reads
  }
  c = __shfl_sync(0xffffffffu, c, 0);
  m = __shfl_sync(0xffffffffu, m, 0);
  q = __shfl_sync(0xffffffffu, q, 0);
  if (tpr == 32) return;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, per = tpr >> 5;
  __syncthreads();
  if (lane == 0) {
    shared[warp] = c;
    shared[32 + warp] = m;
    shared[64 + warp] = q;
  }
  __syncthreads();
  const int first = warp / per * per;
  c = shared[first];
  m = shared[32 + first];
  q = shared[64 + first];
  for (int i = first + 1; i < first + per; ++i)
    merge_moments(c, m, q, shared[i], shared[32 + i], shared[64 + i]);
}

// Note [Norm rows in flight]: one row's loads, then its reductions and its stores, leave a
// multiprocessor's memory pipe idle between rows (bf16 8192-wide layer norm: 2.0-2.35 TB/s
// on the H200, about half its bandwidth). Where rows load as 16-byte pieces, the blocks are
// persistent and each thread loads its own pieces of the rows ahead while it works on the
// current one:
// - STAGES = 1 (the forward's default): the next row's pieces into registers
//   (norm_forward_prefetch), so each element is read once and widened once. The ring below
//   read each piece back from shared memory three times (mean, variance, output), and its
//   forward was bound by those reads (78-81% SM throughput at 35% of DRAM bandwidth).
// - STAGES > 1: the next STAGES - 1 rows into shared memory (cp.async), a ring. A thread
//   reads back only what it copied, so its own cp.async.wait_group orders the ring: no
//   barrier. The backward keeps it (two sources a row, dy and x).
extern __shared__ uint4 norm_smem[];

/// Issues this thread's 16-byte pieces of `row` (zeros when !live or past n) into the ring
/// at piece `base` (a stage and a source: x or dy).
template <typename T, int VEC, int ITERS>
__device__ __forceinline__ void ring_issue(int base, const T* row, int n, bool live, int lane,
                                           int tpr) {
  constexpr int PER = 16 / sizeof(T), PIECES = VEC / PER;
#pragma unroll
  for (int it = 0; it < ITERS; ++it)
#pragma unroll
    for (int piece = 0; piece < PIECES; ++piece) {
      const int col = (it * tpr + lane) * VEC + piece * PER;
      const bool valid = live && col < n;
      cp_async16(norm_smem + (base + it * PIECES + piece) * blockDim.x + threadIdx.x,
                 valid ? row + col : row, valid);
    }
}

/// Vector `it` of this thread's copy at ring piece `base`.
template <typename T, int VEC>
__device__ __forceinline__ void ring_vec(int base, int it, float (&v)[VEC]) {
  constexpr int PER = 16 / sizeof(T), PIECES = VEC / PER;
#pragma unroll
  for (int piece = 0; piece < PIECES; ++piece) {
    uint4 raw = norm_smem[(base + it * PIECES + piece) * blockDim.x + threadIdx.x];
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int j = 0; j < PER; ++j) v[piece * PER + j] = to_float(e[j]);
  }
}

/// The ring's first piece of stage s and source src (of SOURCES rows a stage).
template <typename T, int VEC, int ITERS, int SOURCES>
__device__ __forceinline__ int ring_base(int s, int src) {
  constexpr int PIECES = VEC * sizeof(T) / 16;
  return (s * SOURCES + src) * ITERS * PIECES;
}

/// The block's column sums of acc over its rows' slots into out[n] (one partial row): the
/// slots' values meet in shared memory, one vector column at a time.
template <int VEC, int ITERS>
__device__ __forceinline__ void block_partial(float* out, int n, int lane, int tpr,
                                              const float (&acc)[ITERS][VEC], float* stage) {
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr;
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    const int base = it * tpr * VEC;  // first column of this vector column
    if (base >= n) break;
    __syncthreads();  // the previous round's readers are done with stage
#pragma unroll
    for (int j = 0; j < VEC; ++j) stage[(slot * tpr + lane) * VEC + j] = acc[it][j];
    __syncthreads();
    for (int c = threadIdx.x; c < tpr * VEC && base + c < n; c += blockDim.x) {
      float s = 0.f;
      for (int r = 0; r < per_block; ++r) s += stage[r * tpr * VEC + c];
      out[base + c] = s;
    }
  }
}
