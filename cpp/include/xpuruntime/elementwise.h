// cpp/include/xpuruntime/elementwise.h: the standard's elementwise functions, defined once
// as a table (name, arity, the dtypes each accepts, the dtype each returns). Op definitions
// check and promote; the device kernels registered under the same names only compute.
#pragma once
#include <cstdint>
#include <optional>

#include "xpuruntime/scalar.h"
#include "xpuruntime/tensor.h"

namespace xrt {

/// Which input dtypes an elementwise function accepts (the standard's categories).
enum class DTypeCategory : uint8_t {
  Any,             ///< every dtype
  Bool,            ///< bool
  Integer,         ///< signed and unsigned integers
  IntegerOrBool,   ///< integers and bool
  Numeric,         ///< everything but bool
  RealNumeric,     ///< integers and real floats
  Floating,        ///< real and complex floats
  RealFloating,    ///< real floats
};

/// The dtype of the result relative to the (promoted) input dtype.
enum class ResultKind : uint8_t {
  Same,      ///< the input dtype
  Bool,      ///< bool (comparisons, predicates)
  RealPart,  ///< the real dtype of a complex input (abs, real, imag); same otherwise
};

#define XRT_UNARY_OPS(X)                                                                    \
  X(abs, Numeric, RealPart) X(acos, Floating, Same) X(acosh, Floating, Same)                \
  X(asin, Floating, Same) X(asinh, Floating, Same) X(atan, Floating, Same)                  \
  X(atanh, Floating, Same) X(bitwise_invert, IntegerOrBool, Same) X(ceil, RealNumeric, Same) \
  X(conj, Numeric, Same) X(cos, Floating, Same) X(cosh, Floating, Same)                     \
  X(exp, Floating, Same) X(expm1, Floating, Same) X(floor, RealNumeric, Same)               \
  X(imag, Numeric, RealPart) X(isfinite, Numeric, Bool) X(isinf, Numeric, Bool)             \
  X(isnan, Numeric, Bool) X(log, Floating, Same) X(log1p, Floating, Same)                   \
  X(log2, Floating, Same) X(log10, Floating, Same) X(logical_not, Bool, Bool)               \
  X(negative, Numeric, Same) X(positive, Numeric, Same) X(real, Numeric, RealPart)          \
  X(reciprocal, Floating, Same) X(round, Numeric, Same) X(sign, Numeric, Same)              \
  X(signbit, RealFloating, Bool) X(sin, Floating, Same) X(sinh, Floating, Same)             \
  X(square, Numeric, Same) X(sqrt, Floating, Same) X(tan, Floating, Same)                   \
  X(tanh, Floating, Same) X(trunc, RealNumeric, Same)

#define XRT_BINARY_OPS(X)                                                                   \
  X(add, Numeric, Same) X(atan2, RealFloating, Same) X(bitwise_and, IntegerOrBool, Same)    \
  X(bitwise_left_shift, Integer, Same) X(bitwise_or, IntegerOrBool, Same)                   \
  X(bitwise_right_shift, Integer, Same) X(bitwise_xor, IntegerOrBool, Same)                 \
  X(copysign, RealFloating, Same) X(divide, Numeric, Same) X(equal, Any, Bool)              \
  X(floor_divide, RealNumeric, Same) X(greater, RealNumeric, Bool)                          \
  X(greater_equal, RealNumeric, Bool) X(hypot, RealFloating, Same) X(less, RealNumeric, Bool) \
  X(less_equal, RealNumeric, Bool) X(logaddexp, RealFloating, Same)                         \
  X(logical_and, Bool, Bool) X(logical_or, Bool, Bool) X(logical_xor, Bool, Bool)           \
  X(maximum, RealNumeric, Same) X(minimum, RealNumeric, Same) X(multiply, Numeric, Same)    \
  X(nextafter, RealFloating, Same) X(not_equal, Any, Bool) X(pow, Numeric, Same)            \
  X(remainder, RealNumeric, Same) X(subtract, Numeric, Same)

#define XRT_ENUM_ENTRY(name, category, result) name,
enum class UnaryOp : uint8_t { XRT_UNARY_OPS(XRT_ENUM_ENTRY) };
enum class BinaryOp : uint8_t { XRT_BINARY_OPS(XRT_ENUM_ENTRY) };
#undef XRT_ENUM_ENTRY

/// One row of the elementwise table.
struct ElementwiseInfo {
  const char* name;
  DTypeCategory accepts;
  ResultKind result;
};

int num_unary_ops();
int num_binary_ops();
const ElementwiseInfo& unary_info(UnaryOp op);
const ElementwiseInfo& binary_info(BinaryOp op);

/// True when dtype belongs to the category.
bool in_category(DType dtype, DTypeCategory category);

/// The function applied to every element; TypeError for dtypes the function does not take.
Tensor unary(UnaryOp op, const Tensor& x);
/// The function applied to broadcast, promoted operands.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
/// a = op(a, b) in place (operators such as +=): b must broadcast to a's shape and the
/// result dtype must be a's dtype.
void binary_inplace(BinaryOp op, Tensor& a, const Tensor& b);

/// Note [Host scalars]: a Python scalar combined with a device array is held as a 0-d CPU
/// tensor (of the dtype the standard gives it) and handed to the device's kernel as is: the
/// CUDA elementwise kernels pass its value in the launch's arguments, which saves creating
/// and filling a 0-d device array (a driver call) on every `x + 1.0`. These are the only
/// calls in which a device kernel receives a CPU input, always 0-d; every other mix of
/// devices stays an error. On the CPU they are binary / binary_inplace.
Tensor binary_with_host_scalar(BinaryOp op, const Tensor& a, const Tensor& b);
void binary_inplace_with_host_scalar(BinaryOp op, Tensor& a, const Tensor& scalar);

/// The element of x where condition holds, else the element of y (broadcast, promoted).
Tensor where(const Tensor& condition, const Tensor& x, const Tensor& y);
/// x limited to [min, max]; either bound may be absent. Bounds broadcast to x's shape and
/// take x's dtype (the standard's rule).
Tensor clip(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max);

}  // namespace xrt
