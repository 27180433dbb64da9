// python/xpuruntime/adapters/pytorch/kernels/flash_hopper.cu: the flash_v2 forward on Hopper
// (sm_90a): warpgroup MMAs (wgmma) reading K and V straight from shared memory.
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
// - The copies are generic-proxy writes and wgmma reads through the async proxy: each
//   computing thread fences the proxies after the `full` wait.
// - Tiles sit in shared memory in the 128-byte swizzled layout wgmma reads: 64-column panels
//   of 128-byte rows, the 16-byte chunk c of row r stored at chunk c ^ (r % 8), each panel
//   1024-byte aligned. The same layout serves K (K-major B: rows are keys, the contraction
//   runs along them) and V (MN-major B: rows are keys, the output columns run along them).
// - Descriptors (PTX ISA, "matrix descriptor"): start address >> 4 (bits 0-13), leading byte
//   offset >> 4 (16-29), stride byte offset >> 4 (32-45), swizzle mode 1 = 128 bytes (62-63).
//   K-major: stride = 1024 (between 8-row groups), leading unused (16). MN-major: stride =
//   1024 (between 8-key groups), leading = the panel size (between 64-column panels).
// - Measured (H100, bf16, 4 x 16 heads x 4096 tokens, d = 128): 508-535 TFLOP/s against
//   torch's FLASH backend's 341; the same design without the loading warpgroup (all threads
//   copying, a block barrier a tile) ran at 385.

namespace hopper {

constexpr int BM = 128, BN = 128;
constexpr int THREADS = 384, LOADERS = 128;  // a loading warpgroup, two computing ones

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Byte offset of 16-byte chunk `chunk` of row r in a tile of `rows` rows (Note [flash_v2 on
/// Hopper]).
__device__ __forceinline__ unsigned swizzled(int r, int chunk, int rows) {
  return (chunk >> 3) * rows * 128 + r * 128 + (((chunk & 7) ^ (r & 7)) << 4);
}

/// Rows [row0, row0 + ROWS) of a [rows_total, D] matrix (row stride `stride`) into the
/// swizzled tile at shared address s, zeros past rows_total, by the loading warpgroup: each
/// thread keeps one 16-byte column and steps down the rows, so its swizzle never changes.
template <typename T, int D, int ROWS>
__device__ __forceinline__ void load_tile(unsigned s, const T* g, long long stride,
                                          long long row0, long long rows_total) {
  constexpr int CHUNKS = D / 8, STEP = LOADERS / CHUNKS;  // STEP rows a step, a multiple of 8
  const int chunk = threadIdx.x % CHUNKS, r0 = threadIdx.x / CHUNKS;
  const unsigned dst = s + swizzled(r0, chunk, ROWS);
  const long long left = rows_total - row0 - r0;  // rows this thread may still read
  const T* src = g + (row0 + r0) * stride + chunk * 8;
#pragma unroll
  for (int i = 0; i < ROWS / STEP; ++i) {
    const bool valid = i * STEP < left;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst + i * STEP * 128),
                 "l"(valid ? src : g), "r"(valid ? 16 : 0));
    src += STEP * stride;
  }
}

__device__ __forceinline__ unsigned long long descriptor(unsigned address, unsigned leading,
                                                         unsigned stride) {
  return static_cast<unsigned long long>((address & 0x3FFFF) >> 4) |
         static_cast<unsigned long long>(leading >> 4) << 16 |
         static_cast<unsigned long long>(stride >> 4) << 32 | 1ull << 62;
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait_all() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// mbarriers (PTX ISA, "mbarrier"): 8 bytes of shared memory each.
__device__ __forceinline__ void barrier_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void barrier_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/// The barrier completes its current phase once this thread's cp.asyncs so far have landed.
__device__ __forceinline__ void barrier_arrive_on_copies(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
/// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void barrier_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

/// Ties registers to this point: the MMAs write them asynchronously, so no use may move
/// above the wait (nor a write below the issue).
template <int N> __device__ __forceinline__ void pin(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (64 x N, fp32, this thread's N / 2) = a b (+ d when scale_d): a and b from shared memory,
// both K-major.
template <typename T, int N>
__device__ __forceinline__ void mma_ss(float (&d)[N / 2], unsigned long long a,
                                       unsigned long long b, int scale_d);
// d += a b: a (64 x 16) from registers in mma.sync's A-fragment layout, b (16 x N) from
// shared memory, MN-major.
template <typename T, int N>
__device__ __forceinline__ void mma_rs(float (&d)[N / 2], const unsigned (&a)[4],
                                       unsigned long long b);

// d (64 x N) = a b (+ d when scale_d), both from shared memory and both MN-major (a's rows
// and b's columns contiguous): the backward's dQ = dS K from dS^T and K as stored.
template <typename T, int N>
__device__ __forceinline__ void mma_ss_mn(float (&d)[N / 2], unsigned long long a,
                                          unsigned long long b, int scale_d);
// The operand lists, spelled out once (an asm statement cannot loop): the accumulators
// d[0, N / 2) as operands and their places %0, %1, ... in the instruction.
#define WG_ACC16 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), \
  "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), \
  "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define WG_ACC32 WG_ACC16, \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), \
  "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
  "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define WG_ACC64 WG_ACC32, \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), \
  "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), \
  "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), \
  "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), \
  "+f"(d[62]), "+f"(d[63])
#define WG_REG16 \
  "%0, %1, %2, %3, %4, %5, %6, %7" \
  ", %8, %9, %10, %11, %12, %13, %14, %15"
#define WG_REG32 WG_REG16 \
  ", %16, %17, %18, %19, %20, %21, %22, %23" \
  ", %24, %25, %26, %27, %28, %29, %30, %31"
#define WG_REG64 WG_REG32 \
  ", %32, %33, %34, %35, %36, %37, %38, %39" \
  ", %40, %41, %42, %43, %44, %45, %46, %47" \
  ", %48, %49, %50, %51, %52, %53, %54, %55" \
  ", %56, %57, %58, %59, %60, %61, %62, %63"

// One definition per form: NAME<TY, N> with the accumulators' lists ACC and REGS and the places
// of the operands after them (A, B, P: the scale-d flag). TRANSPOSES: tnsp-a and tnsp-b.
#define WGMMA_SS(NAME, TY, N, ACC, REGS, A, B, P, TRANSPOSES)                                \
  template <>                                                                              \
  __device__ __forceinline__ void NAME<TY, N>(float(&d)[N / 2], unsigned long long a,      \
                                              unsigned long long b, int scale_d) {        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n"                             \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TY "." #TY " {" REGS  \
                 "}, " A ", " B ", p, 1, 1, " TRANSPOSES ";\n}\n"                           \
                 : ACC                                                                     \
                 : "l"(a), "l"(b), "r"(scale_d));                                          \
  }
#define WGMMA_RS(TY, N, ACC, REGS, A, B, P)                                                  \
  template <>                                                                              \
  __device__ __forceinline__ void mma_rs<TY, N>(float(&d)[N / 2], const unsigned(&a)[4],   \
                                                unsigned long long b) {                    \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n"                             \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TY "." #TY " {" REGS  \
                 "}, {" A "}, " B ", p, 1, 1, 1;\n}\n"                                      \
                 : ACC                                                                     \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));            \
  }

WGMMA_SS(mma_ss, f16, 64, WG_ACC32, WG_REG32, "%32", "%33", "%34", "0, 0")
WGMMA_SS(mma_ss, bf16, 64, WG_ACC32, WG_REG32, "%32", "%33", "%34", "0, 0")
WGMMA_SS(mma_ss, f16, 128, WG_ACC64, WG_REG64, "%64", "%65", "%66", "0, 0")
WGMMA_SS(mma_ss, bf16, 128, WG_ACC64, WG_REG64, "%64", "%65", "%66", "0, 0")
WGMMA_RS(f16, 64, WG_ACC32, WG_REG32, "%32, %33, %34, %35", "%36", "%37")
WGMMA_RS(bf16, 64, WG_ACC32, WG_REG32, "%32, %33, %34, %35", "%36", "%37")
WGMMA_RS(f16, 128, WG_ACC64, WG_REG64, "%64, %65, %66, %67", "%68", "%69")
WGMMA_RS(bf16, 128, WG_ACC64, WG_REG64, "%64, %65, %66, %67", "%68", "%69")

WGMMA_SS(mma_ss_mn, f16, 32, WG_ACC16, WG_REG16, "%16", "%17", "%18", "1, 1")
WGMMA_SS(mma_ss_mn, bf16, 32, WG_ACC16, WG_REG16, "%16", "%17", "%18", "1, 1")
WGMMA_SS(mma_ss_mn, f16, 64, WG_ACC32, WG_REG32, "%32", "%33", "%34", "1, 1")
WGMMA_SS(mma_ss_mn, bf16, 64, WG_ACC32, WG_REG32, "%32", "%33", "%34", "1, 1")

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

namespace hopper {

// ---- backward ------------------------------------------------------------------------------
//
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
