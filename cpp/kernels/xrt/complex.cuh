// cpp/kernels/xrt/complex.cuh: the complex type of the device kernels and its arithmetic.
// +, -, * and / follow libgcc's operations step by step (Annex G's recovery of infinities
// from NaN + NaN i included), so products match the CPU bit for bit and quotients match it
// for the same algorithm (Note [Complex quotient] in cpu/complex_quotient.h).
#pragma once
#include "xrt/real_math.cuh"

namespace xrt::ew {

template <class R> struct alignas(2 * sizeof(R)) Complex {
  R re, im;
};

template <class T> inline constexpr bool is_complex = false;
template <class R> inline constexpr bool is_complex<Complex<R>> = true;

// ---- Arithmetic ----------------------------------------------------------------------

template <class R> XRT_FN Complex<R> operator+(Complex<R> x, Complex<R> y) {
  return {x.re + y.re, x.im + y.im};
}
template <class R> XRT_FN Complex<R> operator-(Complex<R> x, Complex<R> y) {
  return {x.re - y.re, x.im - y.im};
}
template <class R> XRT_FN Complex<R> operator-(Complex<R> x) { return {-x.re, -x.im}; }

// A NaN component becomes a zero of its sign; an infinite one becomes ±1.
template <class R> XRT_FN R box_inf(R v) { return copysign(isinf(v) ? R(1) : R(0), v); }
template <class R> XRT_FN R nan_to_zero(R v) { return isnan(v) ? copysign(R(0), v) : v; }

/// The product with Annex G's recovery of infinities from NaN + NaN i (libgcc's __mul?c3).
template <class R> XRT_FN Complex<R> operator*(Complex<R> x, Complex<R> y) {
  R a = x.re, b = x.im, c = y.re, d = y.im;
  R ac = a * c, bd = b * d, ad = a * d, bc = b * c;
  R re = ac - bd, im = ad + bc;
  if (!isnan(re) || !isnan(im)) return {re, im};
  bool recompute = false;
  if (isinf(a) || isinf(b)) {
    a = box_inf(a); b = box_inf(b); c = nan_to_zero(c); d = nan_to_zero(d);
    recompute = true;
  }
  if (isinf(c) || isinf(d)) {
    c = box_inf(c); d = box_inf(d); a = nan_to_zero(a); b = nan_to_zero(b);
    recompute = true;
  }
  if (!recompute && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {
    a = nan_to_zero(a); b = nan_to_zero(b); c = nan_to_zero(c); d = nan_to_zero(d);
    recompute = true;
  }
  if (recompute) {
    R inf = limits<R>::infinity();
    re = inf * (a * c - b * d);
    im = inf * (a * d + b * c);
  }
  return {re, im};
}

// Infinities and zeros that the quotient formula turned into NaN + NaN i.
template <class R> XRT_FN Complex<R> recover_quotient(R a, R b, R c, R d, R re, R im) {
  if (!isnan(re) || !isnan(im)) return {re, im};
  R inf = limits<R>::infinity();
  if (c == 0 && d == 0 && (!isnan(a) || !isnan(b)))
    return {copysign(inf, c) * a, copysign(inf, c) * b};
  if ((isinf(a) || isinf(b)) && isfinite(c) && isfinite(d)) {
    a = box_inf(a); b = box_inf(b);
    return {inf * (a * c + b * d), inf * (b * c - a * d)};
  }
  if ((isinf(c) || isinf(d)) && isfinite(a) && isfinite(b)) {
    c = box_inf(c); d = box_inf(d);
    return {R(0) * (a * c + b * d), R(0) * (b * c - a * d)};
  }
  return {re, im};
}

/// complex64 quotient: the textbook formula in double, which has the range and the
/// precision to need no scaling (libgcc does the same when the hardware has doubles).
XRT_FN Complex<float> operator/(Complex<float> x, Complex<float> y) {
  double a = x.re, b = x.im, c = y.re, d = y.im;
  double denominator = c * c + d * d;
  float re = static_cast<float>((a * c + b * d) / denominator);
  float im = static_cast<float>((b * c - a * d) / denominator);
  return recover_quotient(x.re, x.im, y.re, y.im, re, im);
}

/// q * (v / p), which stays a (signed) zero for a zero q when v / p overflows.
XRT_FN double times_quotient(double q, double v, double p) {
  if (q == 0 && !isnan(v)) return q * copysign(1.0, v) * copysign(1.0, p);
  return q * (v / p);
}

/// complex128 quotient: Smith's method with scaling (McGehearty's, as libgcc has it) so that
/// huge or subnormal operands do not overflow or lose their digits; a zero term stays zero
/// where libgcc makes it 0 * inf = NaN (Note [Complex quotient] in cpu/complex_quotient.h).
XRT_CALLED_FN Complex<double> operator/(Complex<double> x, Complex<double> y) {
  const double big = limits<double>::max() / 2, min = limits<double>::min();
  const double eps = limits<double>::epsilon(), up = 1 / eps, max2 = big * eps;
  double a = x.re, b = x.im, c = y.re, d = y.im, re, im;
  // Work with |c| >= |d| (the other case is the same with the roles swapped).
  bool swapped = fabs(c) < fabs(d);
  double p = swapped ? d : c, q = swapped ? c : d;  // |p| >= |q|
  if (fabs(p) >= big) { a *= 0.5; b *= 0.5; p *= 0.5; q *= 0.5; }
  if (fabs(p) < eps ||
      (fabs(a) < min && fabs(b) < max2 && fabs(p) < max2) ||
      (fabs(b) < min && fabs(a) < max2 && fabs(p) < max2)) {
    a *= up; b *= up; p *= up; q *= up;
  }
  double ratio = q / p;
  double denominator = q * ratio + p;
  if (!swapped) {
    if (fabs(ratio) > min) {
      re = (b * ratio + a) / denominator;
      im = (b - a * ratio) / denominator;
    } else {
      re = (a + times_quotient(q, b, p)) / denominator;
      im = (b - times_quotient(q, a, p)) / denominator;
    }
  } else {
    if (fabs(ratio) > min) {
      re = (a * ratio + b) / denominator;
      im = (b * ratio - a) / denominator;
    } else {
      re = (times_quotient(q, a, p) + b) / denominator;
      im = (times_quotient(q, b, p) - a) / denominator;
    }
  }
  return recover_quotient(x.re, x.im, y.re, y.im, re, im);
}

}  // namespace xrt::ew
