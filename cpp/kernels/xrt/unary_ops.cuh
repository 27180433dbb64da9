// cpp/kernels/xrt/unary_ops.cuh: the scalar function behind every unary elementwise op on
// the device, one struct per row of XRT_UNARY_OPS (same names), the twin of the unary part
// of cpp/src/cpu/scalar_math.h (see elementwise_ops.cuh for the contract).
#pragma once
#include "xrt/elementwise_common.cuh"

namespace xrt::ew::op {

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

// Not in the standard (scalar_math.h says why they are here): erf and GELU, real only.
struct erf {
  template <class T> XRT_FN static T apply(T x) { return ::xrt::ew::erf(x); }
};
struct gelu {
  template <class T> XRT_FN static T apply(T x) {
    return T(0.5) * x * (T(1) + ::xrt::ew::erf(x * T(0.70710678118654752440)));
  }
};
struct gelu_tanh {
  template <class T> XRT_FN static T apply(T x) {
    const T inner = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
    return T(0.5) * x * (T(1) + ::xrt::ew::tanh(inner));
  }
};

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

}  // namespace xrt::ew::op
