// cpp/kernels/xrt/elementwise_ops.cuh: the scalar function behind every elementwise op on
// the device, one struct per row of XRT_UNARY_OPS / XRT_BINARY_OPS (same names), the twin
// of cpp/src/cpu/scalar_math.h: the same formulas and choices where the standard leaves
// one open, so that CUDA and the CPU agree.
//
// `apply` takes the compute type (bool, the integers, float for float16/bfloat16 too,
// double, Complex<float/double>); ops marked `on_storage` take the stored 16-bit floats as
// they are (nextafter steps by their own ulp). The generator instantiates an op only for
// the dtypes its category accepts (elementwise.h), so `apply` need not reject the others.
#pragma once
#include "xrt/complex_math.cuh"

namespace xrt::ew::op {

// Integer arithmetic wraps: it is done in an unsigned type at least as wide as int.
template <class T> using wrap_t = conditional_t<sizeof(T) == 8, u64, u32>;
template <class T> XRT_FN T wrap(wrap_t<T> v) { return static_cast<T>(v); }
template <class T> XRT_FN wrap_t<T> widen_int(T v) { return static_cast<wrap_t<T>>(v); }

template <class T> using real_of_t = decltype(T::re);

// ---- Unary ---------------------------------------------------------------------------

struct abs {
  template <class T> XRT_FN static auto apply(T x) {
    if constexpr (is_complex<T>) return cabs(x);
    else if constexpr (is_real_float<T>) return fabs(x);
    else if constexpr (is_signed_int<T>) return x < 0 ? wrap<T>(0u - widen_int(x)) : x;
    else return x;
  }
};

// Functions of floating-point numbers: the real function, or the complex one (c prefix).
#define XRT_INEXACT_FN(name)                                                   \
  struct name {                                                                \
    template <class T> XRT_FN static T apply(T x) {                            \
      if constexpr (is_complex<T>) return c##name(x);                          \
      else return ::xrt::ew::name(x);                                          \
    }                                                                          \
  };
XRT_INEXACT_FN(acos)
XRT_INEXACT_FN(acosh)
XRT_INEXACT_FN(asin)
XRT_INEXACT_FN(asinh)
XRT_INEXACT_FN(atan)
XRT_INEXACT_FN(atanh)
XRT_INEXACT_FN(cos)
XRT_INEXACT_FN(cosh)
XRT_INEXACT_FN(exp)
XRT_INEXACT_FN(log)
XRT_INEXACT_FN(sin)
XRT_INEXACT_FN(sinh)
XRT_INEXACT_FN(sqrt)
XRT_INEXACT_FN(tan)
XRT_INEXACT_FN(tanh)
#undef XRT_INEXACT_FN

// Note: C has no cexpm1; the same formula as the CPU (scalar_math.h), in double:
// expm1(a) cos(b) - 2 sin²(b/2) + i e^a sin(b) keeps the digits of expm1 near zero, and the
// non-finite cases are those of exp(z) - 1.
XRT_CALLED_FN Complex<double> cexpm1(Complex<double> z) {
  double a = z.re, b = z.im;
  if (isfinite(a) && isfinite(b)) {
    if (a == 0 && b == 0) return {0.0, b};
    if (b == 0) return {::xrt::ew::expm1(a), b};
    if (a > 700) {  // e^a overflows before the products do: take it in two halves
      double h = ::xrt::ew::exp(a / 2);
      return {h * ::xrt::ew::cos(b) * h, h * ::xrt::ew::sin(b) * h};
    }
    double s = ::xrt::ew::sin(b / 2);
    return {::xrt::ew::expm1(a) * ::xrt::ew::cos(b) - 2 * s * s,
            ::xrt::ew::exp(a) * ::xrt::ew::sin(b)};
  }
  Complex<double> e = cexp(z);
  return {e.re - 1, e.im};
}
XRT_FN Complex<float> cexpm1(Complex<float> z) { return narrow<float>(cexpm1(widen(z))); }

struct expm1 {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_complex<T>) return cexpm1(x);
    else return ::xrt::ew::expm1(x);
  }
};

// log(1 + z), with the real part as log1p(2a + a² + b²) / 2 near zero (as on the CPU).
XRT_CALLED_FN Complex<double> clog1p(Complex<double> z) {
  double a = z.re, b = z.im;
  if (isfinite(a) && isfinite(b) && fabs(a) < 0.5 && fabs(b) < 0.5)
    return {::xrt::ew::log1p(a * (2 + a) + b * b) / 2, ::xrt::ew::atan2(b, 1 + a)};
  return clog(Complex<double>{a + 1, b});
}
XRT_FN Complex<float> clog1p(Complex<float> z) { return narrow<float>(clog1p(widen(z))); }

struct log1p {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_complex<T>) return clog1p(x);
    else return ::xrt::ew::log1p(x);
  }
};

// log(z) / log(base), given 1 / log(base).
template <class R> XRT_FN Complex<R> scaled_log(Complex<R> z, double inverse_log_base) {
  Complex<double> l = clog(widen(z));
  return narrow<R>(Complex<double>{l.re * inverse_log_base, l.im * inverse_log_base});
}

struct log2 {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_complex<T>) return scaled_log(x, 1.442695040888963407359924681001892137);
    else return ::xrt::ew::log2(x);
  }
};

struct log10 {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_complex<T>) return scaled_log(x, 0.434294481903251827651128918916605082);
    else return ::xrt::ew::log10(x);
  }
};

struct bitwise_invert {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_bool<T>) return !x;
    else return static_cast<T>(~x);
  }
};

// ceil/floor/trunc/round leave integers as they are.
#define XRT_ROUNDING_FN(name, fn)                                     \
  struct name {                                                       \
    template <class T> XRT_FN static T apply(T x) {                   \
      if constexpr (is_int<T>) return x;                              \
      else return ::xrt::ew::fn(x);                                   \
    }                                                                 \
  };
XRT_ROUNDING_FN(ceil, ceil)
XRT_ROUNDING_FN(floor, floor)
XRT_ROUNDING_FN(trunc, trunc)
#undef XRT_ROUNDING_FN

struct round {  // halves to even
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_complex<T>) return T{rint(x.re), rint(x.im)};
    else if constexpr (is_int<T>) return x;
    else return rint(x);
  }
};

struct conj {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_complex<T>) return T{x.re, -x.im};
    else return x;
  }
};

struct real {
  template <class T> XRT_FN static auto apply(T x) {
    if constexpr (is_complex<T>) return x.re;
    else return x;
  }
};

struct imag {
  template <class T> XRT_FN static auto apply(T x) {
    if constexpr (is_complex<T>) return x.im;
    else return T(0);
  }
};

struct isfinite {
  template <class T> XRT_FN static bool apply(T x) {
    if constexpr (is_complex<T>) return ::xrt::ew::isfinite(x.re) && ::xrt::ew::isfinite(x.im);
    else if constexpr (is_real_float<T>) return ::xrt::ew::isfinite(x);
    else return true;
  }
};

struct isinf {
  template <class T> XRT_FN static bool apply(T x) {
    if constexpr (is_complex<T>) return ::xrt::ew::isinf(x.re) || ::xrt::ew::isinf(x.im);
    else if constexpr (is_real_float<T>) return ::xrt::ew::isinf(x);
    else return false;
  }
};

struct isnan {
  template <class T> XRT_FN static bool apply(T x) {
    if constexpr (is_complex<T>) return ::xrt::ew::isnan(x.re) || ::xrt::ew::isnan(x.im);
    else if constexpr (is_real_float<T>) return ::xrt::ew::isnan(x);
    else return false;
  }
};

struct logical_not {
  XRT_FN static bool apply(bool x) { return !x; }
};

struct negative {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_int<T>) return wrap<T>(0u - widen_int(x));
    else return -x;
  }
};

struct positive {
  template <class T> XRT_FN static T apply(T x) { return x; }
};

struct reciprocal {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_complex<T>) return T{1, 0} / x;
    else return T(1) / x;
  }
};

struct sign {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_complex<T>) {
      // Note: z / |z| as on the CPU: an infinite part makes |z| infinite and the quotient NaN.
      using R = real_of_t<T>;
      if (::xrt::ew::isnan(x.re) || ::xrt::ew::isnan(x.im))
        return T{limits<R>::nan(), limits<R>::nan()};
      if (x.re == 0 && x.im == 0) return T{0, 0};
      R m = cabs(x);
      return T{x.re / m, x.im / m};
    } else if constexpr (is_real_float<T>) {
      return x > 0 ? T(1) : x < 0 ? T(-1) : x == 0 ? T(0) : x;  // ±0 gives +0, NaN gives NaN
    } else if constexpr (is_signed_int<T>) {
      return static_cast<T>((x > 0) - (x < 0));
    } else {
      return static_cast<T>(x > 0);
    }
  }
};

struct signbit {
  template <class T> XRT_FN static bool apply(T x) { return ::xrt::ew::signbit(x); }
};

struct square {
  template <class T> XRT_FN static T apply(T x) {
    if constexpr (is_int<T>) return wrap<T>(widen_int(x) * widen_int(x));
    else return x * x;
  }
};

// ---- Binary --------------------------------------------------------------------------

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
