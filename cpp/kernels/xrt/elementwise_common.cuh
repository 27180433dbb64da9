// cpp/kernels/xrt/elementwise_common.cuh: what the unary and binary op structs of the
// elementwise device code share (unary_ops.cuh, binary_ops.cuh): wrapping integer
// arithmetic and the real type of a complex.
#pragma once
#include "xrt/complex_math.cuh"

namespace xrt::ew::op {

// Integer arithmetic wraps: it is done in an unsigned type at least as wide as int.
template <class T> using wrap_t = conditional_t<sizeof(T) == 8, u64, u32>;
template <class T> XRT_FN T wrap(wrap_t<T> v) { return static_cast<T>(v); }
template <class T> XRT_FN wrap_t<T> widen_int(T v) { return static_cast<wrap_t<T>>(v); }

template <class T> using real_of_t = decltype(T::re);

}  // namespace xrt::ew::op
