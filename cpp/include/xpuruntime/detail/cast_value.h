// cpp/include/xpuruntime/detail/cast_value.h: the one element-conversion rule, as templates.
#pragma once
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "xpuruntime/half.h"

namespace xrt {
namespace detail {

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<std::complex<T>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<T>::value;
template <class T> inline constexpr bool is_half_v =
    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

/// The type arithmetic on T happens in: float for the 16-bit floats, T otherwise.
template <class T> using compute_t = std::conditional_t<is_half_v<T>, float, T>;

template <class Int, class F> Int float_to_int(F f) {
  if (std::isnan(f)) return 0;
  constexpr F lo = static_cast<F>(std::numeric_limits<Int>::min());
  constexpr F hi = static_cast<F>(std::numeric_limits<Int>::max());
  if (f <= lo) return std::numeric_limits<Int>::min();
  if (f >= hi) return std::numeric_limits<Int>::max();
  return static_cast<Int>(f);
}

}  // namespace detail

template <class To, class From> To cast_value(From v) {
  using namespace detail;
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half_v<From>) {
    return cast_value<To>(static_cast<float>(v));
  } else if constexpr (is_complex_v<From>) {
    if constexpr (std::is_same_v<To, bool>) return v.real() != 0 || v.imag() != 0;
    else if constexpr (is_complex_v<To>) return To(static_cast<typename To::value_type>(v.real()),
                                                  static_cast<typename To::value_type>(v.imag()));
    else return cast_value<To>(v.real());
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_complex_v<To>) {
    return To(cast_value<typename To::value_type>(v), 0);
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace xrt
