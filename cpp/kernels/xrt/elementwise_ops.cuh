// cpp/kernels/xrt/elementwise_ops.cuh: the scalar function behind every elementwise op on
// the device (unary_ops.cuh, binary_ops.cuh and `where`: one struct per row of
// XRT_UNARY_OPS / XRT_BINARY_OPS, same names), and how an op goes from stored values to
// stored results. The twin of cpp/src/cpu/scalar_math.h and scalar_binary_math.h: the same
// formulas and choices where the standard leaves one open, so that CUDA and the CPU agree.
//
// `apply` takes the compute type (bool, the integers, float for float16/bfloat16 too,
// double, Complex<float/double>); ops marked `on_storage` take the stored 16-bit floats as
// they are (nextafter steps by their own ulp). The generator instantiates an op only for
// the dtypes its category accepts (elementwise.h), so `apply` need not reject the others.
#pragma once
#include "xrt/binary_ops.cuh"
#include "xrt/unary_ops.cuh"

namespace xrt::ew::op {

// where: the element of x where the condition holds, else that of y (any stored type).
struct where {
  static constexpr bool on_storage = true;
  template <class T> XRT_FN static T apply(bool condition, T x, T y) {
    return condition ? x : y;
  }
};

}  // namespace xrt::ew::op

namespace xrt::ew {

// ---- From stored values to results -----------------------------------------------------

template <class T> struct compute_type { using type = T; };
template <> struct compute_type<Float16> { using type = float; };
template <> struct compute_type<BFloat16> { using type = float; };
template <class T> using compute_t = typename compute_type<T>::type;

template <class Op, class = void> inline constexpr bool on_storage = false;
template <class Op> inline constexpr bool on_storage<Op, decltype(void(Op::on_storage))> =
    Op::on_storage;

template <class T> XRT_FN compute_t<T> load_value(T x) {
  if constexpr (is_half<T>) return to_float(x);
  else return x;
}
/// A result in its stored type: a float result of a 16-bit float input rounds back to it;
/// bool and the real part of a complex are stored as they are.
template <class T, class C> XRT_FN auto store_value(C r) {
  if constexpr (is_half<T> && is_same<C, float>) return from_float<T>(r);
  else return r;
}

template <class Op, class T> XRT_FN auto unary_value(T x) {
  return store_value<T>(Op::apply(load_value(x)));
}
template <class Op, class T> XRT_FN auto binary_value(T a, T b) {
  if constexpr (on_storage<Op>) return Op::apply(a, b);
  else return store_value<T>(Op::apply(load_value(a), load_value(b)));
}

}  // namespace xrt::ew
