// cpp/include/xpuruntime/linalg.h: linear algebra: the Array API linalg extension and the
// main namespace's tensordot, vecdot and matrix_transpose (matmul lives in ops.h).
//
// Functions that "should have a floating-point data type" (everything LAPACK computes,
// the norms, matrix_power, pinv, matrix_rank) raise TypeError for bool and integer input,
// as array-api-strict does. float16 and bfloat16 are computed in float32 and the results
// cast back (eig/eigvals excepted: there is no complex dtype of their precision).
#pragma once
#include <optional>
#include <variant>

#include "xpuruntime/errors.h"
#include "xpuruntime/tensor.h"

namespace xrt {

/// A matrix an algorithm cannot handle: singular (inv, solve), not positive definite
/// (cholesky), no convergence (eig, svd). A ValueError, since the standard names no
/// exception for these (Python: xpuruntime.linalg.LinAlgError, a ValueError subclass).
struct LinAlgError : ValueError { using ValueError::ValueError; };

/// Swaps the last two axes (a view); ValueError for ndim < 2.
Tensor matrix_transpose(const Tensor& x);
/// Contracts axes1 of x1 with axes2 of x2 (same length, sizes equal, never broadcast).
Tensor tensordot(const Tensor& x1, const Tensor& x2, const Dims& axes1, const Dims& axes2);
/// Contracts the last n axes of x1 with the first n axes of x2.
Tensor tensordot(const Tensor& x1, const Tensor& x2, int64_t n);
/// sum(conj(x1) * x2) over axis (negative, counted from the end); the other axes broadcast.
Tensor vecdot(const Tensor& x1, const Tensor& x2, int64_t axis);

namespace linalg {

struct EigResult { Tensor eigenvalues, eigenvectors; };
struct QrResult { Tensor Q, R; };
struct SlogdetResult { Tensor sign, logabsdet; };
struct SvdResult { Tensor U, S, Vh; };

/// Matrix norm orders: 'fro', 'nuc', or one of 1, -1, 2, -2, inf, -inf.
struct MatrixNormOrder {
  enum class Kind { Frobenius, Nuclear, Number };
  Kind kind = Kind::Frobenius;
  double p = 0;  ///< Kind::Number
};

/// rtol of pinv/matrix_rank: none (max(M, N) * eps), a Python float, or an array that
/// broadcasts against the stack shape.
using RelativeTolerance = std::variant<std::monostate, double, Tensor>;

Tensor cholesky(const Tensor& x, bool upper);
Tensor cross(const Tensor& x1, const Tensor& x2, int64_t axis);
Tensor det(const Tensor& x);
/// The offset-th diagonal of each matrix, as a view.
Tensor diagonal(const Tensor& x, int64_t offset);
EigResult eigh(const Tensor& x);
Tensor eigvalsh(const Tensor& x);
EigResult eig(const Tensor& x);
Tensor eigvals(const Tensor& x);
Tensor inv(const Tensor& x);
Tensor matrix_norm(const Tensor& x, bool keepdims, MatrixNormOrder ord);
Tensor matrix_power(const Tensor& x, int64_t n);
Tensor matrix_rank(const Tensor& x, const RelativeTolerance& rtol);
Tensor outer(const Tensor& x1, const Tensor& x2);
Tensor pinv(const Tensor& x, const RelativeTolerance& rtol);
QrResult qr(const Tensor& x, bool complete);
SlogdetResult slogdet(const Tensor& x);
Tensor solve(const Tensor& x1, const Tensor& x2);
SvdResult svd(const Tensor& x, bool full_matrices);
Tensor svdvals(const Tensor& x);
Tensor trace(const Tensor& x, int64_t offset, std::optional<DType> dtype);
/// axes: none = all; ord: any float (inf, -inf, 0 and negative orders included).
Tensor vector_norm(const Tensor& x, const std::optional<Dims>& axes, bool keepdims, double ord);

}  // namespace linalg
}  // namespace xrt
