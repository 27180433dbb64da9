// python/xpuruntime/adapters/pytorch/kernels/norms.cu: fused layer norm and RMS norm,
// forward and backward: each row is read once (16-byte loads, into registers or through the
// ring of rows in flight), reduced in fp32, normalised and written once. The row machinery
// is norm_rows.cuh's.
//
// Each launch is one instantiation <T, W, VEC, ITERS>: a thread holds ITERS vectors of VEC
// elements; columns past n are zeros that never reach memory. The host picks VEC = 16 bytes
// when the row allows it (n % VEC == 0, aligned), else 1.
//
// The forward is norm_forward.cuh's, the backward norm_backward.cuh's; this file holds the
// entries.

// Note: at most 512 threads a block, so that the compiler keeps a thread within 128
// registers (1024 threads of the backward pass asked for more than a multiprocessor has:
// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, seen on the H200).
#define NORM_BOUNDS __launch_bounds__(512)
// Ring depths (Note [Norm rows in flight]): the host defines them from _kernels.NORM_STAGES.
#ifndef NORM_FORWARD_STAGES
#define NORM_FORWARD_STAGES 1
#endif
#ifndef NORM_BACKWARD_STAGES
#define NORM_BACKWARD_STAGES 2
#endif
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
