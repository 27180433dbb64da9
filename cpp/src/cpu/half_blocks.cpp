// cpp/src/cpu/half_blocks.cpp: block conversions of float16 with F16C (vcvtph2ps/vcvtps2ph,
// 8 values an instruction), chosen at run time; the portable conversions of half.h elsewhere.
#include "cpu/half_blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xrt::cpu {
namespace {

void widen_portable(const Float16* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Float16::to_float(in[i].bits);
}

void narrow_portable(const float* in, Float16* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i].bits = Float16::from_float(in[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void widen_f16c(const Float16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  widen_portable(in + i, out + i, n - i);
}

// Note: vcvtps2ph with round-to-nearest-even, like Float16::from_float, and like it keeps a
// NaN quiet with the top of its payload, so both paths give the same bits.
__attribute__((target("avx,f16c"))) void narrow_f16c(const float* in, Float16* out,
                                                     int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  narrow_portable(in + i, out + i, n - i);
}

bool has_f16c() {
  static const bool yes = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return yes;
}
#endif

}  // namespace

void widen_float16(const Float16* in, float* out, int64_t n) {
#if defined(__x86_64__)
  if (has_f16c()) return widen_f16c(in, out, n);
#endif
  widen_portable(in, out, n);
}

void narrow_to_float16(const float* in, Float16* out, int64_t n) {
#if defined(__x86_64__)
  if (has_f16c()) return narrow_f16c(in, out, n);
#endif
  narrow_portable(in, out, n);
}

}  // namespace xrt::cpu
