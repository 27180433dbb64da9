// cpp/src/cpu/accumulators.h: sum and product reducers (reduce_engine.h's interface) and
// the dtype helpers that reductions (reduce_kernels.cpp) and scans (scan_kernels.cpp) share.
//
// Sums and products accumulate in 64 bits for integers (a narrower result wraps at the
// end, which equals wrapping at every step, since casts between integers are modular) and
// in float32 for float16/bfloat16, which round once at the end.
#pragma once
#include <cmath>
#include <complex>
#include <type_traits>

#include "core/host/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "xpuruntime/scalar.h"

namespace xrt::cpu {

using host::Tag;
using host::visit_dtype;

using detail::compute_t;
using detail::is_complex_v;

template <class T> inline constexpr bool kFloat = std::is_floating_point_v<T>;

/// The accumulator of a sum or product whose result type is T.
template <class T> using wide_t =
    std::conditional_t<std::is_same_v<T, bool> || !std::is_integral_v<T>, compute_t<T>,
                       std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

/// The result type of a sum of T when no dtype is given (bool counts in int64).
template <class T> using default_sum_t =
    std::conditional_t<std::is_same_v<T, bool>, int64_t, wide_t<T>>;

template <class T> T negative_zero() {
  if constexpr (kFloat<T>) return T(-0.0);
  else if constexpr (is_complex_v<T>) return T(-0.0, -0.0);
  else return T(0);
}

template <class T> bool is_nan(T v) { return v != v; }  // false for every integer

template <class T> constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::Int8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::Int16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::Int64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::UInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::UInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::UInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::UInt64;
  else if constexpr (std::is_same_v<T, Float16>) return DType::Float16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DType::BFloat16;
  else if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else if constexpr (std::is_same_v<T, double>) return DType::Float64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return DType::Complex64;
  else return DType::Complex128;
}

template <class In_, class Out_> struct Sum {
  using In = In_;
  using Out = Out_;
  using Acc = wide_t<Out>;
  static constexpr bool kIndexed = false;
  // -0.0 is the identity of IEEE addition (+0.0 + -0.0 is +0.0).
  Acc identity() const { return negative_zero<Acc>(); }
  Acc map(In v, int64_t, int64_t) const { return Acc(cast_value<Out>(v)); }
  Acc combine(Acc a, Acc b) const { return a + b; }
  // Note: + 0 turns an all-negative-zero sum into +0.0, as a sum that starts at 0 would.
  Out finalize(Acc a, int64_t, int64_t) const { return cast_value<Out>(Acc(a + Acc(0))); }
};

template <class In_, class Out_> struct Prod {
  using In = In_;
  using Out = Out_;
  using Acc = wide_t<Out>;
  static constexpr bool kIndexed = false;
  Acc identity() const { return Acc(1); }
  Acc map(In v, int64_t, int64_t) const { return Acc(cast_value<Out>(v)); }
  Acc combine(Acc a, Acc b) const { return a * b; }
  Out finalize(Acc a, int64_t, int64_t) const { return cast_value<Out>(a); }
};

/// x cast to dtype, for the result dtypes a kernel has no direct loop for.
Tensor cast_input(const Tensor& x, DType dtype);

/// Calls f(Tag<In>{}, Tag<Out>{}) for a sum-like op from x's dtype to out, when the pair has
/// a direct loop: the same dtype, float32 -> float64, or (Widen) the default result dtype
/// of a sum of integers; FloatOnly: floating inputs only. Returns false otherwise: the
/// caller casts x first.
template <bool FloatOnly, bool Widen, class F> bool visit_accumulation(DType x, DType out, F&& f) {
  return visit_dtype(x, [&](auto tag) {
    using In = typename decltype(tag)::type;
    if constexpr (FloatOnly && std::is_integral_v<In>) {
      return false;
    } else {
      if constexpr (!std::is_same_v<In, bool>)
        if (out == x) return f(tag, tag), true;
      if constexpr (Widen && std::is_integral_v<In> && !std::is_same_v<default_sum_t<In>, In>)
        if (out == dtype_of<default_sum_t<In>>()) return f(tag, Tag<default_sum_t<In>>{}), true;
      if constexpr (std::is_same_v<In, float>)
        if (out == DType::Float64) return f(tag, Tag<double>{}), true;
      return false;
    }
  });
}

}  // namespace xrt::cpu
