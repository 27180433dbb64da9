// python/xpuruntime/adapters/pytorch/kernels/norms.cu: fused layer norm and RMS norm,
// forward and backward, one block per row: the row is read once into registers (16-byte
// loads), reduced in fp32, normalised and written once.
//
// Each launch is one instantiation <T, VEC, ITERS>: a thread holds ITERS vectors of VEC
// elements; columns past n are zeros that never reach memory. The host picks VEC = 16 bytes
// when the row allows it (n % VEC == 0, aligned), else 1.

template <typename T, int VEC, int ITERS>
__device__ __forceinline__ void load_row(const T* row, int n, float (&v)[ITERS][VEC]) {
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    int col = (it * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x)) * VEC;
    if (col < n) {
      if (VEC * sizeof(T) == 16) {
        uint4 raw = *reinterpret_cast<const uint4*>(row + col);
        const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[it][j] = to_float(e[j]);
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
__device__ __forceinline__ void store_row(T* row, int n, const float (&v)[ITERS][VEC]) {
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    int col = (it * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x)) * VEC;
    if (col >= n) continue;
    if (VEC * sizeof(T) == 16) {
      uint4 raw;
      T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
      for (int j = 0; j < VEC; ++j) e[j] = from_float<T>(v[it][j]);
      *reinterpret_cast<uint4*>(row + col) = raw;
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j) row[col + j] = from_float<T>(v[it][j]);
    }
  }
}

__device__ __forceinline__ bool in_row(int it, int n, int VEC) {
  return (it * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x)) * VEC < n;
}

/// y = (x - mean) * rstd * w + b (RMS: x * rstd * w, no mean); saves mean and rstd (fp32)
/// per row for the backward pass. w and b may be null.
template <typename T, int VEC, int ITERS, bool RMS>
__device__ void norm_forward(T* y, float* mean_out, float* rstd_out, const T* x, const T* w,
                             const T* b, long long rows, int n, float eps) {
  __shared__ float shared[32];
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    float v[ITERS][VEC];
    load_row<T, VEC, ITERS>(x + row * n, n, v);
    float mean = 0.f;
    if (!RMS) {
      float s = 0.f;
#pragma unroll
      for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int j = 0; j < VEC; ++j) s += v[it][j];
      mean = block_sum(s, shared) / n;
    }
    float sq = 0.f;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      if (!in_row(it, n, VEC)) continue;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        float d = v[it][j] - mean;
        sq += d * d;
      }
    }
    float rstd = rsqrtf(block_sum(sq, shared) / n + eps);
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int j = 0; j < VEC; ++j) v[it][j] = (v[it][j] - mean) * rstd;
    // Note: weight and bias are read here (from L1/L2, every block reads the same n) rather
    // than held in registers across rows: fewer registers, more rows in flight per SM.
    if (w) {
      float wv[ITERS][VEC];
      load_row<T, VEC, ITERS>(w, n, wv);
#pragma unroll
      for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[it][j] *= wv[it][j];
    }
    if (b) {
      float bv[ITERS][VEC];
      load_row<T, VEC, ITERS>(b, n, bv);
#pragma unroll
      for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[it][j] += bv[it][j];
    }
    store_row<T, VEC, ITERS>(y + row * n, n, v);
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
  }
}

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w (RMS: no mean(g));
/// each block also sums dy * xhat and dy over its rows into partial[block][n] (dw) and
/// partial_b[block][n] (db), which the host reduces over blocks.
template <typename T, int VEC, int ITERS, bool RMS>
__device__ void norm_backward(T* dx, float* partial_w, float* partial_b, const T* dy,
                              const T* x, const T* w, const float* mean_in,
                              const float* rstd_in, long long rows, int n) {
  __shared__ float shared[32];
  float acc_w[ITERS][VEC], acc_b[ITERS][VEC];
#pragma unroll
  for (int it = 0; it < ITERS; ++it)
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc_w[it][j] = acc_b[it][j] = 0.f;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    float xv[ITERS][VEC], g[ITERS][VEC], wv[ITERS][VEC];
    load_row<T, VEC, ITERS>(x + row * n, n, xv);
    load_row<T, VEC, ITERS>(dy + row * n, n, g);
    if (w) load_row<T, VEC, ITERS>(w, n, wv);  // from L1/L2, as in the forward pass
    float mean = RMS ? 0.f : mean_in[row], rstd = rstd_in[row];
    float sum_g = 0.f, sum_gx = 0.f;
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        float xhat = (xv[it][j] - mean) * rstd;  // zero past n: xv and g are zeros there
        acc_w[it][j] += g[it][j] * xhat;
        acc_b[it][j] += g[it][j];
        if (w) g[it][j] *= wv[it][j];
        xv[it][j] = in_row(it, n, VEC) ? xhat : 0.f;
        sum_g += g[it][j];
        sum_gx += g[it][j] * xv[it][j];
      }
    float mean_gx = block_sum(sum_gx, shared) / n;
    float mean_g = RMS ? 0.f : block_sum(sum_g, shared) / n;
#pragma unroll
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
      for (int j = 0; j < VEC; ++j) g[it][j] = rstd * (g[it][j] - mean_g - xv[it][j] * mean_gx);
    store_row<T, VEC, ITERS>(dx + row * n, n, g);
  }
  const long long own = blockIdx.x * static_cast<long long>(n);  // this block's partial row
  if (partial_w) store_row<float, VEC, ITERS>(partial_w + own, n, acc_w);
  if (partial_b) store_row<float, VEC, ITERS>(partial_b + own, n, acc_b);
}

// The entry points, one per (norm, dtype, VEC, ITERS): NORM_ENTRIES(T, name, VEC, ITERS).
// Note: at most 512 threads a block, so that the compiler keeps a thread within 128
// registers (1024 threads of the backward pass asked for more than a multiprocessor has:
// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, seen on the H200).
#define NORM_BOUNDS __launch_bounds__(512)
#define NORM_ENTRIES(T, TN, VEC, ITERS)                                                     \
  extern "C" __global__ void NORM_BOUNDS layer_norm_fwd_##TN##_##VEC##_##ITERS(             \
      T* y, float* mean, float* rstd, const T* x, const T* w, const T* b, long long rows,   \
      int n, float eps) {                                                                   \
    norm_forward<T, VEC, ITERS, false>(y, mean, rstd, x, w, b, rows, n, eps);              \
  }                                                                                         \
  extern "C" __global__ void NORM_BOUNDS rms_norm_fwd_##TN##_##VEC##_##ITERS(               \
      T* y, float* mean, float* rstd, const T* x, const T* w, const T* b, long long rows,   \
      int n, float eps) {                                                                   \
    norm_forward<T, VEC, ITERS, true>(y, nullptr, rstd, x, w, nullptr, rows, n, eps);      \
  }                                                                                         \
  extern "C" __global__ void NORM_BOUNDS layer_norm_bwd_##TN##_##VEC##_##ITERS(             \
      T* dx, float* pw, float* pb, const T* dy, const T* x, const T* w, const float* mean,  \
      const float* rstd, long long rows, int n) {                                           \
    norm_backward<T, VEC, ITERS, false>(dx, pw, pb, dy, x, w, mean, rstd, rows, n);        \
  }                                                                                         \
  extern "C" __global__ void NORM_BOUNDS rms_norm_bwd_##TN##_##VEC##_##ITERS(               \
      T* dx, float* pw, float* pb, const T* dy, const T* x, const T* w, const float* mean,  \
      const float* rstd, long long rows, int n) {                                           \
    norm_backward<T, VEC, ITERS, true>(dx, pw, nullptr, dy, x, w, nullptr, rstd, rows, n); \
  }
