// cpp/kernels/xrt/sort_keys.cuh: order-preserving sort keys of every real dtype, the twin
// of the CPU's cpu/sort_algorithms.h. Signed integers flip the sign bit; floats map
// sign-magnitude bits to a monotone order with -0.0 taking +0.0's key and every NaN the
// largest key; descending order is the ascending order of the complemented key. Sorting
// keys stably gives the CPU's order; the canonical keys of -0.0 and NaN lose their sign
// and payload, so a value sort of floats restores zeros and NaNs from the input
// (radix_sort.cuh's fix-up), as the CPU does.
#pragma once
#include "xrt/common.cuh"

namespace xrt {
namespace sort {

/// The unsigned integer of N bytes.
template <int N> struct Unsigned;
template <> struct Unsigned<1> { typedef uint8_t type; };
template <> struct Unsigned<2> { typedef uint16_t type; };
template <> struct Unsigned<4> { typedef uint32_t type; };
template <> struct Unsigned<8> { typedef uint64_t type; };

/// The key of T: K (uint32_t for dtypes of up to 32 bits, uint64_t otherwise) to compute
/// with, S (as wide as T) to store, BITS the bits a key can differ in; of() and its
/// inverse value().
template <class T> struct Key {
  typedef typename conditional<(sizeof(T) > 4), uint64_t, uint32_t>::type K;
  typedef typename Unsigned<sizeof(T)>::type S;
  typedef S U;
  static constexpr int BITS = 8 * sizeof(T);
  static constexpr bool kFloat = false;
  static constexpr bool kSigned = T(-1) < T(0);
  static constexpr U kFlip = kSigned ? U(U(1) << (BITS - 1)) : U(0);
  __device__ static K of(T v) { return K(U(U(v) ^ kFlip)); }
  __device__ static T value(K k) { return T(U(U(k) ^ kFlip)); }
};

/// IEEE formats given as bit patterns U with exponent-all-ones mask kInf.
template <class U, U kInf> struct FloatBits {
  static constexpr int kTop = 8 * sizeof(U) - 1;
  static constexpr U kSign = U(U(1) << kTop);
  static constexpr U kMagnitude = U(~kSign);
  __device__ static bool is_nan(U u) { return U(u & kMagnitude) > kInf; }
  __device__ static bool is_zero(U u) { return U(u & kMagnitude) == 0; }
  __device__ static U key(U u) {
    u = u == kSign ? U(0) : u;
    u = is_nan(u) ? kMagnitude : u;
    return U(u ^ (U(U(0) - U(u >> kTop)) | kSign));  // negative: all bits; positive: sign
  }
  __device__ static U bits(U k) { return U(k ^ (U(~U(U(0) - U(k >> kTop))) | kSign)); }
};

template <class U, U kInf> __device__ __forceinline__ U float_key(U u) {
  return FloatBits<U, kInf>::key(u);
}

template <> struct Key<float> : FloatBits<uint32_t, 0x7f800000u> {
  typedef uint32_t K;
  typedef uint32_t S;
  typedef uint32_t U;
  static constexpr int BITS = 32;
  static constexpr bool kFloat = true;
  __device__ static U bits_of(float v) { return __float_as_uint(v); }
  __device__ static K of(float v) { return key(bits_of(v)); }
  __device__ static float value(K k) { return __uint_as_float(bits(k)); }
};
template <> struct Key<double> : FloatBits<uint64_t, 0x7ff0000000000000ull> {
  typedef uint64_t K;
  typedef uint64_t S;
  typedef uint64_t U;
  static constexpr int BITS = 64;
  static constexpr bool kFloat = true;
  __device__ static U bits_of(double v) { return uint64_t(__double_as_longlong(v)); }
  __device__ static K of(double v) { return key(bits_of(v)); }
  __device__ static double value(K k) { return __longlong_as_double((long long)bits(k)); }
};
template <> struct Key<float16> : FloatBits<uint16_t, 0x7c00> {
  typedef uint32_t K;
  typedef uint16_t S;
  typedef uint16_t U;
  static constexpr int BITS = 16;
  static constexpr bool kFloat = true;
  __device__ static U bits_of(float16 v) { return v.bits; }
  __device__ static K of(float16 v) { return key(v.bits); }
  __device__ static float16 value(K k) { return float16::from_bits(bits(uint16_t(k))); }
};
template <> struct Key<bfloat16> : FloatBits<uint16_t, 0x7f80> {
  typedef uint32_t K;
  typedef uint16_t S;
  typedef uint16_t U;
  static constexpr int BITS = 16;
  static constexpr bool kFloat = true;
  __device__ static U bits_of(bfloat16 v) { return v.bits; }
  __device__ static K of(bfloat16 v) { return key(v.bits); }
  __device__ static bfloat16 value(K k) { return bfloat16::from_bits(bits(uint16_t(k))); }
};

/// All BITS bits of a key of T set.
template <class T> struct KeyMask {
  typedef typename Key<T>::K K;
  static constexpr K value = Key<T>::BITS == 8 * sizeof(K) ? K(~K(0)) : K((K(1) << Key<T>::BITS) - 1);
};

/// The key of v, complemented (within BITS) for a descending sort.
template <class T> __device__ __forceinline__ typename Key<T>::K key_of(T v, bool descending) {
  typedef typename Key<T>::K K;
  K k = Key<T>::of(v);
  return descending ? K(~k & KeyMask<T>::value) : k;
}

/// The value whose key_of(., descending) is k (the canonical value for -0.0 and NaN).
template <class T>
__device__ __forceinline__ T value_of_key(typename Key<T>::K k, bool descending) {
  typedef typename Key<T>::K K;
  return Key<T>::value(descending ? K(~k & KeyMask<T>::value) : k);
}

}  // namespace sort
}  // namespace xrt
