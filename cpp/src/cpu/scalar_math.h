// cpp/src/cpu/scalar_math.h: the scalar function behind every elementwise op, one struct
// per op with `apply` overloads for the kinds of compute types it accepts (a kernel
// instantiates only the overloads that exist: see `applicable` in elementwise_loops.h).
//
// Compute types: bool, the integer types, float (also for float16/bfloat16), double and
// std::complex<float/double>. Real functions come from the C library, whose IEEE special
// cases (C99 Annex F) are the standard's. Complex functions come from the C library's
// c* functions (Annex G) except where the standard asks for something the C library
// does not have (expm1, log1p) or defines differently; each such place has a Note.
#pragma once
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "xpuruntime/scalar.h"

// The kernels are compiled once per target ISA (math_kernels*.cpp); each copy lives in its
// own namespace so that the copies never merge at link time.
#ifndef XRT_ISA_NS
#define XRT_ISA_NS baseline
#endif

#include "cpu/complex_quotient.h"

namespace xrt::cpu::XRT_ISA_NS::math {

using detail::is_complex_v;

template <class C> concept Boolean = std::is_same_v<C, bool>;
template <class C> concept Int = std::is_integral_v<C> && !std::is_same_v<C, bool>;
template <class C> concept Real = std::is_floating_point_v<C>;
template <class C> concept Complex = is_complex_v<C>;
template <class C> concept RealNumber = Int<C> || Real<C>;
template <class C> concept Number = Int<C> || Real<C> || Complex<C>;
template <class C> concept Inexact = Real<C> || Complex<C>;

template <class C> C nan_of() { return std::numeric_limits<C>::quiet_NaN(); }

// ---- Unary ---------------------------------------------------------------------------

struct abs {
  template <Int C> static C apply(C x) {
    if constexpr (std::is_signed_v<C>) return x < 0 ? C(-x) : x;
    else return x;
  }
  template <Real C> static C apply(C x) { return std::fabs(x); }
  template <Complex C> static auto apply(C x) { return std::abs(x); }  // hypot: inf wins over nan
};

#define XRT_INEXACT_FN(op, fn)                                  \
  struct op {                                                   \
    template <Inexact C> static C apply(C x) { return fn(x); }  \
  };
XRT_INEXACT_FN(acos, std::acos)
XRT_INEXACT_FN(acosh, std::acosh)
XRT_INEXACT_FN(asin, std::asin)
XRT_INEXACT_FN(asinh, std::asinh)
XRT_INEXACT_FN(atan, std::atan)
XRT_INEXACT_FN(atanh, std::atanh)
XRT_INEXACT_FN(cos, std::cos)
XRT_INEXACT_FN(cosh, std::cosh)
XRT_INEXACT_FN(exp, std::exp)
XRT_INEXACT_FN(log, std::log)
XRT_INEXACT_FN(sin, std::sin)
XRT_INEXACT_FN(sinh, std::sinh)
XRT_INEXACT_FN(sqrt, std::sqrt)
#undef XRT_INEXACT_FN

// Note: glibc's ctanh(+inf + iy) is 1 + i0*sin(2y), whose zero is negative when sin 2y < 0;
// the standard wants 1 + 0j for every positive finite y (the zero takes y's sign). tan's
// special cases are defined through tanh (tan(z) = -i tanh(iz)), so it follows.
template <Complex C> C standard_ctanh(C z) {
  using R = typename C::value_type;
  if (std::isinf(z.real()) && std::isfinite(z.imag()))
    return C(std::copysign(R(1), z.real()), std::copysign(R(0), z.imag()));
  return std::tanh(z);
}
struct tanh {
  template <Real C> static C apply(C x) { return std::tanh(x); }
  template <Complex C> static C apply(C z) { return standard_ctanh(z); }
};
struct tan {
  template <Real C> static C apply(C x) { return std::tan(x); }
  template <Complex C> static C apply(C z) {
    C t = standard_ctanh(C(-z.imag(), z.real()));  // tanh(iz)
    return C(t.imag(), -t.real());                  // -i tanh(iz)
  }
};

// Not in the standard: the error function and GELU (x Φ(x), Φ the normal distribution's
// CDF; gelu_tanh is its tanh approximation), which inference and training graphs use
// (ONNX Erf and Gelu, torch's gelu). One kernel each instead of the ten ops a composition
// from the standard's functions takes.
struct erf {
  template <Real C> static C apply(C x) { return std::erf(x); }
};
struct gelu {
  template <Real C> static C apply(C x) {
    return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
  }
};
struct gelu_tanh {
  template <Real C> static C apply(C x) {
    // sqrt(2 / pi) (x + 0.044715 x^3)
    const C inner = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + std::tanh(inner));
  }
};

struct expm1 {
  template <Real C> static C apply(C x) { return std::expm1(x); }
  // Note: C has no cexpm1. For finite z = a + bi, expm1(z) = expm1(a) cos(b) - 2 sin²(b/2)
  // + i e^a sin(b) keeps the accuracy of expm1 near zero; for non-finite inputs the
  // standard's cases are those of exp(z) - 1 with the real part of an infinite exp kept.
  template <Complex C> static C apply(C z) {
    using R = typename C::value_type;
    R a = z.real(), b = z.imag();
    if constexpr (std::is_same_v<R, float>) {
      // In double, then rounded once: e^a overflows float while e^a cos(b) may not.
      if (std::isfinite(a) && std::isfinite(b) && b != 0) {
        std::complex<double> r = apply(std::complex<double>(a, b));
        return C(R(r.real()), R(r.imag()));
      }
    }
    if (std::isfinite(a) && std::isfinite(b)) {
      if (a == 0 && b == 0) return C(R(0), b);  // the standard: +0 for either zero
      if (b == 0) return C(std::expm1(a), b);
      if (a > 700) {  // e^a overflows before the products do: take it in two halves
        R h = std::exp(a / 2);
        return C(h * std::cos(b) * h, h * std::sin(b) * h);
      }
      R s = std::sin(b / 2);
      return C(std::expm1(a) * std::cos(b) - 2 * s * s, std::exp(a) * std::sin(b));
    }
    C e = std::exp(z);
    return C(e.real() - 1, e.imag());
  }
};

struct log1p {
  template <Real C> static C apply(C x) { return std::log1p(x); }
  // Note: log(1 + z) loses the digits of a small z; the real part is computed as
  // log1p(2a + a² + b²) / 2 where that is accurate, the imaginary part as atan2(b, 1 + a).
  template <Complex C> static C apply(C z) {
    using R = typename C::value_type;
    R a = z.real(), b = z.imag();
    if (std::isfinite(a) && std::isfinite(b) && std::fabs(a) < R(0.5) && std::fabs(b) < R(0.5)) {
      R re = std::log1p(a * (2 + a) + b * b) / 2;
      return C(re, std::atan2(b, 1 + a));
    }
    if (std::isnan(a) || std::isnan(b)) return std::log(C(a + 1, b));
    return std::log(C(a + 1, b));
  }
};

// log(z) / log(base) for the complex log2/log10, given 1 / log(base).
template <Complex C> C scaled_log(C z, typename C::value_type inverse_log_base) {
  C l = std::log(z);
  return C(l.real() * inverse_log_base, l.imag() * inverse_log_base);
}

struct log2 {
  template <Real C> static C apply(C x) { return std::log2(x); }
  template <Complex C> static C apply(C z) {
    return scaled_log(z, typename C::value_type(1.442695040888963407359924681001892137L));
  }
};

struct log10 {
  template <Real C> static C apply(C x) { return std::log10(x); }
  template <Complex C> static C apply(C z) {
    return scaled_log(z, typename C::value_type(0.434294481903251827651128918916605082L));
  }
};

struct bitwise_invert {
  template <Boolean C> static C apply(C x) { return !x; }
  template <Int C> static C apply(C x) { return C(~x); }
};

// ceil/floor/trunc/round leave integers as they are.
#define XRT_ROUNDING_FN(op, fn)                            \
  struct op {                                              \
    template <Int C> static C apply(C x) { return x; }     \
    template <Real C> static C apply(C x) { return fn(x); } \
  };
XRT_ROUNDING_FN(ceil, std::ceil)
XRT_ROUNDING_FN(floor, std::floor)
XRT_ROUNDING_FN(trunc, std::trunc)
#undef XRT_ROUNDING_FN

struct round {
  template <Int C> static C apply(C x) { return x; }
  template <Real C> static C apply(C x) { return std::nearbyint(x); }  // halves to even
  template <Complex C> static C apply(C z) {
    return C(std::nearbyint(z.real()), std::nearbyint(z.imag()));
  }
};

struct conj {
  template <RealNumber C> static C apply(C x) { return x; }
  template <Complex C> static C apply(C z) { return C(z.real(), -z.imag()); }
};

struct real {
  template <RealNumber C> static C apply(C x) { return x; }
  template <Complex C> static auto apply(C z) { return z.real(); }
};

struct imag {
  template <RealNumber C> static C apply(C) { return C(0); }
  template <Complex C> static auto apply(C z) { return z.imag(); }
};

struct isfinite {
  template <Int C> static bool apply(C) { return true; }
  template <Real C> static bool apply(C x) { return std::isfinite(x); }
  template <Complex C> static bool apply(C z) {
    return std::isfinite(z.real()) && std::isfinite(z.imag());
  }
};

struct isinf {
  template <Int C> static bool apply(C) { return false; }
  template <Real C> static bool apply(C x) { return std::isinf(x); }
  template <Complex C> static bool apply(C z) { return std::isinf(z.real()) || std::isinf(z.imag()); }
};

struct isnan {
  template <Int C> static bool apply(C) { return false; }
  template <Real C> static bool apply(C x) { return std::isnan(x); }
  template <Complex C> static bool apply(C z) { return std::isnan(z.real()) || std::isnan(z.imag()); }
};

struct logical_not {
  template <Boolean C> static bool apply(C x) { return !x; }
};

struct negative {
  template <Number C> static C apply(C x) { return C(-x); }
};

struct positive {
  template <Number C> static C apply(C x) { return x; }
};

struct reciprocal {
  template <Inexact C> static C apply(C x) {
    if constexpr (std::is_same_v<C, std::complex<double>>)
      return complex_quotient(1.0, x);  // Note [Complex quotient]
    else
      return C(1) / x;
  }
};

struct sign {
  template <Int C> static C apply(C x) {
    if constexpr (std::is_signed_v<C>) return C((x > 0) - (x < 0));
    else return C(x > 0);
  }
  // ±0 gives +0 (the standard), NaN gives NaN.
  template <Real C> static C apply(C x) { return x > 0 ? C(1) : x < 0 ? C(-1) : x == 0 ? C(0) : x; }
  // Note: the standard defines sign(z) = z / |z|, 0 for z == 0, NaN for a NaN component;
  // an infinite component makes |z| infinite, which the C library's division turns into
  // the NaN the standard lists for those cases.
  template <Complex C> static C apply(C z) {
    using R = typename C::value_type;
    R a = z.real(), b = z.imag();
    if (std::isnan(a) || std::isnan(b)) return C(nan_of<R>(), nan_of<R>());
    if (a == 0 && b == 0) return C(0, 0);
    R m = std::hypot(a, b);
    return C(a / m, b / m);
  }
};

// Note: read from the bits; GCC 12 crashes vectorising std::signbit on float.
struct signbit {
  template <Real C> static bool apply(C x) {
    using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
    return (std::bit_cast<U>(x) >> (8 * sizeof(C) - 1)) != 0;
  }
};

struct square {
  template <Number C> static C apply(C x) { return C(x * x); }
};

// ---- Binary --------------------------------------------------------------------------

struct add {
  template <Number C> static C apply(C a, C b) { return C(a + b); }
};
struct subtract {
  template <Number C> static C apply(C a, C b) { return C(a - b); }
};
struct multiply {
  template <Number C> static C apply(C a, C b) { return C(a * b); }
};
struct divide {
  template <Inexact C> static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, std::complex<double>>)
      return complex_quotient(a, b);  // Note [Complex quotient]
    else
      return a / b;
  }
};

struct atan2 {
  template <Real C> static C apply(C a, C b) { return std::atan2(a, b); }
};
struct copysign {
  template <Real C> static C apply(C a, C b) { return std::copysign(a, b); }
};
struct hypot {
  template <Real C> static C apply(C a, C b) { return std::hypot(a, b); }
};

// nextafter is applied on the stored type, not the compute type (see elementwise_loops.h):
// float16 and bfloat16 step by their own ulp.
struct nextafter {
  template <Real C> static C apply(C a, C b) { return std::nextafter(a, b); }
};

struct logaddexp {
  template <Real C> static C apply(C a, C b) {
    if (std::isnan(a) || std::isnan(b)) return nan_of<C>();
    if (a == b) return a + std::log(C(2));  // also +inf, +inf and -inf, -inf
    C m = a > b ? a : b;
    return m + std::log1p(std::exp(-std::fabs(a - b)));
  }
};

struct bitwise_and {
  template <Boolean C> static C apply(C a, C b) { return a && b; }
  template <Int C> static C apply(C a, C b) { return C(a & b); }
};
struct bitwise_or {
  template <Boolean C> static C apply(C a, C b) { return a || b; }
  template <Int C> static C apply(C a, C b) { return C(a | b); }
};
struct bitwise_xor {
  template <Boolean C> static C apply(C a, C b) { return a != b; }
  template <Int C> static C apply(C a, C b) { return C(a ^ b); }
};

// Note: C++ leaves shifts by a negative amount or by the width or more undefined. The
// standard leaves negative shifts implementation-defined; here a shift by any amount at
// least the width (or negative) behaves as the mathematical shift would: 0, or -1 for a
// negative value shifted right.
struct bitwise_left_shift {
  template <Int C> static C apply(C a, C b) {
    constexpr int bits = 8 * sizeof(C);
    if (b < 0 || static_cast<uint64_t>(b) >= bits) return C(0);
    using U = std::make_unsigned_t<C>;
    return C(static_cast<U>(static_cast<U>(a) << b));
  }
};
struct bitwise_right_shift {
  template <Int C> static C apply(C a, C b) {
    constexpr int bits = 8 * sizeof(C);
    if (b < 0 || static_cast<uint64_t>(b) >= bits) return a < 0 ? C(-1) : C(0);
    return C(a >> b);
  }
};

struct equal {
  template <class C> static bool apply(C a, C b) { return a == b; }
};
struct not_equal {
  template <class C> static bool apply(C a, C b) { return a != b; }
};
struct greater {
  template <RealNumber C> static bool apply(C a, C b) { return a > b; }
};
struct greater_equal {
  template <RealNumber C> static bool apply(C a, C b) { return a >= b; }
};
struct less {
  template <RealNumber C> static bool apply(C a, C b) { return a < b; }
};
struct less_equal {
  template <RealNumber C> static bool apply(C a, C b) { return a <= b; }
};

struct logical_and {
  template <Boolean C> static bool apply(C a, C b) { return a && b; }
};
struct logical_or {
  template <Boolean C> static bool apply(C a, C b) { return a || b; }
};
struct logical_xor {
  template <Boolean C> static bool apply(C a, C b) { return a != b; }
};

// NaN propagates (unlike fmax/fmin).
struct maximum {
  template <Int C> static C apply(C a, C b) { return a > b ? a : b; }
  template <Real C> static C apply(C a, C b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
};
struct minimum {
  template <Int C> static C apply(C a, C b) { return a < b ? a : b; }
  template <Real C> static C apply(C a, C b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
};

// Integer division and remainder round towards negative infinity (Python's rule). The
// standard leaves division by zero to the implementation: 0 here, without a trap; the
// one overflowing quotient (INT_MIN // -1) wraps.
struct floor_divide {
  template <Int C> static C apply(C a, C b) {
    if (b == 0) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return C(static_cast<std::make_unsigned_t<C>>(0) - static_cast<std::make_unsigned_t<C>>(a));
      C q = C(a / b);
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    } else {
      return C(a / b);
    }
  }
  // Note: floor(a / b) would round a / b first and can land one off; the quotient is
  // derived from the exact remainder instead (as CPython's float floor division does),
  // and the standard's special cases for infinities and zeros follow from the branches.
  template <Real C> static C apply(C a, C b) {
    if (b == 0 || std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
      return std::floor(a / b);
    }
    C mod = std::fmod(a, b);
    C div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= C(1);
    if (div == 0) return std::copysign(C(0), a / b);
    C floordiv = std::floor(div);
    if (div - floordiv > C(0.5)) floordiv += C(1);
    return floordiv;
  }
};

struct remainder {
  template <Int C> static C apply(C a, C b) {
    if (b == 0) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return C(0);
      C r = C(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = C(r + b);
      return r;
    } else {
      return C(a % b);
    }
  }
  // The result has the sign of the divisor (Python's rule), zero included.
  template <Real C> static C apply(C a, C b) {
    if (std::isnan(a) || std::isnan(b) || std::isinf(a) || b == 0) return nan_of<C>();
    if (std::isinf(b)) {
      if (a == 0) return std::copysign(C(0), b);
      return (a < 0) == (b < 0) ? a : b;
    }
    C r = std::fmod(a, b);
    if (r == 0) return std::copysign(C(0), b);
    if ((r < 0) != (b < 0)) r += b;
    return r;
  }
};

struct pow {
  // Integer powers by squaring, wrapping like the other integer ops. A negative exponent
  // has no integer result; the standard leaves it to the implementation: 1 / a rounded
  // towards zero (so 0 unless a is 1 or -1; 0 for a == 0 too, where there is no trap).
  template <Int C> static C apply(C a, C b) {
    using U = std::make_unsigned_t<C>;
    if constexpr (std::is_signed_v<C>) {
      if (b < 0) {
        if (a == 1) return C(1);
        if (a == -1) return (b & 1) ? C(-1) : C(1);
        return C(0);
      }
    }
    U result = 1, base = static_cast<U>(a);
    for (auto e = static_cast<std::make_unsigned_t<C>>(b); e; e >>= 1) {
      if (e & 1) result = static_cast<U>(result * base);
      base = static_cast<U>(base * base);
    }
    return static_cast<C>(result);
  }
  template <Real C> static C apply(C a, C b) { return std::pow(a, b); }
  // Note: the standard defines complex pow as exp(b * log(a)) with a few exact cases: a
  // zero exponent gives 1 (even for a NaN base), and a real exponent of a real base keeps
  // the real power when it exists.
  // complex64 goes through complex128, as on CUDA: exp amplifies the float error of
  // b * log(a) by |b log a| (x ** 2 of 3e3 was 10 ulp off in float).
  template <Complex C> static C apply(C a, C b) {
    using R = typename C::value_type;
    if constexpr (std::is_same_v<R, float>) {
      return C(apply(std::complex<double>(a), std::complex<double>(b)));
    }
    if (b.real() == 0 && b.imag() == 0) return C(1, 0);
    if (a.real() == 0 && a.imag() == 0 && b.imag() == 0 && b.real() > 0) return C(0, 0);
    if (a.imag() == 0 && b.imag() == 0 && a.real() > 0 && !std::isnan(b.real()))
      return C(std::pow(a.real(), b.real()), R(0));
    return std::exp(b * std::log(a));
  }
};

}  // namespace xrt::cpu::XRT_ISA_NS::math
