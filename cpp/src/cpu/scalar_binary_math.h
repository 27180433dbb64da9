// cpp/src/cpu/scalar_binary_math.h: the scalar functions behind the binary elementwise ops,
// one struct per op as in cpu/scalar_math.h (whose compute types, concepts and C-library
// rules hold here too).
#pragma once
#include "cpu/scalar_math.h"

namespace xrt::cpu::XRT_ISA_NS::math {

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
