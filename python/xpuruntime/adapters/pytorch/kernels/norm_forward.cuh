// python/xpuruntime/adapters/pytorch/kernels/norm_forward.cuh: the fused norms' forward
// (norms.cu has the entries): each row read once, into registers or through the ring.
#pragma once

/// y = (x - mean) * rstd * w + b (RMS: x * rstd * w, no mean); saves mean and rstd (fp32)
/// per row for the backward pass. w and b may be null. The row is held in registers.
template <typename T, typename W, int VEC, int ITERS, bool RMS>
__device__ void norm_forward_registers(T* y, float* mean_out, float* rstd_out, const T* x,
                                       const W* w, const W* b, long long rows, int n,
                                       int tpr, float eps) {
  __shared__ float shared[96];
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  // Every thread walks the same row groups, so the barriers in row_sum line up.
  for (long long first = static_cast<long long>(blockIdx.x) * per_block; first < rows;
       first += static_cast<long long>(gridDim.x) * per_block) {
    const long long row = first + slot;
    const bool live = row < rows;
    float v[ITERS][VEC];
    load_row<T, VEC, ITERS>(x + (live ? row : 0) * n, live ? n : 0, lane, tpr, v);
    // Note [Row moments]
    float c = 0.f, mean = 0.f, q = 0.f;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      if (!in_row(it, n, lane, tpr, VEC)) continue;
      c += VEC;
#pragma unroll
      for (int j = 0; j < VEC; ++j) mean += v[it][j];
    }
    if (RMS) mean = 0.f;
    else if (c > 0.f) mean /= c;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      if (!in_row(it, n, lane, tpr, VEC)) continue;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        float d = v[it][j] - mean;
        q += d * d;
      }
    }
    if (RMS) q = row_sum(q, shared, tpr);
    else row_moments(c, mean, q, shared, tpr);
    float rstd = rsqrtf(q / n + eps);
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
}

/// y[col, col + VEC) = (v - mean) * rstd * w + b (w and b may be null), stored as T.
template <typename T, typename W, int VEC>
__device__ __forceinline__ void normalise_store(T* y, const float (&v)[VEC], int col,
                                                float mean, float rstd, const W* w,
                                                const W* b) {
  float o[VEC], p[VEC];
#pragma unroll
  for (int j = 0; j < VEC; ++j) o[j] = (v[j] - mean) * rstd;
  if (w) {
    load_vec<W, VEC>(w + col, p);
#pragma unroll
    for (int j = 0; j < VEC; ++j) o[j] *= p[j];
  }
  if (b) {
    load_vec<W, VEC>(b + col, p);
#pragma unroll
    for (int j = 0; j < VEC; ++j) o[j] += p[j];
  }
  store_vec<T, VEC>(y + col, o);
}

/// The same through the ring (Note [Norm rows in flight]): the row stays in shared memory
/// and each pass (mean, variance, output) reads it back one vector at a time, so a thread
/// holds a vector, not the row, and more threads fit a multiprocessor.
template <typename T, typename W, int VEC, int ITERS, bool RMS, int STAGES>
__device__ void norm_forward_ring(T* y, float* mean_out, float* rstd_out, const T* x,
                                  const W* w, const W* b, long long rows, int n, int tpr,
                                  float eps) {
  __shared__ float shared[96];
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  const long long step = static_cast<long long>(gridDim.x) * per_block;
  const long long mine = static_cast<long long>(blockIdx.x) * per_block + slot;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    const long long r = mine + s * step;
    ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 1>(s, 0), x + (r < rows ? r : 0) * n, n,
                              r < rows, lane, tpr);
    cp_async_commit();
  }
  int k = 0;
  for (long long first = static_cast<long long>(blockIdx.x) * per_block; first < rows;
       first += step, ++k) {
    const long long row = first + slot;
    const bool live = row < rows;
    const long long ahead = row + (STAGES - 1) * step;
    ring_issue<T, VEC, ITERS>(ring_base<T, VEC, ITERS, 1>((k + STAGES - 1) % STAGES, 0),
                              x + (ahead < rows ? ahead : 0) * n, n, ahead < rows, lane, tpr);
    cp_async_commit();
    cp_async_wait<STAGES - 1>();
    const int base = ring_base<T, VEC, ITERS, 1>(k % STAGES, 0);
    float v[VEC];
    // Note [Row moments]
    float c = 0.f, mean = 0.f, q = 0.f;
    if (!RMS) {
#pragma unroll
      for (int it = 0; it < ITERS; ++it) {
        if (!in_row(it, n, lane, tpr, VEC)) continue;
        ring_vec<T, VEC>(base, it, v);
        c += VEC;
#pragma unroll
        for (int j = 0; j < VEC; ++j) mean += v[j];
      }
      if (c > 0.f) mean /= c;
    }
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      if (!in_row(it, n, lane, tpr, VEC)) continue;
      ring_vec<T, VEC>(base, it, v);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        float d = v[j] - mean;
        q += d * d;
      }
    }
    if (RMS) q = row_sum(q, shared, tpr);
    else row_moments(c, mean, q, shared, tpr);
    const float rstd = rsqrtf(q / n + eps);
    if (!live) continue;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      const int col = (it * tpr + lane) * VEC;
      if (col >= n) continue;
      ring_vec<T, VEC>(base, it, v);
      normalise_store<T, W, VEC>(y + row * n, v, col, mean, rstd, w, b);
    }
    if (lane == 0) {
      if (mean_out) mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
  }
  cp_async_wait<0>();
}

/// The same with the next row's 16-byte pieces loaded into registers while this row is
/// reduced and written (Note [Norm rows in flight]): one read of the row, no shared memory.
template <typename T, typename W, int VEC, int ITERS, bool RMS>
__device__ void norm_forward_prefetch(T* y, float* mean_out, float* rstd_out, const T* x,
                                      const W* w, const W* b, long long rows, int n, int tpr,
                                      float eps) {
  __shared__ float shared[96];
  constexpr int PER = 16 / sizeof(T), PIECES = VEC / PER;
  const int per_block = blockDim.x / tpr, slot = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  const long long step = static_cast<long long>(gridDim.x) * per_block;
  uint4 raw[ITERS][PIECES], next[ITERS][PIECES];
  auto fetch = [&](uint4 (&into)[ITERS][PIECES], long long r) {
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int piece = 0; piece < PIECES; ++piece) {
        const int col = (it * tpr + lane) * VEC + piece * PER;
        into[it][piece] = r < rows && col < n
                              ? __ldg(reinterpret_cast<const uint4*>(x + r * n + col))
                              : make_uint4(0, 0, 0, 0);
      }
  };
  fetch(raw, static_cast<long long>(blockIdx.x) * per_block + slot);
  for (long long first = static_cast<long long>(blockIdx.x) * per_block; first < rows;
       first += step) {
    const long long row = first + slot;
    const bool live = row < rows;
    fetch(next, row + step);
    float v[ITERS][VEC];
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int piece = 0; piece < PIECES; ++piece) {
        const T* e = reinterpret_cast<const T*>(&raw[it][piece]);
#pragma unroll
        for (int j = 0; j < PER; ++j) v[it][piece * PER + j] = to_float(e[j]);
      }
    // Note [Row moments]
    float c = 0.f, mean = 0.f, q = 0.f;
    if (!RMS) {
#pragma unroll
      for (int it = 0; it < ITERS; ++it) {
        if (!in_row(it, n, lane, tpr, VEC)) continue;
        c += VEC;
#pragma unroll
        for (int j = 0; j < VEC; ++j) mean += v[it][j];
      }
      if (c > 0.f) mean /= c;
    }
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      if (!in_row(it, n, lane, tpr, VEC)) continue;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float d = v[it][j] - mean;
        q += d * d;
      }
    }
    if (RMS) q = row_sum(q, shared, tpr);
    else row_moments(c, mean, q, shared, tpr);
    const float rstd = rsqrtf(q / n + eps);
    if (live) {
#pragma unroll
      for (int it = 0; it < ITERS; ++it) {
        const int col = (it * tpr + lane) * VEC;
        if (col >= n) continue;
        normalise_store<T, W, VEC>(y + row * n, v[it], col, mean, rstd, w, b);
      }
      if (lane == 0) {
        if (mean_out) mean_out[row] = mean;
        rstd_out[row] = rstd;
      }
    }
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int piece = 0; piece < PIECES; ++piece) raw[it][piece] = next[it][piece];
  }
}

template <typename T, typename W, int VEC, int ITERS, bool RMS, int STAGES>
__device__ void norm_forward(T* y, float* mean_out, float* rstd_out, const T* x, const W* w,
                             const W* b, long long rows, int n, int tpr, float eps) {
  if constexpr (STAGES == 1)  // one row ahead, in registers
    norm_forward_prefetch<T, W, VEC, ITERS, RMS>(y, mean_out, rstd_out, x, w, b, rows, n,
                                                 tpr, eps);
  else if constexpr (STAGES > 0)
    norm_forward_ring<T, W, VEC, ITERS, RMS, STAGES>(y, mean_out, rstd_out, x, w, b, rows, n,
                                                     tpr, eps);
  else
    norm_forward_registers<T, W, VEC, ITERS, RMS>(y, mean_out, rstd_out, x, w, b, rows, n,
                                                  tpr, eps);
}
