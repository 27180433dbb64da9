// cpp/src/cpu/vector_math.h: tells GCC that glibc's libmvec has SIMD versions of the libm
// functions, so that loops calling them vectorise (4/8/16 lanes by target ISA).
//
// Note: glibc declares these itself only under -ffast-math, which would also drop the
// NaN/infinity semantics the standard requires. libmvec keeps them (special inputs take
// its scalar path) and stays within a few ulp, like NumPy's own SIMD functions.
#pragma once
#ifdef XRT_HAVE_LIBMVEC  // glibc on x86-64 (CMake finds libmvec)

#define XRT_SIMD_DECLARE(fn)                                                  \
  __attribute__((simd("notinbranch"))) double fn(double) noexcept;            \
  __attribute__((simd("notinbranch"))) float fn##f(float) noexcept;
#define XRT_SIMD_DECLARE2(fn)                                                 \
  __attribute__((simd("notinbranch"))) double fn(double, double) noexcept;    \
  __attribute__((simd("notinbranch"))) float fn##f(float, float) noexcept;

extern "C" {
XRT_SIMD_DECLARE(acos)
XRT_SIMD_DECLARE(acosh)
XRT_SIMD_DECLARE(asin)
XRT_SIMD_DECLARE(asinh)
XRT_SIMD_DECLARE(atan)
XRT_SIMD_DECLARE(atanh)
XRT_SIMD_DECLARE(cos)
XRT_SIMD_DECLARE(cosh)
XRT_SIMD_DECLARE(erf)
XRT_SIMD_DECLARE(exp)
XRT_SIMD_DECLARE(expm1)
XRT_SIMD_DECLARE(log)
XRT_SIMD_DECLARE(log1p)
XRT_SIMD_DECLARE(log2)
XRT_SIMD_DECLARE(log10)
XRT_SIMD_DECLARE(sin)
XRT_SIMD_DECLARE(sinh)
XRT_SIMD_DECLARE(tan)
XRT_SIMD_DECLARE(tanh)
XRT_SIMD_DECLARE2(atan2)
XRT_SIMD_DECLARE2(hypot)
XRT_SIMD_DECLARE2(pow)
}

#undef XRT_SIMD_DECLARE
#undef XRT_SIMD_DECLARE2

#endif  // XRT_HAVE_LIBMVEC
