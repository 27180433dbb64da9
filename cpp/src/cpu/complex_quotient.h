// cpp/src/cpu/complex_quotient.h: complex128 division for the CPU kernels (scalar_math.h),
// the same algorithm as the CUDA kernels' (cpp/kernels/xrt/complex_math.cuh).
//
// Compiled once per target ISA like scalar_math.h (XRT_ISA_NS must be defined first), so
// that the copies built with wider instructions never stand in for the baseline one.
#pragma once
#include <cmath>
#include <complex>
#include <limits>

namespace xrt::cpu::XRT_ISA_NS::math {

// Note [Complex quotient]: complex128 division is Smith's method with the scaling libgcc's
// __divdc3 uses (McGehearty's), written out here, and the same in the CUDA kernels
// (cpp/kernels/xrt/complex_math.cuh), so both give the same bits. One change: where a tiny
// ratio sends the quotient through q * (a / p), a zero q stays a zero even when a / p
// overflows, where libgcc computes 0 * inf = NaN. So 1 / (2.2e-311j) is 0 - inf j, the
// mathematically right signed infinity, rather than NaN - inf j. Infinities and zeros
// that the formula turns into NaN + NaN i are recovered as C99 Annex G says.
inline double times_quotient(double q, double v, double p) {
  if (q == 0 && !std::isnan(v)) return q * std::copysign(1.0, v) * std::copysign(1.0, p);
  return q * (v / p);
}

inline std::complex<double> complex_quotient(std::complex<double> x, std::complex<double> y) {
  constexpr double big = std::numeric_limits<double>::max() / 2;
  constexpr double min = std::numeric_limits<double>::min();
  constexpr double eps = std::numeric_limits<double>::epsilon(), up = 1 / eps;
  constexpr double max2 = big * eps;
  double a = x.real(), b = x.imag(), c = y.real(), d = y.imag(), re, im;
  bool swapped = std::fabs(c) < std::fabs(d);
  double p = swapped ? d : c, q = swapped ? c : d;  // |p| >= |q|
  if (std::fabs(p) >= big) { a *= 0.5; b *= 0.5; p *= 0.5; q *= 0.5; }
  if (std::fabs(p) < eps ||
      (std::fabs(a) < min && std::fabs(b) < max2 && std::fabs(p) < max2) ||
      (std::fabs(b) < min && std::fabs(a) < max2 && std::fabs(p) < max2)) {
    a *= up; b *= up; p *= up; q *= up;
  }
  double ratio = q / p;
  double denominator = q * ratio + p;
  bool tiny = !(std::fabs(ratio) > min);
  if (!swapped) {
    re = (tiny ? a + times_quotient(q, b, p) : b * ratio + a) / denominator;
    im = (tiny ? b - times_quotient(q, a, p) : b - a * ratio) / denominator;
  } else {
    re = (tiny ? times_quotient(q, a, p) + b : a * ratio + b) / denominator;
    im = (tiny ? times_quotient(q, b, p) - a : b * ratio - a) / denominator;
  }
  if (!std::isnan(re) || !std::isnan(im)) return {re, im};
  a = x.real(); b = x.imag();
  constexpr double inf = std::numeric_limits<double>::infinity();
  auto box = [](double v) { return std::copysign(std::isinf(v) ? 1.0 : 0.0, v); };
  if (c == 0 && d == 0 && (!std::isnan(a) || !std::isnan(b)))
    return {std::copysign(inf, c) * a, std::copysign(inf, c) * b};
  if ((std::isinf(a) || std::isinf(b)) && std::isfinite(c) && std::isfinite(d)) {
    a = box(a); b = box(b);
    return {inf * (a * c + b * d), inf * (b * c - a * d)};
  }
  if ((std::isinf(c) || std::isinf(d)) && std::isfinite(a) && std::isfinite(b)) {
    c = box(c); d = box(d);
    return {0.0 * (a * c + b * d), 0.0 * (b * c - a * d)};
  }
  return {re, im};
}

}  // namespace xrt::cpu::XRT_ISA_NS::math
