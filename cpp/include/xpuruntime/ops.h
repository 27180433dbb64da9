// cpp/include/xpuruntime/ops.h: the device-independent op definitions. Each checks its
// arguments (dtypes, shapes, the standard's errors), allocates the result and dispatches.
#pragma once
#include <initializer_list>
#include <optional>

#include "xpuruntime/kernel.h"
#include "xpuruntime/registry.h"

namespace xrt {

/// Ids of the built-in ops, interned once.
struct BuiltinOps {
  OpId copy, fill, arange, add, matmul;
  static const BuiltinOps& get();
};

// Creation
Tensor empty(const Dims& shape, DType dtype, Device device);
/// An elementwise op's result: laid out as its inputs (each of `shape`, or broadcast to it)
/// are, C order when they tell nothing else (Note [Result layout]).
Tensor empty_following(const Dims& shape, DType dtype, Device device,
                       std::initializer_list<const Tensor*> inputs);
Tensor full(const Dims& shape, const Scalar& value, DType dtype, Device device);
/// value everywhere, laid out as empty_following lays out (the *_like functions).
Tensor full_following(const Dims& shape, const Scalar& value, DType dtype, Device device,
                      std::initializer_list<const Tensor*> inputs);
/// Values start, start+step, ... below stop (above it for a negative step).
Tensor arange(const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype,
              Device device);

// Copies and casts
/// dst[...] = src[...] with dtype conversion; shapes must match (src may broadcast).
void copy_into(Tensor& dst, const Tensor& src);
/// x in dtype: x itself when dtype is x's and copy is false, else a row-major copy.
Tensor astype(const Tensor& x, DType dtype, bool copy);
/// astype as the user calls it: a copy is laid out as x is (NumPy's order='K', Note [Result
/// layout]), so a transposed array casts in one dense pass.
Tensor astype_keeping_layout(const Tensor& x, DType dtype, bool copy);
Tensor contiguous(const Tensor& x);
Tensor to_device(const Tensor& x, Device device);

// Type promotion
/// Result dtype of an array op on two arrays; TypeError where the standard is silent.
DType result_type(DType a, DType b);
/// Dtype a Python scalar takes next to an array of dtype `array` (the standard's rule);
/// TypeError for the undefined mixes (a float scalar with an integer array, ...).
DType scalar_result_type(DType array, Scalar::Kind scalar);
/// A 0-d tensor holding the scalar in dtype; OverflowError if an integer does not fit.
Tensor scalar_tensor(const Scalar& value, DType dtype, Device device);

// Elementwise
Tensor add(const Tensor& a, const Tensor& b);
/// a += b in place: b broadcasts to a's shape, the promoted dtype must be a's dtype.
void add_inplace(Tensor& a, const Tensor& b);

// Linear algebra
Tensor matmul(const Tensor& a, const Tensor& b);

/// The activation linear applies after its product (Note [Fused linear]).
enum class Activation : int { None = 0, Relu = 1, Gelu = 2, GeluTanh = 3 };
/// x @ weight^T (+ bias), then the activation: x (..., k), weight (n, k), bias (n) or null;
/// the result (..., n), the promoted real floating dtype. A dense layer in one op: the
/// CUDA "cublaslt" kernel fuses bias and activation into the product's epilogue.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor* bias, Activation activation);
/// A float32 weight (n, k) on the CPU rearranged once for the CPU's linear kernels: panels
/// of 32 output features, shape (ceil(n / 32), k, 32), zero padded (Note [Packed linear
/// weights]). TypeError for other dtypes or devices.
Tensor pack_linear_weight(const Tensor& weight);
/// linear with a weight from pack_linear_weight of a weight with out_features rows.
Tensor linear_packed(const Tensor& x, const Tensor& packed, int64_t out_features,
                     const Tensor* bias, Activation activation);

/// The one element of a size-1 tensor; TypeError for other sizes.
Scalar item(const Tensor& x);

/// ValueError naming op when a and b are on different devices (never a silent copy).
/// Note: inline, the error out of line, so a tiny op's path stays short.
[[noreturn]] void throw_different_devices(const Tensor& a, const Tensor& b, const char* op);
inline void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() != b.device()) [[unlikely]] throw_different_devices(a, b, op);
}
/// t as an operand of dtype and shape: t itself when it already is one, else a cast and/or
/// broadcast view kept alive in holder.
const Tensor& conform(const Tensor& t, DType dtype, const Dims& shape, Tensor& holder);

/// ValueError when x is read-only.
void check_writable(const Tensor& x);

}  // namespace xrt
