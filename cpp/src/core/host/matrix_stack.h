// cpp/src/core/host/matrix_stack.h: positions in a stack of matrices (or vectors), for the
// linalg kernels of every backend: how many items, where item i starts, how to name it.
//
// A stack is all but a tensor's last core_ndim dimensions, walked in row-major order.
// Operands of one call share the stack shape (the op definition broadcasts them), so the
// i-th item of every operand is found from the same flat stack index.
#pragma once
#include <cstdint>
#include <string>

#include "xpuruntime/tensor.h"

namespace xrt::host {

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

}  // namespace xrt::host
