// cpp/src/cpu/matmul_openblas.cpp: matmul through cblas ?gemm of scipy-openblas64, whose
// symbols carry a scipy_ prefix and a 64_ suffix (64-bit integer interface).
#include <cblas.h>

#include <complex>
#include <cstring>
#include <vector>
#include <optional>

#include "cpu/kernels.h"
#include "core/host/thread_pool.h"
#include "cpu/matmul_common.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"

extern "C" char* scipy_openblas_get_config64_(void);

namespace xrt::cpu {
namespace {

struct BlasLayout { CBLAS_TRANSPOSE trans; int64_t ld; };

// How BLAS can read a rows x cols matrix with these element strides, if it can.
std::optional<BlasLayout> layout(int64_t rows, int64_t cols, int64_t s_row, int64_t s_col) {
  int64_t r = std::max<int64_t>(rows, 1), c = std::max<int64_t>(cols, 1);
  if ((cols <= 1 || s_col == 1) && (rows <= 1 || s_row >= c))
    return BlasLayout{CblasNoTrans, rows <= 1 ? c : s_row};
  if ((rows <= 1 || s_row == 1) && (cols <= 1 || s_col >= r))
    return BlasLayout{CblasTrans, cols <= 1 ? r : s_col};
  return std::nullopt;
}

template <class T>
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, const T* a,
          int64_t lda, const T* b, int64_t ldb, T* c) {
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_sgemm64_(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_cblas_dgemm64_(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
  } else {
    const T one(1), zero(0);
    if constexpr (std::is_same_v<T, std::complex<float>>)
      scipy_cblas_cgemm64_(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, n);
    else
      scipy_cblas_zgemm64_(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, n);
  }
}

// Copies a rows x cols matrix (byte strides) into row-major scratch that BLAS can read.
template <class T>
BlasLayout pack(const char* src, int64_t rows, int64_t cols, int64_t s_row, int64_t s_col,
                std::vector<T>& scratch, const T** out) {
  scratch.resize(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(&scratch[static_cast<size_t>(i * cols + j)], src + i * s_row + j * s_col,
                  sizeof(T));
  *out = scratch.data();
  return BlasLayout{CblasNoTrans, std::max<int64_t>(cols, 1)};
}

template <class T> void product(const MatrixProduct& g) {
  const int64_t item = sizeof(T);
  {
    T* c = reinterpret_cast<T*>(g.c);
    if (g.m == 0 || g.n == 0) return;
    if (g.k == 0) return std::fill(c, c + g.m * g.n, T(0));
    auto la = layout(g.m, g.k, g.a_row / item, g.a_col / item);
    auto lb = layout(g.k, g.n, g.b_row / item, g.b_col / item);
    const T* a = reinterpret_cast<const T*>(g.a);
    const T* b = reinterpret_cast<const T*>(g.b);
    // Note: operands BLAS cannot address (negative, zero or odd strides, misalignment)
    // are packed into contiguous scratch first.
    std::vector<T> a_copy, b_copy;
    bool aligned = reinterpret_cast<uintptr_t>(a) % alignof(T) == 0 &&
                   reinterpret_cast<uintptr_t>(b) % alignof(T) == 0 &&
                   g.a_row % item == 0 && g.a_col % item == 0 && g.b_row % item == 0 &&
                   g.b_col % item == 0;
    if (!la || !aligned) la = pack(g.a, g.m, g.k, g.a_row, g.a_col, a_copy, &a);
    if (!lb || !aligned) lb = pack(g.b, g.k, g.n, g.b_row, g.b_col, b_copy, &b);
    gemm<T>(la->trans, lb->trans, g.m, g.n, g.k, a, la->ld, b, lb->ld, c);
  }
}

// Below this many multiply-adds OpenBLAS runs a product on one thread, so a batch of them
// (attention's heads) runs on the pool, a product per task: 4 heads of 64^3 took 20 us
// one after another on two cores.
constexpr int64_t kSmallProduct = int64_t(1) << 21;

template <class T> void matmul_typed(const KernelCall& call) {
  MatrixProduct folded;
  if (fold_batch(call, folded)) return product<T>(folded);  // Note [Folding a batch into rows]
  const Tensor& out = call.out();
  const int nd = out.ndim();
  const int64_t work = out.shape()[nd - 2] * out.shape()[nd - 1] * call.in(0).shape()[nd - 1];
  if (out.numel() > 0 && work <= kSmallProduct && out.numel() / std::max<int64_t>(
          out.shape()[nd - 2] * out.shape()[nd - 1], 1) > 1) {
    const std::vector<MatrixProduct> batch = matrices(call);
    host::parallel_for(static_cast<int64_t>(batch.size()), 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) product<T>(batch[static_cast<size_t>(i)]);
    });
    return;
  }
  for_each_matrix(call, [](const MatrixProduct& g) { product<T>(g); });
}

}  // namespace

bool matmul_openblas_supports(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Complex64 ||
         d == DType::Complex128;
}

void matmul_openblas(const KernelCall& call) {
  switch (call.out().dtype()) {
    case DType::Float32: return matmul_typed<float>(call);
    case DType::Float64: return matmul_typed<double>(call);
    case DType::Complex64: return matmul_typed<std::complex<float>>(call);
    case DType::Complex128: return matmul_typed<std::complex<double>>(call);
    default: throw UnsupportedOperationError("openblas matmul supports float32/64, complex64/128");
  }
}

const char* openblas_config() { return scipy_openblas_get_config64_(); }

}  // namespace xrt::cpu
