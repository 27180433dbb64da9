// python/xpuruntime/adapters/pytorch/kernels/flash_hopper_backward.cu: the flash_v2 backward
// on Hopper (sm_90a), on wgmma.cuh's machinery.

namespace hopper {

// Note [flash_v2 backward on Hopper]
// - Same arguments and results as flash_bwd (Note [flash_v2 layout]): dK and dV in their
//   strides, dQ added into an fp32 buffer; delta = rowsum(dO * O) comes from flash_delta.
// - A block owns 128 keys (K and V stay in shared memory) and walks the query tiles of 64
//   rows. Three warpgroups: one loads Q, dO, lse2 and delta of each query tile into one of
//   two stages (cp.async completing mbarriers, as in the forward); two compute, 64 keys each.
// - A computing warpgroup, per query tile (every product a wgmma chain):
//   - S^T = K Q^T and dP^T = V dO^T (both operands in shared memory, K-major);
//   - P^T = exp2(S^T scale2 - lse2) and dS^T = P^T (dP^T - delta) scale, in registers;
//   - dV += P^T dO and dK += dS^T Q (A from registers, B MN-major from shared memory);
//   - dS^T also goes to shared memory (two buffers, alternating by tile). After a barrier
//     between the two warpgroups, each computes dQ = dS K for half of the D columns over all
//     128 keys (A and B MN-major) and adds it into memory with vector reductions
//     (red.global.add.v2.f32). Each query tile's dQ thus reaches memory once a block.
// - One barrier a tile suffices: a warpgroup writes a dS^T buffer only after both passed the
//   previous tile's barrier, which each reaches after its wait on the dQ product that read
//   that buffer two tiles back.
// - Measured (H100, 4 x 16 heads x 4096 tokens, d = 128, bf16): 288-299 TFLOP/s (counting
//   2.5 forwards) against torch FLASH's 281, the mma.sync backward's 124; d = 64 (32 heads):
//   230 against 260. Each warpgroup adding its own 64 keys' dQ (twice the reductions) ran
//   d = 64 at 195; issuing the next tile's S^T and dP^T behind this tile's dV, dK and dQ
//   (one wait a tile) gained nothing; the two halves of dQ met in shared memory and added by
//   bulk reductions a row (cp.reduce.async.bulk, issued by one thread) ran at 258 (d = 128)
//   and 154 (d = 64).

constexpr int BWD_BM = 64, BWD_BN = 128;

template <typename T, int D> struct BackwardLayout {
  static constexpr int STAGES = 2;
  static constexpr unsigned KV_BYTES = BWD_BN * D * 2, TILE = BWD_BM * D * 2,
                            DS_BYTES = BWD_BN * BWD_BM * 2,
                            K = 0, V = KV_BYTES, Q = 2 * KV_BYTES, DO = Q + STAGES * TILE,
                            DS = DO + STAGES * TILE,       // two buffers
                            LSE = DS + 2 * DS_BYTES,       // per stage: lse2[64], delta[64]
                            BARRIERS = LSE + STAGES * 512,  // kv_full, full[], empty[]
                            BYTES = BARRIERS + (1 + 2 * STAGES) * 8 + 1024;
};

/// The loading warpgroup of the backward: K and V once, then each query tile's Q, dO, lse2
/// and delta into its stage.
template <typename T, int D>
__device__ __forceinline__ void backward_load_all(unsigned base, const T* q, const T* k,
                                                  const T* v, const T* d_o, const float* lse,
                                                  const float* delta, long long qs,
                                                  long long ks, long long vs, long long gs,
                                                  long long k0, long long sq, long long sk,
                                                  long long first, long long q_blocks) {
  using L = BackwardLayout<T, D>;
  const unsigned kv_full = base + L::BARRIERS, full = kv_full + 8,
                 empty = full + L::STAGES * 8;
  load_tile<T, D, BWD_BN>(base + L::K, k, ks, k0, sk);
  load_tile<T, D, BWD_BN>(base + L::V, v, vs, k0, sk);
  barrier_arrive_on_copies(kv_full);
  for (long long i = first; i < q_blocks; ++i) {
    const long long n = i - first, q0 = i * BWD_BM;
    const unsigned stage = static_cast<unsigned>(n % L::STAGES);
    const unsigned use = static_cast<unsigned>(n / L::STAGES);
    if (use > 0) barrier_wait(empty + stage * 8, (use - 1) & 1);
    load_tile<T, D, BWD_BM>(base + L::Q + stage * L::TILE, q, qs, q0, sq);
    load_tile<T, D, BWD_BM>(base + L::DO + stage * L::TILE, d_o, gs, q0, sq);
    // lse2 and delta of the tile's rows, one float a thread (rows past sq: zeros, and the
    // computing side masks them).
    const int r = threadIdx.x & 63;
    const float* src = (threadIdx.x < 64 ? lse : delta) + q0 + r;
    const bool valid = q0 + r < sq;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                     base + L::LSE + stage * 512 + threadIdx.x * 4),
                 "l"(valid ? src : lse), "r"(valid ? 4 : 0));
    barrier_arrive_on_copies(full + stage * 8);
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/// What a computing warpgroup of the backward keeps: its place, its 64 keys, and dK, dV.
template <typename T, int D> struct BackwardState {
  using L = BackwardLayout<T, D>;
  unsigned base, k_rows, v_rows;
  int c, cw, g, t, key_local;
  long long key[2];
  float dk[D / 2], dv[D / 2];

  __device__ __forceinline__ BackwardState(unsigned base_, long long k0) : base(base_) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    c = (warp >> 2) - 1;
    cw = warp & 3;
    g = lane >> 2;
    t = lane & 3;
    key_local = 64 * c + 16 * cw + g;  // this thread's rows: key_local and key_local + 8
    key[0] = k0 + key_local;
    key[1] = k0 + key_local + 8;
    k_rows = base + L::K + 64 * c * 128;
    v_rows = base + L::V + 64 * c * 128;
#pragma unroll
    for (int i = 0; i < D / 2; ++i) dk[i] = dv[i] = 0.f;
  }
  __device__ __forceinline__ unsigned q_tile(unsigned stage) const {
    return base + L::Q + stage * L::TILE;
  }
  __device__ __forceinline__ unsigned do_tile(unsigned stage) const {
    return base + L::DO + stage * L::TILE;
  }
  __device__ __forceinline__ unsigned ds_buffer(long long n) const {
    return base + L::DS + static_cast<unsigned>(n & 1) * L::DS_BYTES;
  }
};

/// Issues S^T = K Q^T and dP^T = V dO^T for this warpgroup's keys (no commit).
template <typename T, int D>
__device__ __forceinline__ void issue_scores(const BackwardState<T, D>& w, unsigned stage,
                                             float (&st)[BWD_BM / 2],
                                             float (&dpt)[BWD_BM / 2]) {
  const unsigned sQ = w.q_tile(stage), sG = w.do_tile(stage);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const unsigned offset = (kk >> 2) * BWD_BN * 128 + (kk & 3) * 32;
    const unsigned tile_offset = (kk >> 2) * BWD_BM * 128 + (kk & 3) * 32;
    mma_ss<T, BWD_BM>(st, descriptor(w.k_rows + offset, 16, 1024),
                      descriptor(sQ + tile_offset, 16, 1024), kk);
  }
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const unsigned offset = (kk >> 2) * BWD_BN * 128 + (kk & 3) * 32;
    const unsigned tile_offset = (kk >> 2) * BWD_BM * 128 + (kk & 3) * 32;
    mma_ss<T, BWD_BM>(dpt, descriptor(w.v_rows + offset, 16, 1024),
                      descriptor(sG + tile_offset, 16, 1024), kk);
  }
}

/// P^T = exp2(S^T scale2 - lse2) and dS^T = P^T (dP^T - delta) scale as 16-bit A fragments
/// (checks only on edge tiles), dS^T also into the shared buffer for dQ: rows are keys, the
/// 64 queries of a row one swizzled 128-byte line.
template <typename T, int D>
__device__ __forceinline__ void gradients_of_scores(
    const BackwardState<T, D>& w, unsigned stage, long long n, long long q0, long long k0,
    const T* __restrict__ mask, long long sq, long long sk, long long ms, float scale,
    int causal, float (&st)[BWD_BM / 2], float (&dpt)[BWD_BM / 2],
    unsigned (&pf)[BWD_BM / 16][4], unsigned (&sf)[BWD_BM / 16][4]) {
  using L = BackwardLayout<T, D>;
  const float scale2 = scale * LOG2E;
  const unsigned lse_at = w.base + L::LSE + stage * 512, sS = w.ds_buffer(n);
  const int t = w.t;
  const bool edge = mask || q0 + BWD_BM > sq || k0 + BWD_BN > sk ||
                    (causal && k0 + BWD_BN - 1 > q0);
#pragma unroll
  for (int nt = 0; nt < BWD_BM / 8; ++nt) {
    float l2[2], dl[2];  // lse2 and delta of this thread's two query columns
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n"
                 : "=f"(l2[0]), "=f"(l2[1]) : "r"(lse_at + (nt * 8 + 2 * t) * 4));
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n"
                 : "=f"(dl[0]), "=f"(dl[1]) : "r"(lse_at + 256 + (nt * 8 + 2 * t) * 4));
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = st[nt * 4 + e] * scale2;
      bool seen = true;
      if (edge) {
        const long long qrow = q0 + nt * 8 + 2 * t + (e & 1), kcol = w.key[e >> 1];
        seen = qrow < sq && kcol < sk && !(causal && kcol > qrow);
        if (seen && mask) x += to_float(mask[qrow * ms + kcol]) * LOG2E;
      }
      const float p = seen ? exp2f(x - l2[e & 1]) : 0.f;
      st[nt * 4 + e] = p;
      dpt[nt * 4 + e] = p * scale * (dpt[nt * 4 + e] - dl[e & 1]);
    }
  }
#pragma unroll
  for (int kk = 0; kk < BWD_BM / 16; ++kk) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      pf[kk][e] = pack2<T>(st[8 * kk + 2 * e], st[8 * kk + 2 * e + 1]);
      sf[kk][e] = pack2<T>(dpt[8 * kk + 2 * e], dpt[8 * kk + 2 * e + 1]);
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = w.key_local + 8 * (e & 1), col = 16 * kk + 8 * (e >> 1) + 2 * t;
      const unsigned at = sS + r * 128 + (((col >> 3) ^ (r & 7)) << 4) + (col & 7) * 2;
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(at), "r"(sf[kk][e]) : "memory");
    }
  }
}

/// Issues dV += P^T dO and dK += dS^T Q (no commit).
template <typename T, int D>
__device__ __forceinline__ void issue_dv_dk(BackwardState<T, D>& w, unsigned stage,
                                            const unsigned (&pf)[BWD_BM / 16][4],
                                            const unsigned (&sf)[BWD_BM / 16][4]) {
  const unsigned sQ = w.q_tile(stage), sG = w.do_tile(stage);
#pragma unroll
  for (int kk = 0; kk < BWD_BM / 16; ++kk)
    mma_rs<T, D>(w.dv, pf[kk], descriptor(sG + kk * 16 * 128, BWD_BM * 128, 1024));
#pragma unroll
  for (int kk = 0; kk < BWD_BM / 16; ++kk)
    mma_rs<T, D>(w.dk, sf[kk], descriptor(sQ + kk * 16 * 128, BWD_BM * 128, 1024));
}

/// Issues dQ = dS K for this warpgroup's half of the D columns over all 128 keys (a 64 x D/2
/// product; no commit), once both warpgroups' halves of dS^T are in.
template <typename T, int D>
__device__ __forceinline__ void issue_dq(const BackwardState<T, D>& w, long long n,
                                         float (&dq)[D / 4]) {
  using L = BackwardLayout<T, D>;
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("bar.sync 1, 256;\n" ::: "memory");
  // K's columns [c D/2, c D/2 + D/2): panel c (D = 128), or half of panel 0 (D = 64; 32
  // columns are 64 bytes, four 16-byte chunks of the 128-byte swizzled line).
  const unsigned columns = D == 128 ? w.c * BWD_BN * 128 : w.c * 64;
  const unsigned sS = w.ds_buffer(n);
#pragma unroll
  for (int kk = 0; kk < BWD_BN / 16; ++kk)
    mma_ss_mn<T, D / 2>(dq, descriptor(sS + kk * 16 * 128, 16, 1024),
                        descriptor(w.base + L::K + columns + kk * 16 * 128, 16, 1024), kk);
}

/// dQ of a tile into the fp32 buffer, by vector reductions.
template <typename T, int D>
__device__ __forceinline__ void add_dq(const BackwardState<T, D>& w, float* __restrict__ dq_acc,
                                       long long q0, long long sq, const float (&dq)[D / 4]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const long long qrow = q0 + 16 * w.cw + w.g + 8 * r;
    if (qrow >= sq) continue;
    float* dst = dq_acc + qrow * D + D / 2 * w.c + 2 * w.t;
#pragma unroll
    for (int nt = 0; nt < D / 16; ++nt)
      asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(dst + nt * 8),
                   "f"(dq[nt * 4 + 2 * r]), "f"(dq[nt * 4 + 2 * r + 1])
                   : "memory");
  }
}

/// A computing warpgroup of the backward: keys [k0 + 64 c, k0 + 64 c + 64) against every
/// query tile; dK and dV in registers, written at the end.
template <typename T, int D>
__device__ __forceinline__ void backward_compute(unsigned base, const T* __restrict__ mask,
                                                 float* __restrict__ dq_acc,
                                                 T* __restrict__ dk, T* __restrict__ dv,
                                                 long long dks, long long dvs,
                                                 long long sq, long long sk, long long ms,
                                                 long long k0, long long first,
                                                 long long q_blocks, float scale,
                                                 int causal) {
  using L = BackwardLayout<T, D>;
  const unsigned kv_full = base + L::BARRIERS, full = kv_full + 8,
                 empty = full + L::STAGES * 8;
  BackwardState<T, D> w(base, k0);
  barrier_wait(kv_full, 0);
  // Defined before the first product: ptxas serializes a chain whose accumulators may hold
  // undefined values.
  float st[BWD_BM / 2], dpt[BWD_BM / 2], dq[D / 4];
#pragma unroll
  for (int i = 0; i < BWD_BM / 2; ++i) st[i] = dpt[i] = 0.f;
#pragma unroll
  for (int i = 0; i < D / 4; ++i) dq[i] = 0.f;
  unsigned pf[BWD_BM / 16][4], sf[BWD_BM / 16][4];

  for (long long i = first; i < q_blocks; ++i) {
    const long long n = i - first, q0 = i * BWD_BM;
    const unsigned stage = static_cast<unsigned>(n % L::STAGES);
    barrier_wait(full + stage * 8, static_cast<unsigned>(n / L::STAGES) & 1);
    // The tile was written by generic-proxy copies; wgmma reads through the async proxy.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    wgmma_fence();
    issue_scores(w, stage, st, dpt);
    wgmma_commit();
    wgmma_wait_all();
    pin(st);
    pin(dpt);
    gradients_of_scores(w, stage, n, q0, k0, mask, sq, sk, ms, scale, causal, st, dpt, pf,
                        sf);
    wgmma_fence();
    pin(w.dv);
    pin(w.dk);
    issue_dv_dk(w, stage, pf, sf);
    issue_dq(w, n, dq);
    wgmma_commit();
    wgmma_wait_all();
    pin(w.dv);
    pin(w.dk);
    pin(dq);
    barrier_arrive(empty + stage * 8);
    add_dq(w, dq_acc, q0, sq, dq);
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (w.key[r] >= sk) continue;
    T* dkrow = dk + w.key[r] * dks;
    T* dvrow = dv + w.key[r] * dvs;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt) {
      *reinterpret_cast<unsigned*>(dkrow + nt * 8 + 2 * w.t) =
          pack2<T>(w.dk[nt * 4 + 2 * r], w.dk[nt * 4 + 2 * r + 1]);
      *reinterpret_cast<unsigned*>(dvrow + nt * 8 + 2 * w.t) =
          pack2<T>(w.dv[nt * 4 + 2 * r], w.dv[nt * 4 + 2 * r + 1]);
    }
  }
}

template <typename T, int D>
__device__ void flash_backward(const T* __restrict__ q, const T* __restrict__ k,
                               const T* __restrict__ v, const T* __restrict__ d_o,
                               const float* __restrict__ lse, const float* __restrict__ delta,
                               const T* __restrict__ mask, float* __restrict__ dq_acc,
                               T* __restrict__ dk, T* __restrict__ dv, long long sq,
                               long long sk, long long heads, long long qb, long long qh,
                               long long qs, long long kb, long long kh, long long ks,
                               long long vb, long long vh, long long vs, long long gb,
                               long long gh, long long gs, long long mb, long long mh,
                               long long ms, long long dkb, long long dkh, long long dks,
                               long long dvb, long long dvh, long long dvs, float scale,
                               int causal) {
  using L = BackwardLayout<T, D>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const unsigned base = (shared_address(smem_raw) + 1023u) & ~1023u;
  const unsigned kv_full = base + L::BARRIERS, full = kv_full + 8,
                 empty = full + L::STAGES * 8;
  const int wg = threadIdx.x >> 7;
  const long long bh = blockIdx.y, b = bh / heads, h = bh % heads;
  const long long k0 = static_cast<long long>(blockIdx.x) * BWD_BN;
  const long long first = causal ? k0 / BWD_BM : 0;  // earlier queries see none of these keys
  const long long q_blocks = (sq + BWD_BM - 1) / BWD_BM;
  if (threadIdx.x == 0) {
    barrier_init(kv_full, LOADERS);
    for (int s = 0; s < L::STAGES; ++s) {
      barrier_init(full + s * 8, LOADERS);
      barrier_init(empty + s * 8, THREADS - LOADERS);
    }
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
    backward_load_all<T, D>(base, q + b * qb + h * qh, k + b * kb + h * kh,
                            v + b * vb + h * vh, d_o + b * gb + h * gh, lse + bh * sq,
                            delta + bh * sq, qs, ks, vs, gs, k0, sq, sk, first, q_blocks);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    backward_compute<T, D>(base, mask ? mask + b * mb + h * mh : mask, dq_acc + bh * sq * D,
                           dk + b * dkb + h * dkh, dv + b * dvb + h * dvh, dks, dvs, sq, sk,
                           ms, k0, first, q_blocks, scale, causal);
  }
}

}  // namespace hopper

#define FLASH_HOPPER_BACKWARD(T, TN, D)                                                      \
  extern "C" __global__ void __launch_bounds__(hopper::THREADS, 1) flash_bwd_sm90_##TN##_##D( \
      const T* q, const T* k, const T* v, const T* d_o, const float* lse,                    \
      const float* delta, const T* mask, float* dq_acc, T* dk, T* dv, long long sq,          \
      long long sk, long long heads, long long qb, long long qh, long long qs, long long kb, \
      long long kh, long long ks, long long vb, long long vh, long long vs, long long gb,    \
      long long gh, long long gs, long long mb, long long mh, long long ms, long long dkb,  \
      long long dkh, long long dks, long long dvb, long long dvh, long long dvs, float scale, \
      int causal) {                                                                          \
    hopper::flash_backward<T, D>(q, k, v, d_o, lse, delta, mask, dq_acc, dk, dv, sq, sk,    \
                                 heads, qb, qh, qs, kb, kh, ks, vb, vh, vs, gb, gh, gs, mb, \
                                 mh, ms, dkb, dkh, dks, dvb, dvh, dvs, scale, causal);       \
  }

FLASH_HOPPER_BACKWARD(f16, f16, 64)
FLASH_HOPPER_BACKWARD(f16, f16, 128)
FLASH_HOPPER_BACKWARD(bf16, bf16, 64)
FLASH_HOPPER_BACKWARD(bf16, bf16, 128)
