// cpp/src/cpu/matmul_common.h: walking the batch of a matmul call (shared by its kernels).
#pragma once
#include <cstdint>
#include <vector>

#include "xpuruntime/kernel.h"

namespace xrt::cpu {

/// One matrix product of the batch: pointers and byte strides of A (m x k), B (k x n) and
/// the contiguous C (m x n).
struct MatrixProduct {
  int64_t m, n, k;
  const char* a; int64_t a_row, a_col;
  const char* b; int64_t b_row, b_col;
  char* c;
};

/// Note [Folding a batch into rows]: a stack of matrices times one matrix (B broadcast over
/// the batch, as a linear layer's weight is) is one product when A's batch and row
/// dimensions walk its memory with one row stride: (batch * m) x k times k x n, written to
/// the contiguous C's rows in the same order. One GEMM in place of `batch` small ones: an
/// exported attention projection, [64, 1, 256] times [256, 768], took 1.39 ms as 64
/// products on the CPU. Fills p and returns true when the call folds.
inline bool fold_batch(const KernelCall& call, MatrixProduct& p) {
  const Tensor &a = call.in(0), &b = call.in(1), &c = call.out();
  const int nd = c.ndim();
  if (nd < 3) return false;
  int64_t row_stride = 0, span = 0;  // elements; rows merged so far
  bool batched = false;
  for (int d = nd - 2; d >= 0; --d) {
    const int64_t extent = c.shape()[d];
    if (d < nd - 2) {
      if (extent == 1) continue;
      // (the inputs arrive broadcast to the batch shape: a stride of 0 repeats a matrix)
      if (a.strides()[d] == 0 || (b.shape()[d] != 1 && b.strides()[d] != 0)) return false;
      batched = true;
    }
    if (extent == 1) continue;  // (a single row: its stride is free)
    if (span == 0) {
      row_stride = a.strides()[d];
      span = extent;
    } else if (a.strides()[d] == row_stride * span) {
      span *= extent;
    } else {
      return false;
    }
  }
  if (!batched) return false;
  const int64_t item = static_cast<int64_t>(c.itemsize());
  p.m = span;
  p.n = c.shape()[nd - 1];
  p.k = a.shape()[nd - 1];
  p.a_row = row_stride * item;
  p.a_col = a.strides()[nd - 1] * item;
  p.b_row = b.strides()[nd - 2] * item;
  p.b_col = b.strides()[nd - 1] * item;
  p.a = a.data();
  p.b = b.data();
  p.c = c.data();
  return true;
}

/// Calls fn(product) for each matrix of the batch; inputs are broadcast to the batch shape.
/// The products run one after another (each may use the pool itself).
template <class Fn> void for_each_matrix(const KernelCall& call, Fn&& fn) {
  const Tensor &a = call.in(0), &b = call.in(1), &c = call.out();
  int nd = c.ndim();
  int64_t item = static_cast<int64_t>(c.itemsize());
  MatrixProduct folded;
  if (fold_batch(call, folded)) return fn(folded);
  MatrixProduct p;
  p.m = c.shape()[nd - 2];
  p.n = c.shape()[nd - 1];
  p.k = a.shape()[nd - 1];
  p.a_row = a.strides()[nd - 2] * item;
  p.a_col = a.strides()[nd - 1] * item;
  p.b_row = b.strides()[nd - 2] * item;
  p.b_col = b.strides()[nd - 1] * item;
  int64_t batch = 1;
  for (int d = 0; d < nd - 2; ++d) batch *= c.shape()[d];
  for (int64_t i = 0; i < batch; ++i) {
    int64_t rest = i, a_off = 0, b_off = 0;
    for (int d = nd - 3; d >= 0; --d) {
      int64_t idx = rest % c.shape()[d];
      rest /= c.shape()[d];
      a_off += idx * a.strides()[d] * item;
      b_off += idx * b.strides()[d] * item;
    }
    p.a = a.data() + a_off;
    p.b = b.data() + b_off;
    p.c = c.data() + i * p.m * p.n * item;
    fn(p);
  }
}

/// The products of the batch as a list, for kernels that run small ones in parallel.
inline std::vector<MatrixProduct> matrices(const KernelCall& call) {
  std::vector<MatrixProduct> out;
  for_each_matrix(call, [&](const MatrixProduct& p) { out.push_back(p); });
  return out;
}

}  // namespace xrt::cpu
