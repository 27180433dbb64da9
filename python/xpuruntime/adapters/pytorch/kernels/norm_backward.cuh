// python/xpuruntime/adapters/pytorch/kernels/norm_backward.cuh: the fused norms' backward
// and the weights' gradients: per-block partial column sums, then their sum over blocks in a
// fixed order (norms.cu has the entries).
#pragma once

/// This block's rows of dw and db partial sums (Note [Rows of a norm block]), where wanted.
template <int VEC, int ITERS>
__device__ __forceinline__ void write_partials(float* partial_w, float* partial_b, int n,
                                               int lane, int tpr,
                                               const float (&acc_w)[ITERS][VEC],
                                               const float (&acc_b)[ITERS][VEC],
                                               float* stage) {
  const long long own = blockIdx.x * static_cast<long long>(n);
  if (partial_w) block_partial<VEC, ITERS>(partial_w + own, n, lane, tpr, acc_w, stage);
  if (partial_b) block_partial<VEC, ITERS>(partial_b + own, n, lane, tpr, acc_b, stage);
}

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w (RMS: no mean(g));
/// each block also sums dy * xhat and dy over its rows into partial_w[block][n] (dw) and
/// partial_b[block][n] (db), which norm_grad_sum adds up over blocks. The rows are held in
/// registers.
template <typename T, typename W, int VEC, int ITERS, bool RMS>
__device__ void norm_backward_registers(T* dx, float* partial_w, float* partial_b,
                                        const T* dy, const T* x, const W* w,
                                        const float* mean_in, const float* rstd_in,
                                        long long rows, int n, int tpr) {
  __shared__ float shared[96];
  float* stage = reinterpret_cast<float*>(norm_smem);  // blockDim.x * VEC floats
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  float acc_w[ITERS][VEC] = {}, acc_b[ITERS][VEC] = {};
  for (long long first = static_cast<long long>(blockIdx.x) * per_block; first < rows;
       first += static_cast<long long>(gridDim.x) * per_block) {
    const long long row = first + slot;
    const bool live = row < rows;
    const int m = live ? n : 0;  // a slot past the last row reads and adds zeros
    float xv[ITERS][VEC], g[ITERS][VEC], wv[ITERS][VEC];
    load_row<T, VEC, ITERS>(x + (live ? row : 0) * n, m, lane, tpr, xv);
    load_row<T, VEC, ITERS>(dy + (live ? row : 0) * n, m, lane, tpr, g);
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
    row_sum2(sum_gx, sum_g, shared, tpr);
    const float mean_gx = sum_gx / n, mean_g = RMS ? 0.f : sum_g / n;
    if (!live) continue;
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int j = 0; j < VEC; ++j) g[it][j] = rstd * (g[it][j] - mean_g - xv[it][j] * mean_gx);
    store_row<T, VEC, ITERS>(dx + row * n, n, lane, tpr, g);
  }
  write_partials<VEC, ITERS>(partial_w, partial_b, n, lane, tpr, acc_w, acc_b, stage);
}

/// The same through the ring (Note [Norm rows in flight]): x and dy stay in shared memory,
/// read back one vector at a time by the two passes (the sums, then dx).
template <typename T, typename W, int VEC, int ITERS, bool RMS, int STAGES>
__device__ void norm_backward_ring(T* dx, float* partial_w, float* partial_b, const T* dy,
                                   const T* x, const W* w, const float* mean_in,
                                   const float* rstd_in, long long rows, int n, int tpr) {
  __shared__ float shared[96];
  float* stage = reinterpret_cast<float*>(norm_smem);  // after the ring's last use
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  const long long step = static_cast<long long>(gridDim.x) * per_block;
  const long long mine = static_cast<long long>(blockIdx.x) * per_block + slot;
  float acc_w[ITERS][VEC] = {}, acc_b[ITERS][VEC] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    const long long r = mine + s * step, at = (r < rows ? r : 0) * n;
    ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(s, 0), x + at, n, r < rows, lane,
                              tpr);
    ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(s, 1), dy + at, n, r < rows, lane,
                              tpr);
    cp_async_commit();
  }
  int k = 0;
  for (long long first = static_cast<long long>(blockIdx.x) * per_block; first < rows;
       first += step, ++k) {
    const long long row = first + slot;
    const bool live = row < rows;
    {
      const long long ahead = row + (STAGES - 1) * step;
      const long long at = (ahead < rows ? ahead : 0) * n;
      const int s = (k + STAGES - 1) % STAGES;
      ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(s, 0), x + at, n, ahead < rows,
                                lane, tpr);
      ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 2>(s, 1), dy + at, n, ahead < rows,
                                lane, tpr);
      cp_async_commit();
      cp_async_wait<STAGES - 1>();
    }
    const int bx = ring_base<T, VEC, ITERS, 2>(k % STAGES, 0);
    const int bg = ring_base<T, VEC, ITERS, 2>(k % STAGES, 1);
    const float mean = RMS || !live ? 0.f : mean_in[row], rstd = live ? rstd_in[row] : 0.f;
    float sum_g = 0.f, sum_gx = 0.f;
    float xv[VEC], g[VEC], wv[VEC];
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      const int col = (it * tpr + lane) * VEC;
      if (col >= n) continue;  // the ring holds zeros there: nothing to add
      ring_vec<T, VEC>(bx, it, xv);
      ring_vec<T, VEC>(bg, it, g);
      if (w) load_vec<W, VEC>(w + col, wv);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float xhat = (xv[j] - mean) * rstd;
        acc_w[it][j] += g[j] * xhat;
        acc_b[it][j] += g[j];
        const float gw = w ? g[j] * wv[j] : g[j];
        sum_g += gw;
        sum_gx += gw * xhat;
      }
    }
    row_sum2(sum_gx, sum_g, shared, tpr);
    const float mean_gx = sum_gx / n, mean_g = RMS ? 0.f : sum_g / n;
    if (!live) continue;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      const int col = (it * tpr + lane) * VEC;
      if (col >= n) continue;
      ring_vec<T, VEC>(bx, it, xv);
      ring_vec<T, VEC>(bg, it, g);
      if (w) load_vec<W, VEC>(w + col, wv);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float xhat = (xv[j] - mean) * rstd;
        const float gw = w ? g[j] * wv[j] : g[j];
        g[j] = rstd * (gw - mean_g - xhat * mean_gx);
      }
      store_vec<T, VEC>(dx + row * n + col, g);
    }
  }
  cp_async_wait<0>();
  write_partials<VEC, ITERS>(partial_w, partial_b, n, lane, tpr, acc_w, acc_b, stage);
}

template <typename T, typename W, int VEC, int ITERS, bool RMS, int STAGES>
__device__ void norm_backward(T* dx, float* partial_w, float* partial_b, const T* dy,
                              const T* x, const W* w, const float* mean_in,
                              const float* rstd_in, long long rows, int n, int tpr) {
  if constexpr (STAGES > 0)
    norm_backward_ring<T, W, VEC, ITERS, RMS, STAGES>(dx, partial_w, partial_b, dy, x, w,
                                                      mean_in, rstd_in, rows, n, tpr);
  else
    norm_backward_registers<T, W, VEC, ITERS, RMS>(dx, partial_w, partial_b, dy, x, w,
                                                   mean_in, rstd_in, rows, n, tpr);
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
