// python/xpuruntime/adapters/pytorch/kernels/wgmma.cuh: what the Hopper (sm_90a) flash
// kernels share: warp-specialized blocks (one loading warpgroup, two computing), tiles in
// wgmma's swizzled shared-memory layout, matrix descriptors, mbarriers and the wgmma
// instructions themselves (flash_hopper.cu, flash_hopper_backward.cu).
#pragma once
//
// Note [wgmma tiles]
// - Tiles sit in shared memory in the 128-byte swizzled layout wgmma reads: 64-column panels
//   of 128-byte rows, the 16-byte chunk c of row r stored at chunk c ^ (r % 8), each panel
//   1024-byte aligned. The same layout serves K (K-major B: rows are keys, the contraction
//   runs along them) and V (MN-major B: rows are keys, the output columns run along them).
// - Descriptors (PTX ISA, "matrix descriptor"): start address >> 4 (bits 0-13), leading byte
//   offset >> 4 (16-29), stride byte offset >> 4 (32-45), swizzle mode 1 = 128 bytes (62-63).
//   K-major: stride = 1024 (between 8-row groups), leading unused (16). MN-major: stride =
//   1024 (between 8-key groups), leading = the panel size (between 64-column panels).

namespace hopper {

constexpr int THREADS = 384, LOADERS = 128;  // a loading warpgroup, two computing ones

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Byte offset of 16-byte chunk `chunk` of row r in a tile of `rows` rows (Note [wgmma
/// tiles]).
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


}  // namespace hopper
