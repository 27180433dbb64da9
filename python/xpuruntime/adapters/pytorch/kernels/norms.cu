// python/xpuruntime/adapters/pytorch/kernels/norms.cu: fused layer norm and RMS norm,
// forward and backward: each row is read once into registers (16-byte loads), reduced in
// fp32, normalised and written once.
//
// Each launch is one instantiation <T, W, VEC, ITERS>: a thread holds ITERS vectors of VEC
// elements; columns past n are zeros that never reach memory. The host picks VEC = 16 bytes
// when the row allows it (n % VEC == 0, aligned), else 1.

// Note [Rows of a norm block]: a row is spread over `tpr` threads (a multiple of 32, a
// run-time argument), and a block of blockDim.x threads holds blockDim.x / tpr rows at once.
// Short rows (tpr = 32: a warp each, reduced by shuffles alone) would otherwise leave a
// block of one warp per multiprocessor slot, far from enough loads in flight (the backward
// pass of 2048 x 256 bf16 rows ran 7.5 us with 4 warps per multiprocessor). The weights
// (and bias) may be float32 under bf16/fp16 rows (W = float, autocast's fp32 parameters):
// no cast before the call, and their gradients come out in their own dtype.

/// ITERS vectors of VEC elements of a row of n, from column (it * tpr + lane) * VEC; zeros
/// past n. Vectors of 16 bytes or a multiple of 16 load as 16-byte pieces.
template <typename T, int VEC, int ITERS>
__device__ __forceinline__ void load_row(const T* row, int n, int lane, int tpr,
                                         float (&v)[ITERS][VEC]) {
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    int col = (it * tpr + lane) * VEC;
    if (col < n) {
      if ((VEC * sizeof(T)) % 16 == 0) {
        constexpr int PER = 16 / sizeof(T);
#pragma unroll
        for (int piece = 0; piece < VEC / PER; ++piece) {
          uint4 raw = *reinterpret_cast<const uint4*>(row + col + piece * PER);
          const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
          for (int j = 0; j < PER; ++j) v[it][piece * PER + j] = to_float(e[j]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[it][j] = to_float(row[col + j]);
      }
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
    if (col >= n) continue;
    if ((VEC * sizeof(T)) % 16 == 0) {
      constexpr int PER = 16 / sizeof(T);
#pragma unroll
      for (int piece = 0; piece < VEC / PER; ++piece) {
        uint4 raw;
        T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
        for (int j = 0; j < PER; ++j) e[j] = from_float<T>(v[it][piece * PER + j]);
        *reinterpret_cast<uint4*>(row + col + piece * PER) = raw;
      }
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j) row[col + j] = from_float<T>(v[it][j]);
    }
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

// Note [Norm rows in flight]: one row's loads, then its reductions and its stores, leave a
// multiprocessor's memory pipe idle between rows (bf16 8192-wide layer norm: 2.0-2.35 TB/s
// on the H200, about half its bandwidth). Where rows load as 16-byte pieces, the blocks are
// persistent and each thread copies its own pieces of the next STAGES - 1 rows into shared
// memory (cp.async) while it works on the current one. A thread reads back only what it
// copied, so its own cp.async.wait_group orders the ring: no barrier.
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

template <typename T, int VEC, int ITERS>
__device__ __forceinline__ void ring_read(int base, float (&v)[ITERS][VEC]) {
  constexpr int PER = 16 / sizeof(T), PIECES = VEC / PER;
#pragma unroll
  for (int it = 0; it < ITERS; ++it)
#pragma unroll
    for (int piece = 0; piece < PIECES; ++piece) {
      uint4 raw = norm_smem[(base + it * PIECES + piece) * blockDim.x + threadIdx.x];
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int j = 0; j < PER; ++j) v[it][piece * PER + j] = to_float(e[j]);
    }
}

/// The ring's first piece of stage s and source src (of SOURCES rows a stage).
template <typename T, int VEC, int ITERS, int SOURCES>
__device__ __forceinline__ int ring_base(int s, int src) {
  constexpr int PIECES = VEC * sizeof(T) / 16;
  return (s * SOURCES + src) * ITERS * PIECES;
}

/// y = (x - mean) * rstd * w + b (RMS: x * rstd * w, no mean); saves mean and rstd (fp32)
/// per row for the backward pass. w and b may be null. STAGES > 0: rows through the ring
/// (Note [Norm rows in flight]).
template <typename T, typename W, int VEC, int ITERS, bool RMS, int STAGES>
__device__ void norm_forward(T* y, float* mean_out, float* rstd_out, const T* x, const W* w,
                             const W* b, long long rows, int n, int tpr, float eps) {
  __shared__ float shared[32];
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  const long long step = static_cast<long long>(gridDim.x) * per_block;
  const long long mine = static_cast<long long>(blockIdx.x) * per_block + slot;
  if constexpr (STAGES > 0) {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      const long long r = mine + s * step;
      ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 1>(s, 0), x + (r < rows ? r : 0) * n,
                                n, r < rows, lane, tpr);
      cp_async_commit();
    }
  }
  // Every thread walks the same row groups, so the barriers in row_sum line up.
  int k = 0;
  for (long long first = static_cast<long long>(blockIdx.x) * per_block; first < rows;
       first += step, ++k) {
    const long long row = first + slot;
    const bool live = row < rows;
    float v[ITERS][VEC];
    if constexpr (STAGES > 0) {
      const long long ahead = row + (STAGES - 1) * step;
      ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 1>((k + STAGES - 1) % STAGES, 0),
                                x + (ahead < rows ? ahead : 0) * n, n, ahead < rows, lane, tpr);
      cp_async_commit();
      cp_async_wait<STAGES - 1>();
      ring_read<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 1>(k % STAGES, 0), v);
    } else {
      load_row<T, VEC, ITERS>(x + (live ? row : 0) * n, live ? n : 0, lane, tpr, v);
    }
    float mean = 0.f;
    if (!RMS) {
      float s = 0.f;
#pragma unroll
      for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int j = 0; j < VEC; ++j) s += v[it][j];
      mean = row_sum(s, shared, tpr) / n;
    }
    float sq = 0.f;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      if (!in_row(it, n, lane, tpr, VEC)) continue;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        float d = v[it][j] - mean;
        sq += d * d;
      }
    }
    float rstd = rsqrtf(row_sum(sq, shared, tpr) / n + eps);
    if (!live) continue;
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int j = 0; j < VEC; ++j) v[it][j] = (v[it][j] - mean) * rstd;
    // Note: weight and bias are read here (from L1/L2, every block reads the same n) rather
    // than held in registers across rows: fewer registers, more rows in flight per SM.
    if (w) {
      float wv[ITERS][VEC];
      load_row<W, VEC, ITERS>(w, n, lane, tpr, wv);
#pragma unroll
      for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[it][j] *= wv[it][j];
    }
    if (b) {
      float bv[ITERS][VEC];
      load_row<W, VEC, ITERS>(b, n, lane, tpr, bv);
#pragma unroll
      for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[it][j] += bv[it][j];
    }
    store_row<T, VEC, ITERS>(y + row * n, n, lane, tpr, v);
    if (lane == 0) {
      if (mean_out) mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
  }
  if constexpr (STAGES > 0) cp_async_wait<0>();
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

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w (RMS: no mean(g));
/// each block also sums dy * xhat and dy over its rows into partial_w[block][n] (dw) and
/// partial_b[block][n] (db), which norm_grad_sum adds up over blocks. STAGES > 0: x and dy
/// through the ring (Note [Norm rows in flight]).
template <typename T, typename W, int VEC, int ITERS, bool RMS, int STAGES>
__device__ void norm_backward(T* dx, float* partial_w, float* partial_b, const T* dy,
                              const T* x, const W* w, const float* mean_in,
                              const float* rstd_in, long long rows, int n, int tpr) {
  __shared__ float shared[32];
  // blockDim.x * VEC floats for block_partial, after the ring's last use
  float* stage = reinterpret_cast<float*>(norm_smem);
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  const long long step = static_cast<long long>(gridDim.x) * per_block;
  const long long mine = static_cast<long long>(blockIdx.x) * per_block + slot;
  if constexpr (STAGES > 0) {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      const long long r = mine + s * step, at = (r < rows ? r : 0) * n;
      ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(s, 0), x + at, n, r < rows, lane,
                                tpr);
      ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(s, 1), dy + at, n, r < rows, lane,
                                tpr);
      cp_async_commit();
    }
  }
  float acc_w[ITERS][VEC], acc_b[ITERS][VEC];
#pragma unroll
  for (int it = 0; it < ITERS; ++it)
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc_w[it][j] = acc_b[it][j] = 0.f;
  int k = 0;
  for (long long first = static_cast<long long>(blockIdx.x) * per_block; first < rows;
       first += step, ++k) {
    const long long row = first + slot;
    const bool live = row < rows;
    float xv[ITERS][VEC], g[ITERS][VEC], wv[ITERS][VEC];
    if constexpr (STAGES > 0) {
      const long long ahead = row + (STAGES - 1) * step;
      const long long at = (ahead < rows ? ahead : 0) * n;
      const int s = (k + STAGES - 1) % STAGES;
      ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(s, 0), x + at, n, ahead < rows,
                                lane, tpr);
      ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(s, 1), dy + at, n, ahead < rows,
                                lane, tpr);
      cp_async_commit();
      cp_async_wait<STAGES - 1>();
      ring_read<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(k % STAGES, 0), xv);
      ring_read<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(k % STAGES, 1), g);
    } else {
      const int m = live ? n : 0;  // a slot past the last row reads and adds zeros
      load_row<T, VEC, ITERS>(x + (live ? row : 0) * n, m, lane, tpr, xv);
      load_row<T, VEC, ITERS>(dy + (live ? row : 0) * n, m, lane, tpr, g);
    }
    if (w) load_row<W, VEC, ITERS>(w, n, lane, tpr, wv);  // from L1/L2, as in the forward
    float mean = RMS || !live ? 0.f : mean_in[row], rstd = live ? rstd_in[row] : 0.f;
    float sum_g = 0.f, sum_gx = 0.f;
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        float xhat = (xv[it][j] - mean) * rstd;  // zero past n: xv and g are zeros there
        acc_w[it][j] += g[it][j] * xhat;
        acc_b[it][j] += g[it][j];
        if (w) g[it][j] *= wv[it][j];
        xv[it][j] = in_row(it, n, lane, tpr, VEC) ? xhat : 0.f;
        sum_g += g[it][j];
        sum_gx += g[it][j] * xv[it][j];
      }
    float mean_gx = row_sum(sum_gx, shared, tpr) / n;
    float mean_g = RMS ? 0.f : row_sum(sum_g, shared, tpr) / n;
    if (!live) continue;
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int j = 0; j < VEC; ++j) g[it][j] = rstd * (g[it][j] - mean_g - xv[it][j] * mean_gx);
    store_row<T, VEC, ITERS>(dx + row * n, n, lane, tpr, g);
  }
  if constexpr (STAGES > 0) cp_async_wait<0>();
  const long long own = blockIdx.x * static_cast<long long>(n);  // this block's partial row
  if (partial_w) block_partial<VEC, ITERS>(partial_w + own, n, lane, tpr, acc_w, stage);
  if (partial_b) block_partial<VEC, ITERS>(partial_b + own, n, lane, tpr, acc_b, stage);
}

/// The column sums of g's rows (a linear layer's bias gradient) into one partial row per
/// block, as norm_backward sums dy for db; norm_grad_sum adds the partial rows up.
template <typename T, int VEC, int ITERS>
__device__ void column_partials(float* partial, const T* g, long long rows, int n, int tpr) {
  float* stage = reinterpret_cast<float*>(norm_smem);  // blockDim.x * VEC floats
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  float acc[ITERS][VEC], v[ITERS][VEC];
#pragma unroll
  for (int it = 0; it < ITERS; ++it)
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc[it][j] = 0.f;
  for (long long row = static_cast<long long>(blockIdx.x) * per_block + slot; row < rows;
       row += static_cast<long long>(gridDim.x) * per_block) {
    load_row<T, VEC, ITERS>(g + row * n, n, lane, tpr, v);
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int j = 0; j < VEC; ++j) acc[it][j] += v[it][j];
  }
  block_partial<VEC, ITERS>(partial + blockIdx.x * static_cast<long long>(n), n, lane, tpr,
                            acc, stage);
}

/// dw[c] = sum over parts of partial_w[part][c] (and db alike), in the weights' dtype: a
/// block of 32 columns x LANES lanes of parts, each lane's loads issued four at a time, the
/// lanes' sums met in shared memory. The order of the additions is fixed, so the gradients
/// are the same from run to run.
template <typename W>
__device__ void norm_grad_sum(W* dw, W* db, const float* partial_w, const float* partial_b,
                              int parts, int n) {
  constexpr int LANES = 16;
  __shared__ float sw[LANES][33], sb[LANES][33];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const int col = blockIdx.x * 32 + tx;
  float a = 0.f, c = 0.f;
  if (col < n) {
    int p = ty;
    for (; p + 3 * LANES < parts; p += 4 * LANES) {
      float va[4] = {0.f, 0.f, 0.f, 0.f}, vb[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const long long at = static_cast<long long>(p + u * LANES) * n + col;
        if (partial_w) va[u] = partial_w[at];
        if (partial_b) vb[u] = partial_b[at];
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        a += va[u];
        c += vb[u];
      }
    }
    for (; p < parts; p += LANES) {
      if (partial_w) a += partial_w[static_cast<long long>(p) * n + col];
      if (partial_b) c += partial_b[static_cast<long long>(p) * n + col];
    }
  }
  sw[ty][tx] = a;
  sb[ty][tx] = c;
  __syncthreads();
  if (ty == 0 && col < n) {
    for (int r = 1; r < LANES; ++r) {
      a += sw[r][tx];
      c += sb[r][tx];
    }
    if (dw) dw[col] = from_float<W>(a);
    if (db) db[col] = from_float<W>(c);
  }
}

// The entry points, one per (norm, dtype, weights' dtype, VEC, ITERS):
// NORM_ENTRIES(T, TN, W, WN, VEC, ITERS), with column_partials and norm_grad_sum_WN.
// Note: at most 512 threads a block, so that the compiler keeps a thread within 128
// registers (1024 threads of the backward pass asked for more than a multiprocessor has:
// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, seen on the H200).
#define NORM_BOUNDS __launch_bounds__(512)
// Ring depths (Note [Norm rows in flight]); the host's _kernels.NORM_STAGES matches them.
#define NORM_FORWARD_STAGES 3
#define NORM_BACKWARD_STAGES 2
template <typename T, int VEC, int DEPTH>
__device__ constexpr int ring_stages() {
  return (VEC * sizeof(T)) % 16 == 0 ? DEPTH : 0;
}
#define NORM_ENTRIES(T, TN, W, WN, VEC, ITERS)                                                \
  extern "C" __global__ void NORM_BOUNDS layer_norm_fwd_##TN##_##WN##_##VEC##_##ITERS(        \
      T* y, float* mean, float* rstd, const T* x, const W* w, const W* b, long long rows,     \
      int n, int tpr, float eps) {                                                            \
    norm_forward<T, W, VEC, ITERS, false, ring_stages<T, VEC, NORM_FORWARD_STAGES>()>(        \
        y, mean, rstd, x, w, b, rows, n, tpr, eps);                                           \
  }                                                                                           \
  extern "C" __global__ void NORM_BOUNDS rms_norm_fwd_##TN##_##WN##_##VEC##_##ITERS(          \
      T* y, float* mean, float* rstd, const T* x, const W* w, const W* b, long long rows,     \
      int n, int tpr, float eps) {                                                            \
    norm_forward<T, W, VEC, ITERS, true, ring_stages<T, VEC, NORM_FORWARD_STAGES>()>(         \
        y, nullptr, rstd, x, w, nullptr, rows, n, tpr, eps);                                  \
  }                                                                                           \
  extern "C" __global__ void NORM_BOUNDS layer_norm_bwd_##TN##_##WN##_##VEC##_##ITERS(        \
      T* dx, float* pw, float* pb, const T* dy, const T* x, const W* w, const float* mean,    \
      const float* rstd, long long rows, int n, int tpr) {                                    \
    norm_backward<T, W, VEC, ITERS, false, ring_stages<T, VEC, NORM_BACKWARD_STAGES>()>(      \
        dx, pw, pb, dy, x, w, mean, rstd, rows, n, tpr);                                      \
  }                                                                                           \
  extern "C" __global__ void NORM_BOUNDS rms_norm_bwd_##TN##_##WN##_##VEC##_##ITERS(          \
      T* dx, float* pw, float* pb, const T* dy, const T* x, const W* w, const float* mean,    \
      const float* rstd, long long rows, int n, int tpr) {                                    \
    norm_backward<T, W, VEC, ITERS, true, ring_stages<T, VEC, NORM_BACKWARD_STAGES>()>(       \
        dx, pw, nullptr, dy, x, w, nullptr, rstd, rows, n, tpr);                              \
  }                                                                                           \
  extern "C" __global__ void NORM_BOUNDS column_partials_##TN##_##WN##_##VEC##_##ITERS(      \
      float* partial, const T* g, long long rows, int n, int tpr) {                           \
    column_partials<T, VEC, ITERS>(partial, g, rows, n, tpr);                                 \
  }                                                                                           \
  extern "C" __global__ void __launch_bounds__(512) norm_grad_sum_##WN(                       \
      W* dw, W* db, const float* pw, const float* pb, int parts, int n) {                     \
    norm_grad_sum<W>(dw, db, pw, pb, parts, n);                                               \
  }
