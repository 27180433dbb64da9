// cpp/kernels/xrt/real_math.cuh: the scalar vocabulary of the elementwise device code:
// integer aliases, the 16-bit float storage types, bit casts, classification and the real
// functions of CUDA's math library overloaded for float and double.
//
// The same text also compiles as host C++ (no __CUDACC__), where the real functions are the
// C library's: tests/test_elementwise.py builds the device math that way and checks its
// special cases against the CPU backend without a GPU.
#pragma once

// XRT_FN: small functions, inlined. XRT_CALLED_FN: the large complex functions, kept out of
// line on the device so that a kernel holds one copy however often its code reaches them
// (NVRTC's time and the kernel's size grow with every inlined copy).
#if defined(__CUDACC__)
#define XRT_FN __device__ __forceinline__
#define XRT_CALLED_FN __device__ __noinline__
#else
#include <cmath>
#include <cstring>
#define XRT_FN inline
#define XRT_CALLED_FN inline
#endif

namespace xrt::ew {

using i8 = signed char;
using i16 = short;
using i32 = int;
using i64 = long long;
using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;

// ---- Type traits (NVRTC has no <type_traits>) ----------------------------------------

template <class A, class B> inline constexpr bool is_same = false;
template <class A> inline constexpr bool is_same<A, A> = true;
template <bool C, class A, class B> struct conditional { using type = A; };
template <class A, class B> struct conditional<false, A, B> { using type = B; };
template <bool C, class A, class B> using conditional_t = typename conditional<C, A, B>::type;

template <class T> inline constexpr bool is_bool = is_same<T, bool>;
template <class T> inline constexpr bool is_real_float = is_same<T, float> || is_same<T, double>;
template <class T> inline constexpr bool is_signed_int =
    is_same<T, i8> || is_same<T, i16> || is_same<T, i32> || is_same<T, i64>;
template <class T> inline constexpr bool is_unsigned_int =
    is_same<T, u8> || is_same<T, u16> || is_same<T, u32> || is_same<T, u64>;
template <class T> inline constexpr bool is_int = is_signed_int<T> || is_unsigned_int<T>;

template <class T> struct make_unsigned { using type = T; };
template <> struct make_unsigned<i8> { using type = u8; };
template <> struct make_unsigned<i16> { using type = u16; };
template <> struct make_unsigned<i32> { using type = u32; };
template <> struct make_unsigned<i64> { using type = u64; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;

// ---- Bits ----------------------------------------------------------------------------

XRT_FN u32 bits_of(float x) {
#if defined(__CUDACC__)
  return static_cast<u32>(__float_as_uint(x));
#else
  u32 u; std::memcpy(&u, &x, 4); return u;
#endif
}
XRT_FN u64 bits_of(double x) {
#if defined(__CUDACC__)
  return static_cast<u64>(__double_as_longlong(x));
#else
  u64 u; std::memcpy(&u, &x, 8); return u;
#endif
}
XRT_FN float float_of(u32 u) {
#if defined(__CUDACC__)
  return __uint_as_float(u);
#else
  float x; std::memcpy(&x, &u, 4); return x;
#endif
}
XRT_FN double double_of(u64 u) {
#if defined(__CUDACC__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x; std::memcpy(&x, &u, 8); return x;
#endif
}

/// Limits of the real types, as functions (constexpr bit casts are not portable here).
template <class R> struct limits;
template <> struct limits<float> {
  static constexpr int digits = 24;
  XRT_FN static float infinity() { return float_of(0x7f800000u); }
  XRT_FN static float nan() { return float_of(0x7fc00000u); }
  XRT_FN static float max() { return float_of(0x7f7fffffu); }
  XRT_FN static float min() { return float_of(0x00800000u); }  // smallest normal
  XRT_FN static float epsilon() { return float_of(0x34000000u); }
};
template <> struct limits<double> {
  static constexpr int digits = 53;
  XRT_FN static double infinity() { return double_of(0x7ff0000000000000ull); }
  XRT_FN static double nan() { return double_of(0x7ff8000000000000ull); }
  XRT_FN static double max() { return double_of(0x7fefffffffffffffull); }
  XRT_FN static double min() { return double_of(0x0010000000000000ull); }
  XRT_FN static double epsilon() { return double_of(0x3cb0000000000000ull); }
};

// ---- The real functions, one name for float and double --------------------------------

// Unary functions of CUDA's math library (C's names: f suffix for float).
#define XRT_REAL_UNARY(X)                                                                   \
  X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) X(cos) X(cosh) X(erf) X(exp) X(expm1) \
  X(log) X(log1p) X(log2) X(log10) X(sin) X(sinh) X(sqrt) X(tan) X(tanh) X(fabs) X(floor)  \
  X(ceil) X(trunc) X(rint)
#define XRT_REAL_BINARY(X) X(atan2) X(pow) X(copysign) X(fmod) X(nextafter)

#define XRT_DEFINE_UNARY(fn)                               \
  XRT_FN float fn(float x) { return ::fn##f(x); }          \
  XRT_FN double fn(double x) { return ::fn(x); }
#define XRT_DEFINE_BINARY(fn)                                          \
  XRT_FN float fn(float x, float y) { return ::fn##f(x, y); }          \
  XRT_FN double fn(double x, double y) { return ::fn(x, y); }
XRT_REAL_UNARY(XRT_DEFINE_UNARY)
XRT_REAL_BINARY(XRT_DEFINE_BINARY)
#undef XRT_DEFINE_UNARY
#undef XRT_DEFINE_BINARY

// ---- Classification (by value or bits, never by the optimiser's assumptions) ---------

XRT_FN bool signbit(float x) { return (bits_of(x) >> 31) != 0; }
XRT_FN bool signbit(double x) { return (bits_of(x) >> 63) != 0; }
template <class R> XRT_FN bool isnan(R x) { return x != x; }
template <class R> XRT_FN bool isinf(R x) {
  return x == limits<R>::infinity() || x == -limits<R>::infinity();
}
template <class R> XRT_FN bool isfinite(R x) { return fabs(x) <= limits<R>::max(); }

// Note: CUDA's double hypot is wrong at the ends of the range: hypot(1, DBL_MAX) and
// hypot(0.5, DBL_MAX / 2) are inf (measured on an H100; the reciprocal of the result it goes
// through is subnormal there), and the same can happen for subnormal results. A result
// beyond 2^1000 or below 2^-1000 (inf and 0 included) is computed again on operands scaled
// by 2^-600 or 2^600 (exact), which CUDA gets right, and scaled back. float results halve
// their operands on overflow, which the same tests found enough.
XRT_FN float hypot(float x, float y) {
  float r = ::hypotf(x, y);
  return isinf(r) && isfinite(x) && isfinite(y) ? 2 * ::hypotf(0.5f * x, 0.5f * y) : r;
}
XRT_FN double hypot(double x, double y) {
  double r = ::hypot(x, y);
  if (r <= 0x1p1000 && r >= 0x1p-1000) return r;
  // Note: scaled by 2^-600 the result came back 1 ulp high at DBL_MAX (inf once scaled
  // back, measured on an H100), so this path does not use CUDA's hypot: the larger operand
  // is brought into [0.5, 1) by its exponent, and sqrt(fma(m, m, n n)) rounds twice at most.
  double ax = fabs(x), ay = fabs(y);
  if (isinf(ax) || isinf(ay)) return limits<double>::infinity();  // inf wins over NaN
  if (isnan(ax) || isnan(ay)) return ax + ay;
  double m = fmax(ax, ay), n = fmin(ax, ay);
  if (n == 0) return m;
  int e;
  m = ::frexp(m, &e);
  n = ::ldexp(n, -e);
  return ::ldexp(::sqrt(::fma(m, m, n * n)), e);
}

/// -x by its sign bit, NaN included (the device's neg may not flip a NaN's sign, while x86's
/// does; special cases that pass a NaN on through a sign need the host's behaviour).
XRT_FN float flip_sign(float x) { return float_of(bits_of(x) ^ 0x80000000u); }
XRT_FN double flip_sign(double x) { return double_of(bits_of(x) ^ 0x8000000000000000ull); }

XRT_FN void sincos(float x, float* s, float* c) {
#if defined(__CUDACC__)
  ::sincosf(x, s, c);
#else
  *s = ::sinf(x); *c = ::cosf(x);
#endif
}
XRT_FN void sincos(double x, double* s, double* c) {
#if defined(__CUDACC__)
  ::sincos(x, s, c);
#else
  *s = ::sin(x); *c = ::cos(x);
#endif
}

// ---- The 16-bit floats: storage only, computed in float ------------------------------
// Note: minimal definitions until the jit family's common.cuh provides the shared ones.
// Conversions round to nearest even and keep NaN a NaN, like xpuruntime/half.h.

struct alignas(2) Float16 {
  u16 bits;
};
struct alignas(2) BFloat16 {
  u16 bits;
};

XRT_FN float to_float(Float16 h) {
#if defined(__CUDACC__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
#else
  u32 sign = static_cast<u32>(h.bits & 0x8000u) << 16;
  u32 exponent = (h.bits >> 10) & 0x1fu, mantissa = h.bits & 0x3ffu;
  if (exponent == 0x1f) return float_of(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float v = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return float_of(sign | ((exponent + 112u) << 23) | (mantissa << 13));
#endif
}
XRT_FN float to_float(BFloat16 h) { return float_of(static_cast<u32>(h.bits) << 16); }

template <class H> XRT_FN H from_float(float f);
template <> XRT_FN Float16 from_float<Float16>(float f) {
#if defined(__CUDACC__)
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return Float16{h};
#else
  u32 x = bits_of(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u)
    return Float16{static_cast<u16>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u))};
  if (a >= 0x477ff000u) return Float16{static_cast<u16>(sign | 0x7c00u)};
  if (a < 0x38800000u) {
    float m = float_of(a) + 0.5f;
    return Float16{static_cast<u16>(sign | (bits_of(m) - 0x3f000000u))};
  }
  a += 0xc8000fffu + ((a >> 13) & 1u);
  return Float16{static_cast<u16>(sign | (a >> 13))};
#endif
}
template <> XRT_FN BFloat16 from_float<BFloat16>(float f) {
  u32 x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<u16>((x >> 16) | 0x40u)};
  x += 0x7fffu + ((x >> 16) & 1u);
  return BFloat16{static_cast<u16>(x >> 16)};
}

template <class T> inline constexpr bool is_half = is_same<T, Float16> || is_same<T, BFloat16>;

}  // namespace xrt::ew
