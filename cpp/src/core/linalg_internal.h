// cpp/src/core/linalg_internal.h: what the two linalg op files share (op ids, checks).
#pragma once
#include <initializer_list>
#include <string>

#include "xpuruntime/linalg.h"
#include "xpuruntime/ops.h"

namespace xrt::linalg_detail {

/// Ids of the linalg ops, interned once. A values-only function shares the op of its
/// decomposition and asks for fewer outputs: eigvalsh is eigh with one output, eigvals
/// eig, svdvals svd. det/slogdet and inv/solve are separate ops with one kernel each.
struct LinalgOps {
  OpId cholesky, det, slogdet, inv, solve, qr, eigh, eig, svd, pinv, matrix_rank, vector_norm,
      vecdot, cross, outer;
  static const LinalgOps& get();
};

std::string name_of(DType d);

void run(OpId op, std::initializer_list<const Tensor*> inputs, Tensor* outputs, int num_outputs,
         const OpAttrs* attrs = nullptr);

/// The dtype LAPACK computes a dtype in (float16/bfloat16 in float32); TypeError for
/// non-floating dtypes.
DType compute_dtype(DType d, const char* op);

/// ValueError unless x is a (stack of) matrix, square when asked.
void check_matrices(const Tensor& x, const char* op, bool square);

Dims with_core(Dims batch, std::initializer_list<int64_t> core);
/// x's shape without its last core_ndim dimensions.
Dims batch_of(const Tensor& x, int core_ndim);
/// t itself when it has dtype already, else a cast copy.
Tensor cast_to(const Tensor& t, DType dtype);

}  // namespace xrt::linalg_detail
