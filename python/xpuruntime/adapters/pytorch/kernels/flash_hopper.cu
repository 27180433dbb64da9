// python/xpuruntime/adapters/pytorch/kernels/flash_hopper.cu: the flash_v2 forward on Hopper
// (sm_90a): warpgroup MMAs (wgmma) reading K and V straight from shared memory (wgmma.cuh).
//
// Note [flash_v2 on Hopper]
// - Same arguments, results and semantics as flash_fwd (Note [flash_v2 layout]): o, and lse2
//   (log-sum-exp in base 2, +inf for a row that sees no key) for the backward pass.
// - A block owns 128 query rows and has three warpgroups. One loads (its registers cut to 40
//   by setmaxnreg); two compute, 64 query rows each (their registers raised to 232).
// - The loading warpgroup copies Q once, then each 128-key tile of K and V into one of three
//   stages. Copies are cp.async, and each thread's copies complete the stage's `full` mbarrier
//   (cp.async.mbarrier.arrive.noinc). A stage is refilled once both computing warpgroups
//   have arrived on its `empty` mbarrier.
// - A computing warpgroup, per tile:
//   - S = Q K^T: one wgmma chain, both operands in shared memory (m64n128k16, D / 16 steps);
//   - the online softmax on S in registers;
//   - O += P V: P from registers (the accumulator's layout is the A fragment's), V from
//     shared memory, transposed by the instruction (m64nDk16, 8 steps).
//   A tile's P V is issued right after the next tile's Q K^T, so one wait covers both and the
//   tensor cores get the two chains back to back. Scores never reach memory.
// - Tiles and descriptors: Note [wgmma tiles].
// - The copies are generic-proxy writes and wgmma reads through the async proxy: each
//   computing thread fences the proxies after the `full` wait.
// - Measured (H100, bf16, 4 x 16 heads x 4096 tokens, d = 128): 508-535 TFLOP/s against
//   torch's FLASH backend's 341; the same design without the loading warpgroup (all threads
//   copying, a block barrier a tile) ran at 385.

namespace hopper {

constexpr int BM = 128, BN = 128;

template <typename T, int D> struct Layout {
  static constexpr int STAGES = 3;
  static constexpr unsigned Q_BYTES = BM * D * 2, KV_BYTES = BN * D * 2,
                            K = Q_BYTES, V = K + STAGES * KV_BYTES,
                            BARRIERS = V + STAGES * KV_BYTES,  // full[], empty[], q
                            BYTES = BARRIERS + (2 * STAGES + 1) * 8 + 1024;  // + alignment
};

/// The loading warpgroup: Q once, then each K/V tile into its stage once the computing
/// warpgroups have released the stage.
template <typename T, int D>
__device__ __forceinline__ void load_all(unsigned base, const T* q, const T* k, const T* v,
                                         long long qs, long long ks, long long vs,
                                         long long q0, long long sq, long long sk,
                                         long long kv_blocks) {
  using L = Layout<T, D>;
  const unsigned full = base + L::BARRIERS, empty = full + L::STAGES * 8,
                 q_full = empty + L::STAGES * 8;
  load_tile<T, D, BM>(base, q, qs, q0, sq);
  barrier_arrive_on_copies(q_full);
  for (long long j = 0; j < kv_blocks; ++j) {
    const unsigned stage = static_cast<unsigned>(j % L::STAGES);
    const unsigned use = static_cast<unsigned>(j / L::STAGES);
    if (use > 0) barrier_wait(empty + stage * 8, (use - 1) & 1);
    load_tile<T, D, BN>(base + L::K + stage * L::KV_BYTES, k, ks, j * BN, sk);
    load_tile<T, D, BN>(base + L::V + stage * L::KV_BYTES, v, vs, j * BN, sk);
    barrier_arrive_on_copies(full + stage * 8);
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/// A computing warpgroup: 64 query rows against every key tile. Each tile's P V is issued
/// after the next tile's Q K^T, so that one wait covers both.
template <typename T, int D>
__device__ __forceinline__ void compute(unsigned base, T* __restrict__ o, float* __restrict__ lse,
                                        const T* __restrict__ mask, long long sq, long long sk,
                                        long long os, long long ms, long long q0,
                                        long long kv_blocks, float scale2, int causal) {
  using L = Layout<T, D>;
  const unsigned full = base + L::BARRIERS, q_full = full + 2 * L::STAGES * 8;
  const unsigned empty = full + L::STAGES * 8;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wg = warp >> 2;
  const int g = lane >> 2, t = lane & 3, cw = warp - 4;  // warp among the computing ones
  float acc[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) acc[i] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  const long long row[2] = {q0 + cw * 16 + g, q0 + cw * 16 + g + 8};
  const unsigned q_rows = base + (wg - 1) * 64 * 128;  // this warpgroup's rows of each panel
  barrier_wait(q_full, 0);

  unsigned p[BN / 16][4];  // P of the previous tile
  unsigned prev_v = 0, prev_stage = 0;
  for (long long j = 0; j < kv_blocks; ++j) {
    const long long k0 = j * BN;
    const unsigned stage = static_cast<unsigned>(j % L::STAGES);
    const unsigned use = static_cast<unsigned>(j / L::STAGES);
    const unsigned sK = base + L::K + stage * L::KV_BYTES;
    const unsigned sV = base + L::V + stage * L::KV_BYTES;
    barrier_wait(full + stage * 8, use & 1);
    // The tile was written by generic-proxy copies; wgmma reads through the async proxy.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    float s[BN / 2];
    wgmma_fence();
    pin(acc);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const unsigned offset = (kk & 3) * 32;  // 16 columns within the panel
      mma_ss<T, BN>(s, descriptor(q_rows + (kk >> 2) * BM * 128 + offset, 16, 1024),
                    descriptor(sK + (kk >> 2) * BN * 128 + offset, 16, 1024), kk);
    }
    wgmma_commit();
    if (j > 0) {
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk)
        mma_rs<T, D>(acc, p[kk], descriptor(prev_v + kk * 16 * 128, BN * 128, 1024));
      wgmma_commit();
    }
    wgmma_wait_all();
    pin(s);
    pin(acc);
    if (j > 0) barrier_arrive(empty + prev_stage * 8);
    prev_v = sV;
    prev_stage = stage;

    // Base-2 scores: raw products scaled in the exponent's FMA, except on edge tiles (the
    // sequences' ends, the causal diagonal, a mask), which scale and mask element by element.
    const bool edge = mask || k0 + BN > sk || q0 + BM > sq || (causal && k0 + BN - 1 > q0);
    if (edge) {
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const long long r = row[e >> 1], col = k0 + nt * 8 + 2 * t + (e & 1);
          float x = s[nt * 4 + e] * scale2;
          const bool seen = col < sk && r < sq && !(causal && col > r);
          if (seen && mask) x += to_float(mask[r * ms + col]) * LOG2E;
          s[nt * 4 + e] = seen ? x : -INFINITY;
        }
    }
    const float mul = edge ? 1.f : scale2;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float top = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
        top = fmaxf(top, fmaxf(s[nt * 4 + 2 * r], s[nt * 4 + 2 * r + 1]));
      top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 1));
      top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 2));
      top = fmaxf(m[r], top * mul);
      const float base_r = top == -INFINITY ? 0.f : top;
      const float alpha = exp2f(m[r] - base_r);  // 0 when m was -inf
      m[r] = top;
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = exp2f(fmaf(s[nt * 4 + 2 * r + e], mul, -base_r));
          s[nt * 4 + 2 * r + e] = p;
          sum += p;
        }
      l[r] = l[r] * alpha + sum;
#pragma unroll
      for (int nt = 0; nt < D / 8; ++nt) {
        acc[nt * 4 + 2 * r] *= alpha;
        acc[nt * 4 + 2 * r + 1] *= alpha;
      }
    }

#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      p[kk][0] = pack2<T>(s[8 * kk], s[8 * kk + 1]);
      p[kk][1] = pack2<T>(s[8 * kk + 2], s[8 * kk + 3]);
      p[kk][2] = pack2<T>(s[8 * kk + 4], s[8 * kk + 5]);
      p[kk][3] = pack2<T>(s[8 * kk + 6], s[8 * kk + 7]);
    }
  }
  if (kv_blocks > 0) {
    wgmma_fence();
    pin(acc);
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
      mma_rs<T, D>(acc, p[kk], descriptor(prev_v + kk * 16 * 128, BN * 128, 1024));
    wgmma_commit();
    wgmma_wait_all();
    pin(acc);
    barrier_arrive(empty + prev_stage * 8);
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = l[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (row[r] >= sq) continue;
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    T* out = o + row[r] * os;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
      *reinterpret_cast<unsigned*>(out + nt * 8 + 2 * t) =
          pack2<T>(acc[nt * 4 + 2 * r] * inv, acc[nt * 4 + 2 * r + 1] * inv);
    if (t == 0) lse[row[r]] = sum > 0.f ? m[r] + log2f(sum) : INFINITY;
  }
}

template <typename T, int D>
__device__ void flash_forward(const T* __restrict__ q, const T* __restrict__ k,
                              const T* __restrict__ v, T* __restrict__ o, float* __restrict__ lse,
                              const T* __restrict__ mask, long long sq, long long sk,
                              long long heads, long long qb, long long qh, long long qs,
                              long long kb, long long kh, long long ks, long long vb,
                              long long vh, long long vs, long long ob, long long oh,
                              long long os, long long mb, long long mh, long long ms,
                              float scale, int causal) {
  using L = Layout<T, D>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const unsigned base = (shared_address(smem_raw) + 1023u) & ~1023u;
  const unsigned full = base + L::BARRIERS, empty = full + L::STAGES * 8,
                 q_full = empty + L::STAGES * 8;
  const int wg = threadIdx.x >> 7;
  const long long bh = blockIdx.y, b = bh / heads, h = bh % heads;
  // Causal blocks further down have more keys: they start first.
  const long long q_block = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const long long q0 = q_block * BM;
  long long kv_blocks = (sk + BN - 1) / BN;
  if (causal) kv_blocks = min(kv_blocks, (min(sq, q0 + BM) - 1) / BN + 1);
  if (threadIdx.x == 0) {
    for (int s = 0; s < L::STAGES; ++s) {
      barrier_init(full + s * 8, LOADERS);
      barrier_init(empty + s * 8, THREADS - LOADERS);
    }
    barrier_init(q_full, LOADERS);
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    load_all<T, D>(base, q + b * qb + h * qh, k + b * kb + h * kh, v + b * vb + h * vh, qs,
                   ks, vs, q0, sq, sk, kv_blocks);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    compute<T, D>(base, o + b * ob + h * oh, lse + bh * sq, mask ? mask + b * mb + h * mh : mask,
                  sq, sk, os, ms, q0, kv_blocks, scale * LOG2E, causal);
  }
}

}  // namespace hopper

#define FLASH_HOPPER(T, TN, D)                                                               \
  extern "C" __global__ void __launch_bounds__(hopper::THREADS, 1) flash_fwd_sm90_##TN##_##D( \
      const T* q, const T* k, const T* v, T* o, float* lse, const T* mask, long long sq,     \
      long long sk, long long heads, long long qb, long long qh, long long qs, long long kb, \
      long long kh, long long ks, long long vb, long long vh, long long vs, long long ob,    \
      long long oh, long long os, long long mb, long long mh, long long ms, float scale,     \
      int causal) {                                                                          \
    hopper::flash_forward<T, D>(q, k, v, o, lse, mask, sq, sk, heads, qb, qh, qs, kb, kh,   \
                                ks, vb, vh, vs, ob, oh, os, mb, mh, ms, scale, causal);      \
  }

FLASH_HOPPER(f16, f16, 64)
FLASH_HOPPER(f16, f16, 128)
FLASH_HOPPER(bf16, bf16, 64)
FLASH_HOPPER(bf16, bf16, 128)
