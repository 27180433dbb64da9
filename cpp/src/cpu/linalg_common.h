// cpp/src/cpu/linalg_common.h: what the CPU linalg kernels share: the LAPACK dtypes, and
// moving each matrix of a stack (core/host/matrix_stack.h) between a tensor's layout and a
// column-major LAPACK buffer.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/host/dtype_dispatch.h"
#include "core/host/matrix_stack.h"
#include "cpu/kernels.h"
#include "xpuruntime/registry.h"
#include "xpuruntime/tensor.h"

namespace xrt::cpu {

using host::Tag;
using host::stack_item;
using host::stack_position;
using host::stack_size;

/// Calls f(Tag<T>{}) for the four dtypes LAPACK computes in.
template <class F>
void visit_lapack_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32:
      return f(Tag<float>{});
    case DType::Float64:
      return f(Tag<double>{});
    case DType::Complex64:
      return f(Tag<std::complex<float>>{});
    case DType::Complex128:
      return f(Tag<std::complex<double>>{});
    default:
      throw UnsupportedOperationError(
          "LAPACK kernels compute in float32, float64, complex64 "
          "or complex128, not " +
          std::string(dtype_info(dtype).name));
  }
}

inline bool is_lapack_dtype(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Complex64 ||
         d == DType::Complex128;
}

/// A built-in CPU kernel of linalg; supports() looks at the first input's dtype.
inline void add_linalg_kernel(KernelRegistry& registry, const char* op, const char* name,
                              void (*run)(const KernelCall&), const char* description,
                              bool (*supports)(DType first_input)) {
  registry.add(kernel_info(op, name, run, description, [supports](const DTypeSignature& s) {
    return supports(s.dtypes[0]);
  }));
}

// The kernel files of linalg; register_linalg_kernels (kernels.h) calls both.
void register_linalg_spectral_kernels(KernelRegistry& registry);
void register_linalg_vector_kernels(KernelRegistry& registry);

/// The rows x cols matrix of t's stack item `index`, by element strides.
template <class T>
struct MatrixRef {
  T* data;
  int64_t rows, cols, row_stride, col_stride;
  T& operator()(int64_t i, int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

template <class T>
MatrixRef<T> matrix_at(const Tensor& t, int64_t index) {
  int n = t.ndim();
  return {reinterpret_cast<T*>(stack_item(t, 2, index)), t.shape()[n - 2], t.shape()[n - 1],
          t.strides()[n - 2], t.strides()[n - 1]};
}

/// LAPACK's leading dimension for a column-major matrix of `rows` rows.
inline int64_t leading_dim(int64_t rows) { return std::max<int64_t>(1, rows); }

/// Copies src into the column-major buffer dst (leading dimension ld).
template <class T>
void load_column_major(const MatrixRef<T>& src, T* dst, int64_t ld) {
  for (int64_t j = 0; j < src.cols; ++j)
    for (int64_t i = 0; i < src.rows; ++i) dst[i + j * ld] = src(i, j);
}

/// Copies the column-major buffer src (leading dimension ld) into dst.
template <class T>
void store_column_major(const T* src, int64_t ld, const MatrixRef<T>& dst) {
  for (int64_t i = 0; i < dst.rows; ++i)
    for (int64_t j = 0; j < dst.cols; ++j) dst(i, j) = src[i + j * ld];
}

/// Writes the identity into dst.
template <class T>
void set_identity(const MatrixRef<T>& dst) {
  for (int64_t i = 0; i < dst.rows; ++i)
    for (int64_t j = 0; j < dst.cols; ++j) dst(i, j) = T(i == j ? 1 : 0);
}

}  // namespace xrt::cpu
