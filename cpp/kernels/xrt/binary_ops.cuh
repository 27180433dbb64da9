// cpp/kernels/xrt/binary_ops.cuh: the scalar function behind every binary elementwise op on
// the device, one struct per row of XRT_BINARY_OPS (same names), the twin of
// cpp/src/cpu/scalar_binary_math.h (see elementwise_ops.cuh for the contract).
#pragma once
#include "xrt/elementwise_common.cuh"

namespace xrt::ew::op {

struct add {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_int<T>) return wrap<T>(widen_int(a) + widen_int(b));
    else return a + b;
  }
};
struct subtract {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_int<T>) return wrap<T>(widen_int(a) - widen_int(b));
    else return a - b;
  }
};
struct multiply {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_int<T>) return wrap<T>(widen_int(a) * widen_int(b));
    else return a * b;
  }
};
struct divide {
  template <class T> XRT_FN static T apply(T a, T b) { return a / b; }
};

struct atan2 {
  template <class T> XRT_FN static T apply(T a, T b) { return ::xrt::ew::atan2(a, b); }
};
struct copysign {
  template <class T> XRT_FN static T apply(T a, T b) { return ::xrt::ew::copysign(a, b); }
};
struct hypot {
  template <class T> XRT_FN static T apply(T a, T b) { return ::xrt::ew::hypot(a, b); }
};

// nextafter steps by the ulp of the stored type: for float16/bfloat16 that is a step of the
// 16-bit pattern (sign-magnitude), not of the float it computes in.
struct nextafter {
  static constexpr bool on_storage = true;
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_half<T>) {
      float fa = to_float(a), fb = to_float(b);
      if (fa != fa || fb != fb) return from_float<T>(limits<float>::nan());
      if (fa == fb) return b;
      if (fa == 0) return T{static_cast<u16>(fb < 0 ? 0x8001u : 0x0001u)};
      return T{static_cast<u16>((fa < fb) == (fa > 0) ? a.bits + 1 : a.bits - 1)};
    } else {
      return ::xrt::ew::nextafter(a, b);
    }
  }
};

struct logaddexp {
  template <class T> XRT_FN static T apply(T a, T b) {
    if (::xrt::ew::isnan(a) || ::xrt::ew::isnan(b)) return limits<T>::nan();
    if (a == b) return a + ::xrt::ew::log(T(2));  // also +inf, +inf and -inf, -inf
    T m = a > b ? a : b;
    return m + ::xrt::ew::log1p(::xrt::ew::exp(-fabs(a - b)));
  }
};

struct bitwise_and {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_bool<T>) return a && b;
    else return static_cast<T>(a & b);
  }
};
struct bitwise_or {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_bool<T>) return a || b;
    else return static_cast<T>(a | b);
  }
};
struct bitwise_xor {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_bool<T>) return a != b;
    else return static_cast<T>(a ^ b);
  }
};

// A shift by at least the width (or by a negative amount) is the mathematical shift by a
// huge amount: 0, or -1 for a negative value shifted right (the CPU's choice).
template <class T> XRT_FN bool shift_out_of_range(T b) {
  if constexpr (is_signed_int<T>)
    if (b < 0) return true;
  return static_cast<u64>(b) >= 8 * sizeof(T);
}
struct bitwise_left_shift {
  template <class T> XRT_FN static T apply(T a, T b) {
    if (shift_out_of_range(b)) return T(0);
    using U = make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<wrap_t<T>>(static_cast<U>(a)) << b));
  }
};
struct bitwise_right_shift {
  template <class T> XRT_FN static T apply(T a, T b) {
    if (shift_out_of_range(b)) {
      if constexpr (is_signed_int<T>) return a < 0 ? T(-1) : T(0);
      else return T(0);
    }
    return static_cast<T>(a >> b);
  }
};

template <class T> XRT_FN bool equal_values(T a, T b) {
  if constexpr (is_complex<T>) return a.re == b.re && a.im == b.im;
  else return a == b;
}
struct equal {
  template <class T> XRT_FN static bool apply(T a, T b) { return equal_values(a, b); }
};
struct not_equal {
  template <class T> XRT_FN static bool apply(T a, T b) { return !equal_values(a, b); }
};
struct greater {
  template <class T> XRT_FN static bool apply(T a, T b) { return a > b; }
};
struct greater_equal {
  template <class T> XRT_FN static bool apply(T a, T b) { return a >= b; }
};
struct less {
  template <class T> XRT_FN static bool apply(T a, T b) { return a < b; }
};
struct less_equal {
  template <class T> XRT_FN static bool apply(T a, T b) { return a <= b; }
};

struct logical_and {
  XRT_FN static bool apply(bool a, bool b) { return a && b; }
};
struct logical_or {
  XRT_FN static bool apply(bool a, bool b) { return a || b; }
};
struct logical_xor {
  XRT_FN static bool apply(bool a, bool b) { return a != b; }
};

// NaN propagates (unlike fmax/fmin).
struct maximum {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_int<T>) return a > b ? a : b;
    else return a != a ? a : (b != b ? b : (a > b ? a : b));
  }
};
struct minimum {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_int<T>) return a < b ? a : b;
    else return a != a ? a : (b != b ? b : (a < b ? a : b));
  }
};

// Integer division and remainder round towards negative infinity (Python's rule); division
// by zero gives 0 without a trap and INT_MIN // -1 wraps (the CPU's choices).
struct floor_divide {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_int<T>) {
      if (b == 0) return T(0);
      if constexpr (is_signed_int<T>) {
        if (b == T(-1)) return wrap<T>(0u - widen_int(a));
        T q = static_cast<T>(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return q;
      } else {
        return static_cast<T>(a / b);
      }
    } else {
      // The quotient from the exact remainder (as CPython does): floor(a / b) could round.
      if (b == 0 || ::xrt::ew::isnan(a) || ::xrt::ew::isnan(b) || ::xrt::ew::isinf(a) ||
          ::xrt::ew::isinf(b))
        return ::xrt::ew::floor(a / b);
      T mod = fmod(a, b);
      T div = (a - mod) / b;
      if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
      if (div == 0) return ::xrt::ew::copysign(T(0), a / b);
      T floordiv = ::xrt::ew::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    }
  }
};

struct remainder {  // the sign of the divisor, zero included
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_int<T>) {
      if (b == 0) return T(0);
      if constexpr (is_signed_int<T>) {
        if (b == T(-1)) return T(0);
        T r = static_cast<T>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    } else {
      if (::xrt::ew::isnan(a) || ::xrt::ew::isnan(b) || ::xrt::ew::isinf(a) || b == 0)
        return limits<T>::nan();
      if (::xrt::ew::isinf(b)) {
        if (a == 0) return ::xrt::ew::copysign(T(0), b);
        return (a < 0) == (b < 0) ? a : b;
      }
      T r = fmod(a, b);
      if (r == 0) return ::xrt::ew::copysign(T(0), b);
      if ((r < 0) != (b < 0)) r += b;
      return r;
    }
  }
};

// Note: as on the CPU, complex pow is exp(b log a) with the standard's exact cases: a zero
// exponent gives 1 (even for a NaN base), and a real power of a positive real base is real.
XRT_CALLED_FN Complex<double> cpow(Complex<double> a, Complex<double> b) {
  if (b.re == 0 && b.im == 0) return {1.0, 0.0};
  if (a.re == 0 && a.im == 0 && b.im == 0 && b.re > 0) return {0.0, 0.0};
  if (a.im == 0 && b.im == 0 && a.re > 0 && !::xrt::ew::isnan(b.re))
    return {::xrt::ew::pow(a.re, b.re), 0.0};
  return cexp(b * clog(a));
}

struct pow {
  template <class T> XRT_FN static T apply(T a, T b) {
    if constexpr (is_complex<T>) {
      return narrow<real_of_t<T>>(cpow(widen(a), widen(b)));
    } else if constexpr (is_int<T>) {
      // By squaring, wrapping; a negative exponent gives 1 / a rounded towards zero.
      if constexpr (is_signed_int<T>) {
        if (b < 0) {
          if (a == 1) return T(1);
          if (a == -1) return (b & 1) ? T(-1) : T(1);
          return T(0);
        }
      }
      using W = wrap_t<T>;
      W result = 1, base = static_cast<W>(a);
      for (auto e = static_cast<make_unsigned_t<T>>(b); e; e >>= 1) {
        if (e & 1) result = static_cast<W>(result * base);
        base = static_cast<W>(base * base);
      }
      return static_cast<T>(result);
    } else {
      return ::xrt::ew::pow(a, b);
    }
  }
};

}  // namespace xrt::ew::op
