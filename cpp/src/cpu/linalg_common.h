// cpp/src/cpu/linalg_common.h: what the linalg kernels share: walking a stack of matrices
// and moving each matrix between a tensor's layout and a column-major LAPACK buffer.
//
// Operands of one call share the stack shape (the op definition broadcasts them), so the
// i-th matrix of every operand is found from the same flat stack index.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "xpuruntime/registry.h"
#include "xpuruntime/tensor.h"

namespace xrt::cpu {

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

/// Number of items of t's stack: the product of all but its last core_ndim dimensions.
inline int64_t stack_size(const Tensor& t, int core_ndim) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim() - core_ndim; ++d) n *= t.shape()[d];
  return n;
}

/// Address of stack item `index` (row-major over the leading ndim - core_ndim dims).
inline char* stack_item(const Tensor& t, int core_ndim, int64_t index) {
  int64_t offset = 0;
  for (int d = t.ndim() - core_ndim - 1; d >= 0; --d) {
    int64_t n = t.shape()[d];
    offset += (index % n) * t.strides()[d];
    index /= n;
  }
  return t.data() + offset * static_cast<int64_t>(t.itemsize());
}

/// " (matrix (1, 0) of the stack)" for error messages; empty for a single matrix.
inline std::string stack_position(const Tensor& t, int core_ndim, int64_t index) {
  int batch = t.ndim() - core_ndim;
  if (batch <= 0) return "";
  Dims position(batch);
  for (int d = batch - 1; d >= 0; --d) {
    position[d] = index % t.shape()[d];
    index /= t.shape()[d];
  }
  return " (matrix " + shape_str(position) + " of the stack)";
}

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
