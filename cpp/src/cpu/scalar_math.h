// cpp/src/cpu/scalar_math.h: the scalar function behind every unary elementwise op, one
// struct per op with `apply` overloads for the kinds of compute types it accepts (a kernel
// instantiates only the overloads that exist: see `applicable` in elementwise_loops.h).
//
// Compute types: bool, the integer types, float (also for float16/bfloat16), double and
// std::complex<float/double>. Real functions come from the C library, whose IEEE special
// cases (C99 Annex F) are the standard's. Complex functions come from the C library's
// c* functions (Annex G) except where the standard asks for something the C library
// does not have (expm1, log1p) or defines differently; each such place has a Note.
// This header holds the unary ones; cpu/scalar_binary_math.h the binary ones (as CUDA's
// unary_ops.cuh and binary_ops.cuh).
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

}  // namespace xrt::cpu::XRT_ISA_NS::math
