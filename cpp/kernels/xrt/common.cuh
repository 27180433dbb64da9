// cpp/kernels/xrt/common.cuh: what every CUDA kernel family builds on: fixed-width integers,
// the index type, the 16-bit float and complex storage types, strided byte offsets.
//
// Compiled by NVRTC only (device code), with no system or toolkit header available: nothing
// here includes <cstdint> or cuda_fp16.h. Everything lives in namespace xrt.
#pragma once

namespace xrt {

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

/// Element counts and byte offsets (signed: strides may be negative).
typedef long long index_t;

template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };
template <bool C, class A, class B> struct conditional { typedef A type; };
template <class A, class B> struct conditional<false, A, B> { typedef B type; };

// ---- 16-bit floats ---------------------------------------------------------------------
// Storage types like the host's Float16/BFloat16 (cpp/include/xpuruntime/half.h): arithmetic
// happens in float; conversions round to nearest even, as the host's do.

__device__ __forceinline__ uint16_t float_to_half_bits(float f) {
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

__device__ __forceinline__ float half_bits_to_float(uint16_t h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

__device__ __forceinline__ uint16_t float_to_bfloat16_bits(float f) {
#if __CUDA_ARCH__ >= 800
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  uint32_t x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
#endif
}

__device__ __forceinline__ float bfloat16_bits_to_float(uint16_t h) {
  return __uint_as_float(uint32_t(h) << 16);
}

/// IEEE binary16 (xrt.float16).
struct alignas(2) float16 {
  uint16_t bits;
  float16() = default;
  __device__ float16(float f) : bits(float_to_half_bits(f)) {}
  __device__ operator float() const { return half_bits_to_float(bits); }
  __device__ static float16 from_bits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
};

/// bfloat16 (xrt.bfloat16): the top half of a float32.
struct alignas(2) bfloat16 {
  uint16_t bits;
  bfloat16() = default;
  __device__ bfloat16(float f) : bits(float_to_bfloat16_bits(f)) {}
  __device__ operator float() const { return bfloat16_bits_to_float(bits); }
  __device__ static bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

// ---- complex ---------------------------------------------------------------------------

/// Storage of complex64/complex128, laid out as std::complex (real, imaginary).
template <class T> struct alignas(2 * sizeof(T)) complex {
  T re, im;
  complex() = default;
  __device__ complex(T real, T imag = T(0)) : re(real), im(imag) {}
  __device__ T real() const { return re; }
  __device__ T imag() const { return im; }
};
typedef complex<float> complex64;
typedef complex<double> complex128;

/// The type arithmetic on T happens in: float for the 16-bit floats, T otherwise.
template <class T> struct compute_type { typedef T type; };
template <> struct compute_type<float16> { typedef float type; };
template <> struct compute_type<bfloat16> { typedef float type; };

// ---- strided operands ------------------------------------------------------------------

/// NARGS operands that share one shape of ND dimensions (innermost last, size-1 dimensions
/// dropped and contiguous runs merged by the host), each with byte strides. The host packs
/// it as ND sizes then NARGS rows of ND strides, all 64-bit (cuda/strided.h).
template <int ND, int NARGS> struct StridedLayout {
  index_t size[ND];
  index_t stride[NARGS][ND];

  /// Byte offsets of the element at row-major position `linear`. U is the unsigned index
  /// type (uint32_t when the host found that every element count and byte offset fits in
  /// 31 bits: 32-bit division is several times cheaper), S the signed one.
  template <class U, class S>
  __device__ __forceinline__ void offsets(U linear, S (&offset)[NARGS]) const {
#pragma unroll
    for (int k = 0; k < NARGS; ++k) offset[k] = 0;
#pragma unroll
    for (int d = ND - 1; d >= 0; --d) {
      U n = U(size[d]);
      U quotient = d > 0 ? linear / n : 0;
      S coordinate = S(linear - quotient * n);
      linear = quotient;
#pragma unroll
      for (int k = 0; k < NARGS; ++k) offset[k] += coordinate * S(stride[k][d]);
    }
  }
};

/// Address `offset` bytes past `base`, as a T*.
template <class T> __device__ __forceinline__ T* at(char* base, index_t offset) {
  return reinterpret_cast<T*>(base + offset);
}
template <class T> __device__ __forceinline__ const T* at(const char* base, index_t offset) {
  return reinterpret_cast<const T*>(base + offset);
}

}  // namespace xrt
