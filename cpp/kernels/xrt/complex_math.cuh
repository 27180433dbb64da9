// cpp/kernels/xrt/complex_math.cuh: the complex elementary functions with the special cases
// of C99 Annex G and the branch cuts the standard states (the type and its arithmetic:
// complex.cuh).
//
// The CPU backend computes these with the C library (glibc), so the special values here
// follow glibc's choices where Annex G leaves a sign unspecified. complex64 functions
// compute in double and round once (exact for the special values, and as accurate as the
// C library's float functions); complex128 functions scale where an intermediate could
// overflow or underflow.
#pragma once
#include "xrt/complex.cuh"

namespace xrt::ew {

template <class R> XRT_FN Complex<double> widen(Complex<R> z) { return {z.re, z.im}; }
template <class R> XRT_FN Complex<R> narrow(Complex<double> z) {
  return {static_cast<R>(z.re), static_cast<R>(z.im)};
}

/// Applies a complex128 function to a complex64 value (computed in double, rounded once).
#define XRT_VIA_DOUBLE(fn)                                                               \
  XRT_FN Complex<float> fn(Complex<float> z) { return narrow<float>(fn(widen(z))); }

template <class R> XRT_FN R pi() { return R(3.14159265358979323846); }
template <class R> XRT_FN R half_pi() { return R(1.57079632679489661923); }
template <class R> XRT_FN R quarter_pi() { return R(0.785398163397448309616); }
template <class R> XRT_FN R ln2() { return R(0.693147180559945309417); }

// ---- Modulus -------------------------------------------------------------------------

/// |z| (hypot: an infinite part wins over a NaN one). complex64 rounds the double modulus,
/// which is the correctly rounded float modulus.
XRT_FN float cabs(Complex<float> z) {
  return static_cast<float>(hypot(static_cast<double>(z.re), static_cast<double>(z.im)));
}
XRT_FN double cabs(Complex<double> z) { return hypot(z.re, z.im); }

/// log(hypot(x, y)) for finite x >= y >= 0, not both zero, accurate near |z| = 1 and safe
/// from overflow.
XRT_FN double log_modulus(double x, double y) {
  if (x > 0.5 && x < 2) return 0.5 * log1p((x - 1) * (x + 1) + y * y);
  if (x > limits<double>::max() / 4) return log(hypot(0.5 * x, 0.5 * y)) + ln2<double>();
  if (x < 1e-290) {  // hypot would round to a subnormal: scale by 2^600
    const double up = 4.149515568880993e+180;
    return log(hypot(x * up, y * up)) - 600 * ln2<double>();
  }
  return log(hypot(x, y));
}

// ---- Exponential and logarithm ----------------------------------------------------------

XRT_CALLED_FN Complex<double> cexp(Complex<double> z) {
  const double inf = limits<double>::infinity(), nan = limits<double>::nan();
  double a = z.re, b = z.im, s, c;
  if (isfinite(a) && isfinite(b)) {
    if (b == 0) return {exp(a), b};
    sincos(b, &s, &c);
    if (a > 709) {  // e^a overflows before the product might not: e^(a/2) twice
      double h = exp(0.5 * a);
      return {(c * h) * h, (s * h) * h};
    }
    double e = exp(a);
    return {e * c, e * s};
  }
  if (isnan(a)) return {a, b == 0 ? b : nan};
  if (isfinite(a)) return {nan, nan};  // finite a, b infinite or NaN
  // a is ±infinity.
  if (isfinite(b)) {
    double v = signbit(a) ? 0.0 : inf;
    if (b == 0) return {v, b};
    sincos(b, &s, &c);
    return {copysign(v, c), copysign(v, s)};
  }
  if (signbit(a)) return {0.0, copysign(0.0, b)};
  return {a, b - b};
}
XRT_VIA_DOUBLE(cexp)

XRT_CALLED_FN Complex<double> clog(Complex<double> z) {
  const double inf = limits<double>::infinity(), nan = limits<double>::nan();
  double a = z.re, b = z.im;
  if (isnan(a) || isnan(b)) return {(isinf(a) || isinf(b)) ? inf : nan, nan};
  double im = atan2(b, a);
  double x = fabs(a), y = fabs(b);
  if (x < y) { double t = x; x = y; y = t; }
  if (isinf(x)) return {inf, im};
  if (x == 0) return {-inf, im};
  return {log_modulus(x, y), im};
}
XRT_VIA_DOUBLE(clog)

XRT_CALLED_FN Complex<double> csqrt(Complex<double> z) {
  const double inf = limits<double>::infinity(), nan = limits<double>::nan();
  double a = z.re, b = z.im;
  if (isinf(b)) return {inf, b};
  if (isinf(a)) {
    if (signbit(a)) return {isnan(b) ? nan : 0.0, copysign(inf, b)};
    return {a, isnan(b) ? nan : copysign(0.0, b)};
  }
  if (isnan(a) || isnan(b)) return {nan, nan};
  if (b == 0) {
    if (a < 0) return {0.0, copysign(sqrt(-a), b)};
    return {fabs(sqrt(a)), copysign(0.0, b)};
  }
  // Scale by a power of 4 (exact, and its square root is exact) away from overflow and
  // from subnormals, whose missing digits the square root would expose.
  double x = fabs(a), y = fabs(b), m = x > y ? x : y, unscale = 1;
  if (m > limits<double>::max() / 4) {
    x *= 0.25; y *= 0.25; unscale = 2;
  } else if (m < 4 * limits<double>::min()) {
    const double up = 81129638414606681695789005144064.0;  // 2^106
    x *= up; y *= up; unscale = 1.0 / 9007199254740992.0;  // 2^-53
  }
  double d = hypot(x, y), r, s;
  if (a >= 0) {
    r = sqrt(0.5 * (d + x));
    s = 0.5 * (y / r);
  } else {
    s = sqrt(0.5 * (d + x));
    r = 0.5 * (y / s);
  }
  return {r * unscale, copysign(s * unscale, b)};
}
XRT_VIA_DOUBLE(csqrt)

// ---- Hyperbolic functions ----------------------------------------------------------------

/// v e^x / 2 for x > 709, where e^x overflows but the product may not: e^(x/2) twice; a zero
/// v stays a zero of its sign (never 0 * inf).
XRT_FN double half_exp_times(double x, double v) {
  if (v == 0) return v;
  double h = exp(0.5 * x);
  return (v * (0.5 * h)) * h;
}

XRT_CALLED_FN Complex<double> csinh(Complex<double> z) {
  const double inf = limits<double>::infinity(), nan = limits<double>::nan();
  double a = z.re, b = z.im, s, c;
  if (isfinite(a)) {
    if (!isfinite(b)) return a == 0 ? Complex<double>{a, b - b} : Complex<double>{nan, nan};
    if (b == 0) { s = b; c = 1; } else { sincos(b, &s, &c); }
    if (fabs(a) > 709) {
      double re = half_exp_times(fabs(a), c);
      return {signbit(a) ? -re : re, half_exp_times(fabs(a), s)};
    }
    return {sinh(a) * c, cosh(a) * s};
  }
  if (isinf(a)) {
    if (!isfinite(b)) return {inf, b - b};
    if (b == 0) return {a, b};
    sincos(b, &s, &c);
    double re = copysign(inf, c);
    return {signbit(a) ? -re : re, copysign(inf, s)};
  }
  return {a, b == 0 ? b : nan};  // a is NaN
}
XRT_VIA_DOUBLE(csinh)

XRT_CALLED_FN Complex<double> ccosh(Complex<double> z) {
  const double inf = limits<double>::infinity(), nan = limits<double>::nan();
  double a = z.re, b = z.im, s, c;
  if (isfinite(a)) {
    if (!isfinite(b)) return {b - b, a == 0 ? 0.0 : nan};
    if (b == 0) { s = b; c = 1; } else { sincos(b, &s, &c); }
    if (fabs(a) > 709) {
      double im = half_exp_times(fabs(a), s);
      return {half_exp_times(fabs(a), c), signbit(a) ? -im : im};
    }
    return {cosh(a) * c, sinh(a) * s};
  }
  if (isinf(a)) {
    if (!isfinite(b)) return {inf, b - b};
    if (b == 0) return {inf, b * copysign(1.0, a)};
    sincos(b, &s, &c);
    return {copysign(inf, c), copysign(inf, s) * copysign(1.0, a)};
  }
  return {a, b == 0 ? b : nan};
}
XRT_VIA_DOUBLE(ccosh)

XRT_CALLED_FN Complex<double> ctanh(Complex<double> z) {
  const double nan = limits<double>::nan();
  double a = z.re, b = z.im, s, c;
  if (!isfinite(a) || !isfinite(b)) {
    // The standard: 1 + 0j for +inf + iy, y > 0 finite (glibc's sign of sin 2y is not it).
    if (isinf(a)) return {copysign(1.0, a), copysign(0.0, b)};
    if (b == 0) return z;
    return {a == 0 ? a : nan, nan};
  }
  if (fabs(b) > limits<double>::min()) { sincos(b, &s, &c); } else { s = b; c = 1; }
  const double t = 354;  // beyond, tanh(a) is ±1 and the imaginary part 4 sc e^(-2|a|)
  if (fabs(a) > t) {
    double im = 4 * s * c, rest = fabs(a) - t, e2t = exp(2 * t);
    im /= e2t;
    im /= rest > t ? e2t : exp(2 * rest);
    return {copysign(1.0, a), im};
  }
  double sh, ch;
  if (fabs(a) > limits<double>::min()) { sh = sinh(a); ch = cosh(a); } else { sh = a; ch = 1; }
  double den = fabs(sh) > fabs(c) * limits<double>::epsilon() ? sh * sh + c * c : c * c;
  return {sh * ch / den, s * c / den};
}
XRT_VIA_DOUBLE(ctanh)

// ---- Trigonometric functions: f(z) from the hyperbolic ones at iz (Annex G) ---------------

template <class R> XRT_FN Complex<R> times_i(Complex<R> z) { return {flip_sign(z.im), z.re}; }
template <class R> XRT_FN Complex<R> times_minus_i(Complex<R> z) { return {z.im, flip_sign(z.re)}; }

template <class R> XRT_FN Complex<R> csin(Complex<R> z) {
  // glibc's choice where Annex G leaves the sign open: +inf for an infinite b and a not finite.
  if (isinf(z.im) && !isfinite(z.re)) return {z.re - z.re, limits<R>::infinity()};
  return times_minus_i(csinh(times_i(z)));
}
template <class R> XRT_FN Complex<R> ccos(Complex<R> z) { return ccosh(times_i(z)); }
template <class R> XRT_FN Complex<R> ctan(Complex<R> z) { return times_minus_i(ctanh(times_i(z))); }

// ---- Inverse functions -------------------------------------------------------------------

struct ReIm {
  double re, im;
};

/// asin(x + iy) and acos(x + iy) for finite x, y >= 0: real part of the one asked for,
/// and the imaginary part's magnitude (the same for both). The algorithm of Hull, Fairgrieve
/// and Tang (ACM TOMS 23, 1997): A = (|z+1| + |z-1|)/2, B = x/A, with the cancellations
/// near the branch points rewritten, and the asymptotic forms for tiny and huge |z|.
XRT_CALLED_FN ReIm asin_acos_kernel(double x, double y, bool acos_wanted) {
  const double big = 134217728.0;           // 2^27: log(2z) is exact to rounding beyond
  const double small = 7.450580596923828e-9;  // 2^-27: asin(z) = z to rounding below
  if (x > big || y > big) {
    double im = x > limits<double>::max() / 4 || y > limits<double>::max() / 4
                    ? log(hypot(0.5 * x, 0.5 * y)) + 2 * ln2<double>()
                    : log(hypot(x, y)) + ln2<double>();
    return {acos_wanted ? atan2(y, x) : atan2(x, y), im};
  }
  if (x < small && y < small) return {acos_wanted ? half_pi<double>() - x : x, y};
  double xp1 = x + 1, xm1 = x - 1;
  if (y < 1.4916681462400413e-154) {  // sqrt(min): y*y would underflow
    if (x < 1) {
      double im = y / sqrt(-xm1 * xp1);
      return {acos_wanted ? acos(x) : asin(x), im};
    }
    if (x == 1) {
      double r = sqrt(y);
      return {acos_wanted ? r : half_pi<double>() - r, r};
    }
    double root = sqrt(xm1 * xp1);
    return {acos_wanted ? y / root : half_pi<double>(), log1p(xm1 + root)};
  }
  double r = hypot(xp1, y), s = hypot(xm1, y);
  double A = 0.5 * (r + s), B = x / A, yy = y * y;
  double re;
  if (B <= 0.6417) {
    re = acos_wanted ? acos(B) : asin(B);
  } else {
    // tan(asin B) = x / sqrt(A² - x²), with A² - x² in a form free of cancellation.
    double root = x <= 1 ? sqrt(0.5 * (A + x) * (yy / (r + xp1) + (s - xm1)))
                         : y * sqrt(0.5 * ((A + x) / (r + xp1) + (A + x) / (s + xm1)));
    re = acos_wanted ? atan(root / x) : atan(x / root);
  }
  double im;
  if (A <= 1.5) {
    double Am1 = x < 1 ? 0.5 * (yy / (r + xp1) + yy / (s - xm1))
                       : 0.5 * (yy / (r + xp1) + (s + xm1));
    im = log1p(Am1 + sqrt(Am1 * (A + 1)));
  } else {
    im = log(A + sqrt(A * A - 1));
  }
  return {re, im};
}

/// atanh(x + iy) for finite x, y >= 0, not both zero: 1/4 log1p(4x / ((1-x)² + y²)) and
/// 1/2 atan2(2y, (1-x)(1+x) - y²), with the asymptotic forms for tiny and huge |z|.
XRT_CALLED_FN ReIm atanh_kernel(double x, double y) {
  const double big = 134217728.0, small = 7.450580596923828e-9;
  if (x < small && y < small) return {x, y};
  double re, im;
  if (x > big || y > big) {  // atanh(z) = 1/z ± iπ/2 to rounding: Re(1/z) = x / |z|²
    if (x >= y) {
      double t = y / x;
      re = (1 / x) / (1 + t * t);
    } else {
      double t = x / y;
      re = (t / y) / (1 + t * t);
    }
    im = x > 1e150 || y > 1e150 ? half_pi<double>()
                                : 0.5 * atan2(2 * y, (1 - x) * (1 + x) - y * y);
    return {re, im};
  }
  double one_minus = 1 - x;
  double den = one_minus * one_minus + y * y;
  if (den < limits<double>::min())  // near z = 1: the log of a tiny |1 - z|
    re = 0.25 * log(4 * x) - 0.5 * log(hypot(one_minus, y));
  else
    re = 0.25 * log1p(4 * x / den);
  im = 0.5 * atan2(2 * y, one_minus * (1 + x) - y * y);
  return {re, im};
}

XRT_CALLED_FN Complex<double> casinh(Complex<double> z) {
  const double inf = limits<double>::infinity(), nan = limits<double>::nan();
  double a = z.re, b = z.im;
  if (!isfinite(a) || !isfinite(b)) {
    if (isinf(b)) {
      return {copysign(inf, a),
              isnan(a) ? nan : copysign(isfinite(a) ? half_pi<double>() : quarter_pi<double>(), b)};
    }
    if (!isfinite(a))  // a is ±inf or NaN, b finite or NaN
      return {a, (isinf(a) && !isnan(b)) || (isnan(a) && b == 0) ? copysign(0.0, b) : nan};
    return {nan, nan};
  }
  if (a == 0 && b == 0) return z;
  // asinh(z) = -i asin(iz)
  ReIm k = asin_acos_kernel(fabs(b), fabs(a), false);
  return {copysign(k.im, a), copysign(k.re, b)};
}
XRT_VIA_DOUBLE(casinh)

XRT_CALLED_FN Complex<double> casin(Complex<double> z) {
  const double inf = limits<double>::infinity(), nan = limits<double>::nan();
  double a = z.re, b = z.im;
  if (isnan(a) || isnan(b)) {
    if (a == 0) return z;
    if (isinf(a) || isinf(b)) return {nan, copysign(inf, b)};
    return {nan, nan};
  }
  if (!isfinite(a) || !isfinite(b)) {  // asin(z) = -i asinh(iz)
    Complex<double> w = casinh(times_i(z));
    return times_minus_i(w);
  }
  if (a == 0 && b == 0) return z;
  ReIm k = asin_acos_kernel(fabs(a), fabs(b), false);
  return {copysign(k.re, a), copysign(k.im, b)};
}
XRT_VIA_DOUBLE(casin)

XRT_CALLED_FN Complex<double> cacos(Complex<double> z) {
  double a = z.re, b = z.im;
  if (!isfinite(a) || !isfinite(b) || (a == 0 && b == 0)) {  // acos(z) = π/2 - asin(z)
    Complex<double> w = casin(z);
    double re = half_pi<double>() - w.re;
    return {re == 0 ? 0.0 : re, -w.im};
  }
  ReIm k = asin_acos_kernel(fabs(a), fabs(b), true);
  return {signbit(a) ? pi<double>() - k.re : k.re, signbit(b) ? k.im : -k.im};
}
XRT_VIA_DOUBLE(cacos)

XRT_CALLED_FN Complex<double> cacosh(Complex<double> z) {
  const double inf = limits<double>::infinity(), nan = limits<double>::nan();
  double a = z.re, b = z.im;
  if (!isfinite(a) || !isfinite(b)) {
    if (isinf(b)) {
      double angle = isinf(a) ? (signbit(a) ? 3 * quarter_pi<double>() : quarter_pi<double>())
                              : half_pi<double>();
      return {inf, isnan(a) ? nan : copysign(angle, b)};
    }
    if (isinf(a)) return {inf, isnan(b) ? nan : copysign(signbit(a) ? pi<double>() : 0.0, b)};
    return {nan, a == 0 ? half_pi<double>() : nan};  // the standard's NaN ± πi/2 for ±0 + NaN i
  }
  if (a == 0 && b == 0) return {0.0, copysign(half_pi<double>(), b)};
  // acosh(z) = ±i acos(z), the sign that makes the real part non-negative.
  Complex<double> w = cacos(z);
  return signbit(b) ? Complex<double>{w.im, -w.re} : Complex<double>{-w.im, w.re};
}
XRT_VIA_DOUBLE(cacosh)

XRT_CALLED_FN Complex<double> catanh(Complex<double> z) {
  const double nan = limits<double>::nan();
  double a = z.re, b = z.im;
  if (!isfinite(a) || !isfinite(b)) {
    if (isinf(b)) return {copysign(0.0, a), copysign(half_pi<double>(), b)};
    if (isinf(a) || a == 0)
      return {copysign(0.0, a), isnan(b) ? nan : copysign(half_pi<double>(), b)};
    return {nan, nan};
  }
  if (a == 0 && b == 0) return z;
  ReIm k = atanh_kernel(fabs(a), fabs(b));
  return {copysign(k.re, a), copysign(k.im, b)};
}
XRT_VIA_DOUBLE(catanh)

XRT_CALLED_FN Complex<double> catan(Complex<double> z) {  // atan(z) = -i atanh(iz)
  return times_minus_i(catanh(times_i(z)));
}
XRT_VIA_DOUBLE(catan)

#undef XRT_VIA_DOUBLE

}  // namespace xrt::ew
