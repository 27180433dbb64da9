// cpp/src/cuda/gemm.h: batched matrix products of row-major strided views on the device,
// through cuBLAS, cuBLASLt or the project's own kernel (integers).
#pragma once
#include <cstdint>

#include "cuda/driver.h"
#include "xpuruntime/tensor.h"

namespace xrt::cuda {

enum class GemmLibrary { Cublas, CublasLt, Native };

/// c = a @ b for every matrix of the batch: a (..., m, k) and b (..., k, n) have the batch
/// shape of the contiguous c (..., m, n), with any strides (0 where broadcast). Operands a
/// library cannot address (negative or overlapping strides, misaligned data) are made
/// contiguous first. conj_a conjugates a (vecdot; a must then be a row, m == 1). float32
/// and complex64 use TF32 only when the current KernelPolicy allows it. Runs on the current
/// stream of c's device.
void gemm(GemmLibrary library, const Tensor& a, const Tensor& b, Tensor& c, bool conj_a = false);

/// What gemm_linear fuses after the product (cuBLASLt's GELU epilogue is the tanh form).
enum class LinearEpilogue { None, Relu, GeluTanh };

/// out (m, n) = x (m, k) @ weight (n, k)^T (+ bias (n)), then the activation, in one
/// cublasLtMatmul with an epilogue (Note [Fused linear]). Floating dtypes, all alike; bias
/// contiguous and 16-byte aligned. Returns false, having run nothing, where cuBLASLt has no
/// fused algorithm (or an operand is not addressable): the caller composes it then.
bool gemm_linear(const Tensor& x, const Tensor& weight, const Tensor* bias,
                 LinearEpilogue activation, Tensor& out);

/// Whether a library computes this dtype (the floating dtypes for cuBLAS(Lt), the integers
/// for Native).
bool gemm_supports(GemmLibrary library, DType dtype);

/// One strided run of products c_i = a_i @ b_i, i < count, strides in elements; rows of
/// each c_i are contiguous (row stride n).
struct GemmRun {
  int64_t m, n, k, count;
  const char* a;
  int64_t a_row, a_col, a_batch;
  const char* b;
  int64_t b_row, b_col, b_batch;
  char* c;
  int64_t c_batch;
};

/// The integer kernel (cuda/matmul_native.cpp), compiled by NVRTC on first use.
void gemm_native(const GemmRun& run, DType dtype, int device, CUstream stream);

}  // namespace xrt::cuda
