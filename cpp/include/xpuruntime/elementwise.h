// cpp/include/xpuruntime/elementwise.h: the standard's elementwise functions, defined once
// as a table (name, arity, the dtypes each accepts, the dtype each returns, whether it calls
// the math library, the dtype it computes in). Op definitions check and promote; the device
// kernels registered under the same names only compute, and read the table for the rest.
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

/// Whether the op's function calls the math library. Such functions are long: the CUDA
/// kernels do not unroll them, and the CPU builds the ones that call it for real inputs
/// once per instruction set, against libmvec's vector versions.
enum class MathLibrary : uint8_t {
  No,       ///< arithmetic, comparisons, bit operations, rounding
  Complex,  ///< for complex inputs only: |z| and complex division
  Yes,      ///< for every floating-point input
};

/// The dtype an op computes in, given the promoted dtype of its inputs (a unary op computes
/// in its input's dtype, logical_not aside: the column keeps the two tables alike). The
/// "accepts" column is the dtypes of the kernels; a Truth op casts other inputs to them.
enum class ComputesIn : uint8_t {
  Promoted,          ///< the promoted dtype
  FloatForIntegers,  ///< the default float for integers: integer division has no integer
                     ///< result in the standard, so there is no integer kernel
  Truth,             ///< bool: an input of another dtype is read as its truth value
                     ///< (Note [Logical ops read truth values] in elementwise_ops.cpp)
};

#define XRT_UNARY_OPS(X)                                                         \
  /* name                 accepts        result    math lib  computes in */      \
  X(abs,                  Numeric,       RealPart, Complex,  Promoted)           \
  X(acos,                 Floating,      Same,     Yes,      Promoted)           \
  X(acosh,                Floating,      Same,     Yes,      Promoted)           \
  X(asin,                 Floating,      Same,     Yes,      Promoted)           \
  X(asinh,                Floating,      Same,     Yes,      Promoted)           \
  X(atan,                 Floating,      Same,     Yes,      Promoted)           \
  X(atanh,                Floating,      Same,     Yes,      Promoted)           \
  X(bitwise_invert,       IntegerOrBool, Same,     No,       Promoted)           \
  X(ceil,                 RealNumeric,   Same,     No,       Promoted)           \
  X(conj,                 Numeric,       Same,     No,       Promoted)           \
  X(cos,                  Floating,      Same,     Yes,      Promoted)           \
  X(cosh,                 Floating,      Same,     Yes,      Promoted)           \
  X(erf,                  RealFloating,  Same,     Yes,      Promoted)           \
  X(exp,                  Floating,      Same,     Yes,      Promoted)           \
  X(expm1,                Floating,      Same,     Yes,      Promoted)           \
  X(floor,                RealNumeric,   Same,     No,       Promoted)           \
  X(gelu,                 RealFloating,  Same,     Yes,      Promoted)           \
  X(gelu_tanh,            RealFloating,  Same,     Yes,      Promoted)           \
  X(imag,                 Numeric,       RealPart, No,       Promoted)           \
  X(isfinite,             Numeric,       Bool,     No,       Promoted)           \
  X(isinf,                Numeric,       Bool,     No,       Promoted)           \
  X(isnan,                Numeric,       Bool,     No,       Promoted)           \
  X(log,                  Floating,      Same,     Yes,      Promoted)           \
  X(log1p,                Floating,      Same,     Yes,      Promoted)           \
  X(log2,                 Floating,      Same,     Yes,      Promoted)           \
  X(log10,                Floating,      Same,     Yes,      Promoted)           \
  X(logical_not,          Bool,          Bool,     No,       Truth)              \
  X(negative,             Numeric,       Same,     No,       Promoted)           \
  X(positive,             Numeric,       Same,     No,       Promoted)           \
  X(real,                 Numeric,       RealPart, No,       Promoted)           \
  X(reciprocal,           Floating,      Same,     Complex,  Promoted)           \
  X(round,                Numeric,       Same,     No,       Promoted)           \
  X(sign,                 Numeric,       Same,     Complex,  Promoted)           \
  X(signbit,              RealFloating,  Bool,     No,       Promoted)           \
  X(sin,                  Floating,      Same,     Yes,      Promoted)           \
  X(sinh,                 Floating,      Same,     Yes,      Promoted)           \
  X(square,               Numeric,       Same,     No,       Promoted)           \
  X(sqrt,                 Floating,      Same,     Yes,      Promoted)           \
  X(tan,                  Floating,      Same,     Yes,      Promoted)           \
  X(tanh,                 Floating,      Same,     Yes,      Promoted)           \
  X(trunc,                RealNumeric,   Same,     No,       Promoted)

#define XRT_BINARY_OPS(X)                                                        \
  /* name                 accepts        result    math lib  computes in */      \
  X(add,                  Numeric,       Same,     No,       Promoted)           \
  X(atan2,                RealFloating,  Same,     Yes,      Promoted)           \
  X(bitwise_and,          IntegerOrBool, Same,     No,       Promoted)           \
  X(bitwise_left_shift,   Integer,       Same,     No,       Promoted)           \
  X(bitwise_or,           IntegerOrBool, Same,     No,       Promoted)           \
  X(bitwise_right_shift,  Integer,       Same,     No,       Promoted)           \
  X(bitwise_xor,          IntegerOrBool, Same,     No,       Promoted)           \
  X(copysign,             RealFloating,  Same,     No,       Promoted)           \
  X(divide,               Numeric,       Same,     Complex,  FloatForIntegers)   \
  X(equal,                Any,           Bool,     No,       Promoted)           \
  X(floor_divide,         RealNumeric,   Same,     No,       Promoted)           \
  X(greater,              RealNumeric,   Bool,     No,       Promoted)           \
  X(greater_equal,        RealNumeric,   Bool,     No,       Promoted)           \
  X(hypot,                RealFloating,  Same,     Yes,      Promoted)           \
  X(less,                 RealNumeric,   Bool,     No,       Promoted)           \
  X(less_equal,           RealNumeric,   Bool,     No,       Promoted)           \
  X(logaddexp,            RealFloating,  Same,     Yes,      Promoted)           \
  X(logical_and,          Bool,          Bool,     No,       Truth)              \
  X(logical_or,           Bool,          Bool,     No,       Truth)              \
  X(logical_xor,          Bool,          Bool,     No,       Truth)              \
  X(maximum,              RealNumeric,   Same,     No,       Promoted)           \
  X(minimum,              RealNumeric,   Same,     No,       Promoted)           \
  X(multiply,             Numeric,       Same,     No,       Promoted)           \
  X(nextafter,            RealFloating,  Same,     No,       Promoted)           \
  X(not_equal,            Any,           Bool,     No,       Promoted)           \
  X(pow,                  Numeric,       Same,     Yes,      Promoted)           \
  X(remainder,            RealNumeric,   Same,     No,       Promoted)           \
  X(subtract,             Numeric,       Same,     No,       Promoted)

#define XRT_ENUM_ENTRY(name, accepts, result, math_library, computes_in) name,
enum class UnaryOp : uint8_t { XRT_UNARY_OPS(XRT_ENUM_ENTRY) };
enum class BinaryOp : uint8_t { XRT_BINARY_OPS(XRT_ENUM_ENTRY) };
#undef XRT_ENUM_ENTRY

/// One row of the elementwise table.
struct ElementwiseInfo {
  const char* name;
  DTypeCategory accepts;
  ResultKind result;
  MathLibrary math_library;
  ComputesIn computes_in;
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
