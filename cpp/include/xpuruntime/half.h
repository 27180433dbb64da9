// cpp/include/xpuruntime/half.h: float16 and bfloat16 storage types, computed through float.
#pragma once
#include <cstdint>
#include <cstring>

namespace xrt {

namespace detail {
inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
}  // namespace detail

/// IEEE binary16. Arithmetic happens in float; conversions round to nearest even.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  Float16(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a builtin float
  operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t x = detail::float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or nan; keep nan quiet and non-zero
      return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (abs < 0x38800000u) {  // result is subnormal or zero: let the FPU round
      float magnitude = detail::bits_float(abs) + 0.5f;  // 0.5 = 2^-1 aligns the 2^-24 ulp
      return static_cast<uint16_t>(sign | (detail::float_bits(magnitude) - 0x3f000000u));
    }
    uint32_t mantissa_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mantissa_odd;  // rebias exponent (-112 << 23) and round to even
    return static_cast<uint16_t>(sign | (abs >> 13));
  }
  static float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return detail::bits_float(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
      float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
      return sign ? -value : value;
    }
    return detail::bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
};

/// bfloat16: the top half of a float32. Conversions round to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}  // NOLINT
  operator float() const { return detail::bits_float(static_cast<uint32_t>(bits) << 16); }

  static uint16_t from_float(float f) {
    uint32_t x = detail::float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
  }
};

}  // namespace xrt
