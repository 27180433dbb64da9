// python/xpuruntime/adapters/pytorch/kernels/flash_v2.cu: FlashAttention-2-style attention,
// forward and backward, on the tensor cores (mma.sync m16n8k16, fp32 accumulation).
//
// Note [flash_v2 layout]
// - q, k, v, o are [batch, heads, seq, D] with any strides whose last one is 1 (rows 16-byte
//   aligned); the host passes (batch, head, row) strides. mask (optional, additive, in the
//   inputs' dtype) is [.., .., sq, sk] with broadcast strides of 0.
// - Forward: a block of 4 or 8 warps owns 16 query rows per warp and walks the key/value
//   blocks of 64 rows (cp.async, K of the next block in flight while P V runs); scores stay
//   in registers (online softmax in base 2), so no S x S matrix ever reaches memory. It saves
//   lse2 = max + log2(sum), the log-sum-exp in base 2, per row (+inf for a row that sees no
//   key) for the backward pass.
// - Backward: a block owns 64 key rows (16 per warp, dK and dV in registers) and walks the
//   query blocks: S^T = K Q^T, P^T = exp2(S^T - lse2), dV += P^T dO, dP^T = V dO^T,
//   dS^T = P^T (dP^T - delta) scale, dK += dS^T Q, and dQ += dS K through shared memory into
//   an fp32 buffer with atomics (delta = rowsum(dO * O), from flash_delta). dK and dV are
//   written in their own (batch, head, row) strides: the inputs' layout (Note [Attention
//   outputs' layout]).
// - Causal is top-left aligned (key j is seen by query i when j <= i), as in torch's SDPA.
// - Rows are padded by 8 elements in shared memory so that ldmatrix's 8 rows fall into
//   different banks.

template <typename T, int D> struct Tile {
  static constexpr int ROWS = 64, LD = D + 8, ELEMS = ROWS * LD;
};

/// rows [row0, row0 + ROWS) of a [rows_total, D] matrix (row stride `stride`) into shared
/// memory, zeros past rows_total; THREADS threads, 16 bytes each per step.
template <typename T, int D, int ROWS = 64, int THREADS = 128>
__device__ __forceinline__ void load_tile(T* s, const T* g, long long stride, long long row0,
                                          long long rows_total) {
  constexpr int CHUNKS = D / 8;
  for (int c = threadIdx.x; c < ROWS * CHUNKS; c += THREADS) {
    int r = c / CHUNKS, col = (c % CHUNKS) * 8;
    bool valid = row0 + r < rows_total;
    const T* src = valid ? g + (row0 + r) * stride + col : g;
    cp_async16(s + r * Tile<T, D>::LD + col, src, valid);
  }
}

// Fragment addresses (lane l) for ldmatrix.x4, by the operand's role:
// A row-major at (r0, c0): a0..a3 = the four 8x8 quarters.
__device__ __forceinline__ int a_row(int l) { return l & 15; }
__device__ __forceinline__ int a_col(int l) { return (l >> 4) * 8; }
// B stored [n][k] (non-transposed ldmatrix) or A stored [k][i] (transposed): the tiles
// (n0, k0), (n0, k0+8), (n0+8, k0), (n0+8, k0+8).
__device__ __forceinline__ int nk_row(int l) { return (l & 7) + (l >> 4) * 8; }
__device__ __forceinline__ int nk_col(int l) { return ((l >> 3) & 1) * 8; }
// B stored [k][n] (transposed ldmatrix): the tiles (k0, n0), (k0+8, n0), (k0, n0+8), ...
__device__ __forceinline__ int kn_row(int l) { return l & 15; }
__device__ __forceinline__ int kn_col(int l) { return (l >> 4) * 8; }

// WARPS warps own 16 query rows each: 8 warps share each K/V tile between 128 rows, halving
// the shared-memory traffic per product against 4.
template <typename T, int D, int WARPS>
__device__ void flash_forward(const T* __restrict__ q, const T* __restrict__ k,
                              const T* __restrict__ v, T* __restrict__ o, float* __restrict__ lse,
                              const T* __restrict__ mask, long long sq, long long sk,
                              long long heads, long long qb, long long qh, long long qs,
                              long long kb, long long kh, long long ks, long long vb,
                              long long vh, long long vs, long long ob, long long oh,
                              long long os, long long mb, long long mh, long long ms,
                              float scale, int causal) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  constexpr int LD = Tile<T, D>::LD, QROWS = 16 * WARPS, THREADS = 32 * WARPS;
  T* sK = sQ + QROWS * LD;
  T* sV = sK + Tile<T, D>::ELEMS;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const long long bh = blockIdx.y, b = bh / heads, h = bh % heads;
  const long long q0 = static_cast<long long>(blockIdx.x) * QROWS;
  q += b * qb + h * qh;
  k += b * kb + h * kh;
  v += b * vb + h * vh;
  o += b * ob + h * oh;
  if (mask) mask += b * mb + h * mh;
  const float scale2 = scale * LOG2E;

  long long kv_blocks = (sk + 63) / 64;
  if (causal) {
    long long last_q = min(sq, q0 + QROWS) - 1;
    kv_blocks = min(kv_blocks, last_q / 64 + 1);
  }
  load_tile<T, D, QROWS, THREADS>(sQ, q, qs, q0, sq);
  load_tile<T, D, 64, THREADS>(sK, k, ks, 0, sk);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  unsigned qf[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    ldsm_x4(qf[kk], sQ + (warp * 16 + a_row(lane)) * LD + kk * 16 + a_col(lane));

  float acc[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  const long long row[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};

  for (long long j = 0; j < kv_blocks; ++j) {
    const long long k0 = j * 64;
    load_tile<T, D, 64, THREADS>(sV, v, vs, k0, sk);
    cp_async_commit();
    cp_async_wait<1>();  // K of this block has landed
    __syncthreads();
    float s[8][4];
#pragma unroll
    for (int i = 0; i < 8; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        unsigned bf[4];
        ldsm_x4(bf, sK + (np * 16 + nk_row(lane)) * LD + kk * 16 + nk_col(lane));
        mma16816<T>(s[2 * np], qf[kk], bf[0], bf[1]);
        mma16816<T>(s[2 * np + 1], qf[kk], bf[2], bf[3]);
      }
    __syncthreads();  // every warp is done with sK: the next K may land there
    if (j + 1 < kv_blocks) load_tile<T, D, 64, THREADS>(sK, k, ks, k0 + 64, sk);
    cp_async_commit();

    // Scores in base 2, masked; the running max and sum per row (a row's 4 lanes agree).
    // Only blocks on an edge (the sequences' ends, the causal diagonal, a mask) need the
    // per-element checks.
    const bool edge = mask || k0 + 64 > sk || q0 + QROWS > sq || (causal && k0 + 63 > q0);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float top = m[r];
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float x = s[nt][2 * r + e] * scale2;
          if (edge) {
            long long col = k0 + nt * 8 + 2 * t + e;
            bool seen = col < sk && row[r] < sq && !(causal && col > row[r]);
            if (seen && mask) x += to_float(mask[row[r] * ms + col]) * LOG2E;
            x = seen ? x : -INFINITY;
          }
          s[nt][2 * r + e] = x;
          top = fmaxf(top, x);
        }
      top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 1));
      top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 2));
      const float base = top == -INFINITY ? 0.f : top;
      const float alpha = exp2f(m[r] - base);  // 0 when m was -inf
      m[r] = top;
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float p = exp2f(s[nt][2 * r + e] - base);
          s[nt][2 * r + e] = p;
          sum += p;
        }
      l[r] = l[r] * alpha + sum;
#pragma unroll
      for (int i = 0; i < D / 8; ++i) {
        acc[i][2 * r] *= alpha;
        acc[i][2 * r + 1] *= alpha;
      }
    }

    cp_async_wait<1>();  // V of this block has landed
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      unsigned pf[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]),
                        pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                        pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                        pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int np = 0; np < D / 16; ++np) {
        unsigned bf[4];
        ldsm_x4_trans(bf, sV + (kk * 16 + kn_row(lane)) * LD + np * 16 + kn_col(lane));
        mma16816<T>(acc[2 * np], pf, bf[0], bf[1]);
        mma16816<T>(acc[2 * np + 1], pf, bf[2], bf[3]);
      }
    }
    __syncthreads();  // every warp is done with sV
  }
  cp_async_wait<0>();

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = l[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (row[r] >= sq) continue;
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    T* out = o + row[r] * os;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt) {
      unsigned packed = pack2<T>(acc[nt][2 * r] * inv, acc[nt][2 * r + 1] * inv);
      *reinterpret_cast<unsigned*>(out + nt * 8 + 2 * t) = packed;
    }
    if (t == 0) lse[bh * sq + row[r]] = sum > 0.f ? m[r] + log2f(sum) : INFINITY;
  }
}

/// delta[bh, i] = sum_d dO[i, d] * O[i, d], one warp per row.
template <typename T, int D>
__device__ void flash_delta(float* delta, const T* o, const T* d_o, long long rows,
                            long long sq, long long heads, long long ob, long long oh,
                            long long os, long long db, long long dh, long long ds) {
  long long r = static_cast<long long>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (r >= rows) return;
  const int lane = threadIdx.x & 31;
  long long bh = r / sq, i = r % sq, b = bh / heads, h = bh % heads;
  const T* orow = o + b * ob + h * oh + i * os;
  const T* grow = d_o + b * db + h * dh + i * ds;
  float s = 0.f;
  for (int c = lane; c < D; c += 32) s += to_float(orow[c]) * to_float(grow[c]);
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) delta[r] = s;
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
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int LD = Tile<T, D>::LD, LDS = 64 + 8;
  T* sK = reinterpret_cast<T*>(smem_raw);
  T* sV = sK + Tile<T, D>::ELEMS;
  T* sQ = sV + Tile<T, D>::ELEMS;
  T* sG = sQ + Tile<T, D>::ELEMS;       // dO
  T* sS = sG + Tile<T, D>::ELEMS;       // dS^T, [key][query]
  float* sL = reinterpret_cast<float*>(sS + 64 * LDS);  // lse2 of the query block
  float* sD = sL + 64;                                    // delta of the query block
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const long long bh = blockIdx.y, b = bh / heads, h = bh % heads;
  const long long k0 = static_cast<long long>(blockIdx.x) * 64;
  q += b * qb + h * qh;
  k += b * kb + h * kh;
  v += b * vb + h * vh;
  d_o += b * gb + h * gh;
  if (mask) mask += b * mb + h * mh;
  lse += bh * sq;
  delta += bh * sq;
  dq_acc += bh * sq * D;
  const float scale2 = scale * LOG2E;

  load_tile<T, D>(sK, k, ks, k0, sk);
  load_tile<T, D>(sV, v, vs, k0, sk);
  cp_async_commit();

  float dk_acc[D / 8][4], dv_acc[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) dk_acc[i][e] = dv_acc[i][e] = 0.f;
  const long long key[2] = {k0 + warp * 16 + g, k0 + warp * 16 + g + 8};
  const long long first_q_block = causal ? k0 / 64 : 0;
  const long long q_blocks = (sq + 63) / 64;

  for (long long i = first_q_block; i < q_blocks; ++i) {
    const long long q0 = i * 64;
    load_tile<T, D>(sQ, q, qs, q0, sq);
    load_tile<T, D>(sG, d_o, gs, q0, sq);
    cp_async_commit();
    if (threadIdx.x < 64) {
      long long r = q0 + threadIdx.x;
      sL[threadIdx.x] = r < sq ? lse[r] : INFINITY;
      sD[threadIdx.x] = r < sq ? delta[r] : 0.f;
    }
    cp_async_wait<0>();
    __syncthreads();

    // S^T = K Q^T and dP^T = V dO^T: this warp's 16 keys x 64 queries.
    float st[8][4], dpt[8][4];
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) st[n][e] = dpt[n][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      unsigned kf[4], vf[4];
      ldsm_x4(kf, sK + (warp * 16 + a_row(lane)) * LD + kk * 16 + a_col(lane));
      ldsm_x4(vf, sV + (warp * 16 + a_row(lane)) * LD + kk * 16 + a_col(lane));
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        unsigned qf[4], gf[4];
        ldsm_x4(qf, sQ + (np * 16 + nk_row(lane)) * LD + kk * 16 + nk_col(lane));
        ldsm_x4(gf, sG + (np * 16 + nk_row(lane)) * LD + kk * 16 + nk_col(lane));
        mma16816<T>(st[2 * np], kf, qf[0], qf[1]);
        mma16816<T>(st[2 * np + 1], kf, qf[2], qf[3]);
        mma16816<T>(dpt[2 * np], vf, gf[0], gf[1]);
        mma16816<T>(dpt[2 * np + 1], vf, gf[2], gf[3]);
      }
    }
    // P^T and dS^T (scaled), elementwise in registers; checks only on edge blocks.
    const bool edge = mask || q0 + 64 > sq || k0 + 64 > sk || (causal && k0 + 63 > q0);
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int qi = n * 8 + 2 * t + (e & 1);
        float x = st[n][e] * scale2;
        bool seen = true;
        if (edge) {
          const long long qrow = q0 + qi, kcol = key[e >> 1];
          seen = qrow < sq && kcol < sk && !(causal && kcol > qrow);
          if (seen && mask) x += to_float(mask[qrow * ms + kcol]) * LOG2E;
        }
        float p = seen ? exp2f(x - sL[qi]) : 0.f;
        st[n][e] = p;
        dpt[n][e] = p * (dpt[n][e] - sD[qi]) * scale;
      }
    // dV += P^T dO and dK += dS^T Q: the A operands come straight from registers.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      unsigned pf[4] = {pack2<T>(st[2 * kk][0], st[2 * kk][1]),
                        pack2<T>(st[2 * kk][2], st[2 * kk][3]),
                        pack2<T>(st[2 * kk + 1][0], st[2 * kk + 1][1]),
                        pack2<T>(st[2 * kk + 1][2], st[2 * kk + 1][3])};
      unsigned sf[4] = {pack2<T>(dpt[2 * kk][0], dpt[2 * kk][1]),
                        pack2<T>(dpt[2 * kk][2], dpt[2 * kk][3]),
                        pack2<T>(dpt[2 * kk + 1][0], dpt[2 * kk + 1][1]),
                        pack2<T>(dpt[2 * kk + 1][2], dpt[2 * kk + 1][3])};
      // dS^T to shared memory for dQ (the same 16-bit values the products use).
      T* srow = sS + (warp * 16 + g) * LDS + kk * 16 + 2 * t;
      *reinterpret_cast<unsigned*>(srow) = sf[0];
      *reinterpret_cast<unsigned*>(srow + 8 * LDS) = sf[1];
      *reinterpret_cast<unsigned*>(srow + 8) = sf[2];
      *reinterpret_cast<unsigned*>(srow + 8 * LDS + 8) = sf[3];
#pragma unroll
      for (int np = 0; np < D / 16; ++np) {
        unsigned gf[4], qf[4];
        ldsm_x4_trans(gf, sG + (kk * 16 + kn_row(lane)) * LD + np * 16 + kn_col(lane));
        ldsm_x4_trans(qf, sQ + (kk * 16 + kn_row(lane)) * LD + np * 16 + kn_col(lane));
        mma16816<T>(dv_acc[2 * np], pf, gf[0], gf[1]);
        mma16816<T>(dv_acc[2 * np + 1], pf, gf[2], gf[3]);
        mma16816<T>(dk_acc[2 * np], sf, qf[0], qf[1]);
        mma16816<T>(dk_acc[2 * np + 1], sf, qf[2], qf[3]);
      }
    }
    __syncthreads();  // dS^T is complete in shared memory

    // dQ[16 queries of this warp] += dS K, 32 columns at a time, added into fp32 memory.
#pragma unroll
    for (int c = 0; c < D / 32; ++c) {
      float dq[4][4];
#pragma unroll
      for (int n = 0; n < 4; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        unsigned sf[4];
        ldsm_x4_trans(sf, sS + (kk * 16 + nk_row(lane)) * LDS + warp * 16 + nk_col(lane));
#pragma unroll
        for (int np = 0; np < 2; ++np) {
          unsigned kf[4];
          ldsm_x4_trans(kf, sK + (kk * 16 + kn_row(lane)) * LD + c * 32 + np * 16 +
                                kn_col(lane));
          mma16816<T>(dq[2 * np], sf, kf[0], kf[1]);
          mma16816<T>(dq[2 * np + 1], sf, kf[2], kf[3]);
        }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        long long qrow = q0 + warp * 16 + g + 8 * r;
        if (qrow >= sq) continue;
        float* dst = dq_acc + qrow * D + c * 32 + 2 * t;
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          atomicAdd(dst + n * 8, dq[n][2 * r]);
          atomicAdd(dst + n * 8 + 1, dq[n][2 * r + 1]);
        }
      }
    }
    __syncthreads();  // sQ, sG and sS are free for the next query block
  }
  cp_async_wait<0>();
  // dK and dV, in their (batch, head, key) strides.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (key[r] >= sk) continue;
    T* dkrow = dk + b * dkb + h * dkh + key[r] * dks;
    T* dvrow = dv + b * dvb + h * dvh + key[r] * dvs;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt) {
      *reinterpret_cast<unsigned*>(dkrow + nt * 8 + 2 * t) =
          pack2<T>(dk_acc[nt][2 * r], dk_acc[nt][2 * r + 1]);
      *reinterpret_cast<unsigned*>(dvrow + nt * 8 + 2 * t) =
          pack2<T>(dv_acc[nt][2 * r], dv_acc[nt][2 * r + 1]);
    }
  }
}

#define FLASH_FORWARD(T, TN, D, WARPS)                                                      \
  extern "C" __global__ void __launch_bounds__(32 * WARPS) flash_fwd_##TN##_##D##_w##WARPS(  \
      const T* q, const T* k, const T* v, T* o, float* lse, const T* mask, long long sq,     \
      long long sk, long long heads, long long qb, long long qh, long long qs, long long kb, \
      long long kh, long long ks, long long vb, long long vh, long long vs, long long ob,    \
      long long oh, long long os, long long mb, long long mh, long long ms, float scale,     \
      int causal) {                                                                          \
    flash_forward<T, D, WARPS>(q, k, v, o, lse, mask, sq, sk, heads, qb, qh, qs, kb, kh, ks, \
                               vb, vh, vs, ob, oh, os, mb, mh, ms, scale, causal);           \
  }

#define FLASH_ENTRIES(T, TN, D)                                                              \
  FLASH_FORWARD(T, TN, D, 4)                                                                 \
  FLASH_FORWARD(T, TN, D, 8)                                                                 \
  extern "C" __global__ void flash_delta_##TN##_##D(                                         \
      float* delta, const T* o, const T* d_o, long long rows, long long sq, long long heads, \
      long long ob, long long oh, long long os, long long db, long long dh, long long ds) {  \
    flash_delta<T, D>(delta, o, d_o, rows, sq, heads, ob, oh, os, db, dh, ds);               \
  }                                                                                          \
  extern "C" __global__ void __launch_bounds__(128) flash_bwd_##TN##_##D(                    \
      const T* q, const T* k, const T* v, const T* d_o, const float* lse,                    \
      const float* delta, const T* mask, float* dq_acc, T* dk, T* dv, long long sq,          \
      long long sk, long long heads, long long qb, long long qh, long long qs, long long kb, \
      long long kh, long long ks, long long vb, long long vh, long long vs, long long gb,    \
      long long gh, long long gs, long long mb, long long mh, long long ms, long long dkb,  \
      long long dkh, long long dks, long long dvb, long long dvh, long long dvs, float scale, \
      int causal) {                                                                          \
    flash_backward<T, D>(q, k, v, d_o, lse, delta, mask, dq_acc, dk, dv, sq, sk, heads, qb,  \
                         qh, qs, kb, kh, ks, vb, vh, vs, gb, gh, gs, mb, mh, ms, dkb, dkh,   \
                         dks, dvb, dvh, dvs, scale, causal);                                 \
  }

FLASH_ENTRIES(f16, f16, 64)
FLASH_ENTRIES(f16, f16, 128)
FLASH_ENTRIES(bf16, bf16, 64)
FLASH_ENTRIES(bf16, bf16, 128)
