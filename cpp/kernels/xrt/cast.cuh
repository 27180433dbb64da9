// cpp/kernels/xrt/cast.cuh: cast_value, the device twin of the host's one conversion rule
// (cpp/include/xpuruntime/detail/cast_value.h): complex to real keeps the real part,
// anything to bool is "!= 0", float to int truncates after clamping to the target's range
// (NaN becomes 0), 16-bit floats go through float. Keep the two in step.
#pragma once
#include "xrt/common.cuh"

namespace xrt {

template <class T> struct is_complex { static constexpr bool value = false; };
template <class T> struct is_complex<complex<T>> { static constexpr bool value = true; };
template <class T> struct is_half { static constexpr bool value = false; };
template <> struct is_half<float16> { static constexpr bool value = true; };
template <> struct is_half<bfloat16> { static constexpr bool value = true; };
template <class T> struct is_floating { static constexpr bool value = false; };
template <> struct is_floating<float> { static constexpr bool value = true; };
template <> struct is_floating<double> { static constexpr bool value = true; };

/// The range of each integer type (bool excluded: casts to bool never clamp).
template <class T> struct int_limits { static constexpr bool is_integer = false; };
#define XRT_INT_LIMITS(T, LO, HI)                            \
  template <> struct int_limits<T> {                         \
    static constexpr bool is_integer = true;                 \
    __device__ static constexpr T min() { return LO; }       \
    __device__ static constexpr T max() { return HI; }       \
  };
XRT_INT_LIMITS(int8_t, -128, 127)
XRT_INT_LIMITS(int16_t, -32768, 32767)
XRT_INT_LIMITS(int32_t, -2147483647 - 1, 2147483647)
XRT_INT_LIMITS(int64_t, -9223372036854775807ll - 1, 9223372036854775807ll)
XRT_INT_LIMITS(uint8_t, 0, 255)
XRT_INT_LIMITS(uint16_t, 0, 65535)
XRT_INT_LIMITS(uint32_t, 0, 4294967295u)
XRT_INT_LIMITS(uint64_t, 0, 18446744073709551615ull)
#undef XRT_INT_LIMITS

template <class T> struct is_integer { static constexpr bool value = int_limits<T>::is_integer; };

/// Float to integer: NaN is 0, values past either end are clamped, others truncated.
/// Note: the bounds are the integer limits rounded to F, as on the host (for int64 the
/// upper one is 2^63, so f >= it is out of range, and so is equality).
template <class Int, class F> __device__ __forceinline__ Int float_to_int(F f) {
  if (f != f) return 0;
  const F lo = static_cast<F>(int_limits<Int>::min());
  const F hi = static_cast<F>(int_limits<Int>::max());
  if (f <= lo) return int_limits<Int>::min();
  if (f >= hi) return int_limits<Int>::max();
  return static_cast<Int>(f);
}

template <class To, class From> __device__ __forceinline__ To cast_value(From v) {
  if constexpr (is_same<To, From>::value) {
    return v;
  } else if constexpr (is_half<From>::value) {
    return cast_value<To>(static_cast<float>(v));
  } else if constexpr (is_complex<From>::value) {
    if constexpr (is_same<To, bool>::value) {
      return v.re != 0 || v.im != 0;
    } else if constexpr (is_complex<To>::value) {
      typedef decltype(To().re) R;
      return To(static_cast<R>(v.re), static_cast<R>(v.im));
    } else {
      return cast_value<To>(v.re);
    }
  } else if constexpr (is_same<To, bool>::value) {
    return v != From(0);
  } else if constexpr (is_complex<To>::value) {
    typedef decltype(To().re) R;
    return To(cast_value<R>(v), R(0));
  } else if constexpr (is_half<To>::value) {
    return To(static_cast<float>(v));
  } else if constexpr (is_integer<To>::value && is_floating<From>::value) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace xrt
