// cpp/src/cuda/matmul_kernels.cpp: the CUDA kernels of matmul and vecdot (tensordot reaches
// matmul through the core), and their registration.
//
// Note [Which matmul kernel]: cuBLAS and cuBLASLt both compute every floating dtype, so a
// policy pin of either always works; "native" computes the integers (cuBLAS has no exact
// integer GEMM). Without a pin, FirstSupported takes cuBLAS: it is what PyTorch runs, and
// on an H100 (8192^3, bench_cuda_matmul.py) neither library won every dtype: against
// PyTorch, cuBLAS gave float32 0.999x, tf32 0.983x, float16 1.000x, bfloat16 0.946x;
// cuBLASLt 0.999x, 1.001x, 0.942x, 0.981x. BestPerformance times both per shape class.
#include "core/linear_internal.h"
#include "cuda/gemm.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"

namespace xrt::cuda {
namespace {

DType output_dtype(const DTypeSignature& s) { return s.dtypes[s.count - 1]; }

// A vector argument of vecdot (..., k) seen as a batch of rows (..., 1, k) or columns
// (..., k, 1); c (...) as (..., 1, 1).
Tensor vector_as(const Tensor& t, bool row) {
  Dims shape(t.shape().begin(), t.shape().end() - 1), strides(t.strides().begin(),
                                                              t.strides().end() - 1);
  int64_t k = t.shape().back(), step = t.strides().back();
  shape.push_back(row ? 1 : k);
  shape.push_back(row ? k : 1);
  strides.push_back(row ? 0 : step);
  strides.push_back(row ? step : 0);
  return t.as_strided(shape, strides, t.byte_offset());
}

Tensor scalar_as_matrix(const Tensor& t) {
  Dims shape = t.shape(), strides = t.strides();
  shape.push_back(1), shape.push_back(1);
  strides.push_back(1), strides.push_back(1);
  return t.as_strided(shape, strides, t.byte_offset());
}

template <GemmLibrary library> void matmul_kernel(const KernelCall& call) {
  gemm(library, call.in(0), call.in(1), call.out());
}

// vecdot(x1, x2) = sum conj(x1) * x2 over the last axis: a batch of 1 x k by k x 1 products.
template <GemmLibrary library> void vecdot_kernel(const KernelCall& call) {
  Tensor out = scalar_as_matrix(call.out());
  gemm(library, vector_as(call.in(0), true), vector_as(call.in(1), false), out,
       is_complex(call.out().dtype()));
}

// linear in one cublasLtMatmul with a bias/activation epilogue (Note [Fused linear]); the
// composed kernel where cuBLASLt has no fused algorithm for the problem.
void linear_cublaslt(const KernelCall& call) {
  const Tensor* bias = call.num_inputs > 2 ? &call.in(2) : nullptr;
  const Activation activation = activation_of(call);
  // Note: cuBLASLt's GELU epilogue in float64 is a float-accurate tanh (relative errors of
  // 4e-9 on an H200): float64 takes the bias epilogue and our gelu_tanh kernel instead.
  const bool double_gelu = activation == Activation::GeluTanh &&
                           call.out().dtype() == DType::Float64;
  const LinearEpilogue fused = activation == Activation::Relu ? LinearEpilogue::Relu
                               : activation == Activation::GeluTanh && !double_gelu
                                   ? LinearEpilogue::GeluTanh
                                   : LinearEpilogue::None;
  if (!gemm_linear(call.in(0), call.in(1), bias, fused, call.out())) {
    linear_composite_kernel(call);
    return;
  }
  if (activation == Activation::Gelu || double_gelu) apply_activation(activation, call.out());
}

template <GemmLibrary library>
KernelInfo kernel(std::string op, std::string name, KernelFn run, int priority,
                  std::string description) {
  return kernel_info(
      std::move(op), std::move(name), std::move(run), std::move(description),
      [](const DTypeSignature& s) { return gemm_supports(library, output_dtype(s)); }, priority);
}

}  // namespace

void register_matmul_kernels(KernelRegistry& r) {
  using L = GemmLibrary;
  r.add(kernel<L::Cublas>("matmul", "cublas", matmul_kernel<L::Cublas>, 10,
                          "cublasGemmEx / cublasGemmStridedBatchedEx (floating dtypes; "
                          "float16/bfloat16 accumulate in float32, TF32 only if the policy "
                          "allows it)"));
  r.add(kernel<L::CublasLt>("matmul", "cublaslt", matmul_kernel<L::CublasLt>, 5,
                            "cublasLtMatmul with a cached heuristic plan (floating dtypes; "
                            "float16/bfloat16 accumulate in float32, TF32 only if the policy "
                            "allows it)"));
  r.add(kernel<L::Native>("matmul", "native", matmul_kernel<L::Native>, 0,
                          "tiled CUDA kernel compiled by NVRTC (integer dtypes, wrapping)"));
  r.add(kernel<L::Cublas>("vecdot", "cublas", vecdot_kernel<L::Cublas>, 10,
                          "batched 1 x k by k x 1 cuBLAS products (floating dtypes)"));
  r.add(kernel<L::CublasLt>("linear", "cublaslt", linear_cublaslt, 10,
                            "one cublasLtMatmul with a bias + ReLU/GELU(tanh) epilogue; the "
                            "erf GELU as the bias epilogue and one gelu kernel in place"));
  r.add(kernel<L::Cublas>("linear", "composite", linear_composite_kernel, 0,
                          "the matmul kernel into the output, then bias and activation in "
                          "place"));
  r.add(kernel<L::Native>("vecdot", "native", vecdot_kernel<L::Native>, 0,
                          "tiled CUDA kernel compiled by NVRTC (integer dtypes, wrapping)"));
  // The source gemm_native compiles (cuda/matmul_native.cpp): every integer dtype at once.
  register_kernel_samples("matmul", [] {
    return std::vector<KernelSample>{{"xrt_matmul_<integer>", {"#include \"xrt/matmul.cuh\"\n", {}}}};
  });
}

}  // namespace xrt::cuda
