// cpp/src/cpu/sort_algorithms.h: order-preserving keys and the sorts that run on them.
//
// Every real dtype maps to an unsigned key whose integer order is the sort order:
// - signed integers flip the sign bit; bool and unsigned integers are their own keys;
// - floats (float16, bfloat16, float32, float64) map sign-magnitude bits to a monotone
//   unsigned order, with two canonicalisations: -0.0 takes +0.0's key (they compare
//   equal, so a stable sort keeps them in input order) and every NaN takes the largest
//   key (NaNs sort last ascending, first descending, among themselves in input order).
// - descending order is ascending order of ~key, which keeps stability.
// Sorting keys instead of values lets one integer sort serve every dtype: an LSD radix
// sort (stable, O(n)) everywhere, and a vectorised quicksort on AVX-512 machines for
// 32/64-bit keys (sort_avx512.cpp), where stability is either unobservable (sorting
// values) or built into the key (argsort packs key and index into one 64-bit word).
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "xpuruntime/half.h"

namespace xrt::cpu::sorting {

template <class T> struct SortKey;  // using type; static type of(T); static T value(type)

template <class T> struct IntegerKey {
  using type = std::make_unsigned_t<T>;
  static constexpr type kFlip = std::is_signed_v<T> ? type(type(1) << (8 * sizeof(T) - 1)) : 0;
  static constexpr bool kFloat = false;
  static type of(T v) { return type(type(v) ^ kFlip); }
  static T value(type k) { return T(type(k ^ kFlip)); }
  static type bits_of_key(type k) { return type(k ^ kFlip); }
};
template <> struct SortKey<int8_t> : IntegerKey<int8_t> {};
template <> struct SortKey<int16_t> : IntegerKey<int16_t> {};
template <> struct SortKey<int32_t> : IntegerKey<int32_t> {};
template <> struct SortKey<int64_t> : IntegerKey<int64_t> {};
template <> struct SortKey<uint8_t> : IntegerKey<uint8_t> {};
template <> struct SortKey<uint16_t> : IntegerKey<uint16_t> {};
template <> struct SortKey<uint32_t> : IntegerKey<uint32_t> {};
template <> struct SortKey<uint64_t> : IntegerKey<uint64_t> {};
template <> struct SortKey<bool> {
  using type = uint8_t;
  static constexpr bool kFloat = false;
  static type of(bool v) { return v; }
  static bool value(type k) { return k != 0; }
  static type bits_of_key(type k) { return k; }
};

/// Keys of IEEE formats given as bit patterns U with exponent-all-ones mask kInf.
/// Branch-free, so that the loops over them vectorise.
template <class T, class U, U kInf> struct FloatKey {
  using type = U;
  static constexpr bool kFloat = true;
  static constexpr int kTop = 8 * sizeof(U) - 1;
  static constexpr U kSign = U(U(1) << kTop);
  static constexpr U kMagnitude = U(~kSign);
  static U bits(T v) { return std::bit_cast<U>(v); }
  static bool is_nan(U u) { return U(u & kMagnitude) > kInf; }
  /// -0.0 or NaN: the values whose bits the canonical keys do not keep.
  static bool special(U u) { return (u == kSign) | is_nan(u); }
  static U key_of_bits(U u) {
    u = u == kSign ? U(0) : u;
    u = is_nan(u) ? kMagnitude : u;
    return U(u ^ (U(U(0) - U(u >> kTop)) | kSign));  // negative: all bits; positive: sign
  }
  static U bits_of_key(U k) { return U(k ^ (U(~U(U(0) - U(k >> kTop))) | kSign)); }
  static U of(T v) { return key_of_bits(bits(v)); }
  static T value(U k) { return std::bit_cast<T>(bits_of_key(k)); }
};
template <> struct SortKey<float> : FloatKey<float, uint32_t, 0x7f800000u> {};
template <> struct SortKey<double> : FloatKey<double, uint64_t, 0x7ff0000000000000ull> {};
template <> struct SortKey<Float16> : FloatKey<Float16, uint16_t, 0x7c00> {};
template <> struct SortKey<BFloat16> : FloatKey<BFloat16, uint16_t, 0x7f80> {};

template <class T> using key_t = typename SortKey<T>::type;

// ---- Contiguous conversions ----------------------------------------------------------
//
// The loops between values and keys, written to vectorise. sort_keys.cpp compiles them
// per ISA for the 32/64-bit dtypes (non-template overloads, chosen first); the other
// dtypes use the templates.

/// keys[i] = key(x[i]) ^ flip; returns whether some x[i] is -0.0 or NaN.
template <class T> bool encode_keys(const T* x, int64_t n, key_t<T>* keys, key_t<T> flip) {
  using K = SortKey<T>;
  key_t<T> special = 0;
  for (int64_t i = 0; i < n; ++i) {
    keys[i] = key_t<T>(K::of(x[i]) ^ flip);
    if constexpr (K::kFloat) special |= key_t<T>(K::special(K::bits(x[i])));
  }
  return special != 0;
}
/// words[i] = (key(x[i]) ^ flip) << 32 | i, for keys of at most 32 bits.
template <class T> void encode_words(const T* x, int64_t n, uint64_t* words, key_t<T> flip) {
  for (int64_t i = 0; i < n; ++i)
    words[i] = uint64_t(key_t<T>(SortKey<T>::of(x[i]) ^ flip)) << 32 | uint64_t(i);
}
/// bits[i] = the bit pattern of the value of keys[i] ^ flip (bits may be keys).
template <class T>
void decode_bits(const key_t<T>* keys, int64_t n, key_t<T>* bits, key_t<T> flip) {
  for (int64_t i = 0; i < n; ++i) bits[i] = SortKey<T>::bits_of_key(key_t<T>(keys[i] ^ flip));
}

bool encode_keys(const float* x, int64_t n, uint32_t* keys, uint32_t flip);
bool encode_keys(const double* x, int64_t n, uint64_t* keys, uint64_t flip);
bool encode_keys(const int32_t* x, int64_t n, uint32_t* keys, uint32_t flip);
bool encode_keys(const int64_t* x, int64_t n, uint64_t* keys, uint64_t flip);
void encode_words(const float* x, int64_t n, uint64_t* words, uint32_t flip);
void encode_words(const int32_t* x, int64_t n, uint64_t* words, uint32_t flip);
void encode_words(const uint32_t* x, int64_t n, uint64_t* words, uint32_t flip);

// ---- Small inputs ---------------------------------------------------------------------

/// Stable insertion sort of keys.
template <class K> void insertion_sort(K* keys, int64_t n) {
  for (int64_t i = 1; i < n; ++i) {
    K k = keys[i];
    int64_t j = i;
    for (; j > 0 && keys[j - 1] > k; --j) keys[j] = keys[j - 1];
    keys[j] = k;
  }
}

// ---- LSD radix sort -------------------------------------------------------------------
//
// - One read pass finds the range of the keys; only the bits in which keys differ from the
//   minimum are sorted on (int64 data in a small range takes two passes, not eight).
// - A second read pass builds the histograms of every digit at once.
// - Digits are 8 bits for short inputs (cheap histograms) and up to 11 bits for long
//   ones (fewer passes); a digit whose histogram holds a single bucket is skipped.

namespace detail {

template <int P, class K, class Count, class Move>
bool radix_passes(const K* keys, int64_t n, int low_bit, K low, int width, Move&& move) {
  const int buckets = 1 << width;
  const K mask = K((K(1) << width) - 1);
  Count stack_hist[P][1 << 11];
  for (int p = 0; p < P; ++p) std::fill(stack_hist[p], stack_hist[p] + buckets, Count(0));
  for (int64_t i = 0; i < n; ++i) {
    K k = K(K(keys[i] >> low_bit) - low);
    for (int p = 0; p < P; ++p) ++stack_hist[p][(k >> (p * width)) & mask];
  }
  bool swapped = false;
  for (int p = 0; p < P; ++p) {
    Count* h = stack_hist[p];
    const int shift = p * width;
    K first = K(K(keys[0] >> low_bit) - low);
    if (h[(first >> shift) & mask] == Count(n)) continue;  // one bucket: nothing moves
    Count sum = 0;
    for (int d = 0; d < buckets; ++d) {
      Count c = h[d];
      h[d] = sum;
      sum += c;
    }
    move([=](K key) { return h[(K(K(key >> low_bit) - low) >> shift) & mask]++; });
    swapped = !swapped;
  }
  return swapped;
}

// Which bits of keys (from low_bit up) vary, and their minimum.
template <class K> int varying_bits(const K* keys, int64_t n, int low_bit, K& low) {
  K lo = K(keys[0] >> low_bit), hi = lo;
  for (int64_t i = 1; i < n; ++i) {
    K k = K(keys[i] >> low_bit);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  low = lo;
  K span = K(hi - lo);
  return span == 0 ? 0 : int(8 * sizeof(K)) - std::countl_zero(span);
}

template <class K, class Count, class Move>
bool radix_dispatch(const K* keys, int64_t n, int low_bit, Move&& move) {
  K low;
  int bits = varying_bits(keys, n, low_bit, low);
  if (bits == 0) return false;
  int max_width = n < 4096 ? 8 : 11;
  int passes = (bits + max_width - 1) / max_width;
  int width = (bits + passes - 1) / passes;
  switch (passes) {
    case 1: return radix_passes<1, K, Count>(keys, n, low_bit, low, width, move);
    case 2: return radix_passes<2, K, Count>(keys, n, low_bit, low, width, move);
    case 3: return radix_passes<3, K, Count>(keys, n, low_bit, low, width, move);
    case 4: return radix_passes<4, K, Count>(keys, n, low_bit, low, width, move);
    case 5: return radix_passes<5, K, Count>(keys, n, low_bit, low, width, move);
    case 6: return radix_passes<6, K, Count>(keys, n, low_bit, low, width, move);
    case 7: return radix_passes<7, K, Count>(keys, n, low_bit, low, width, move);
    default: return radix_passes<8, K, Count>(keys, n, low_bit, low, width, move);
  }
}

}  // namespace detail

/// Stable sort of keys[0, n) by their bits from low_bit up; tmp holds n more keys.
/// Returns the array that holds the result (keys or tmp).
template <class K> K* radix_sort(K* keys, K* tmp, int64_t n, int low_bit = 0) {
  if (n < 2) return keys;
  K* src = keys;
  K* dst = tmp;
  auto move = [&](auto&& slot) {
    for (int64_t i = 0; i < n; ++i) {
      K k = src[i];
      dst[slot(k)] = k;
    }
    std::swap(src, dst);
  };
  if (n < (int64_t(1) << 32)) detail::radix_dispatch<K, uint32_t>(keys, n, low_bit, move);
  else detail::radix_dispatch<K, uint64_t>(keys, n, low_bit, move);
  return src;
}

/// Stable sort of (keys, index) pairs by key; key_tmp and index_tmp hold n more each.
/// Returns true when the result is in the tmp arrays.
template <class K, class I>
bool radix_sort_pairs(K* keys, I* index, K* key_tmp, I* index_tmp, int64_t n) {
  if (n < 2) return false;
  K* ks = keys;
  K* kd = key_tmp;
  I* is = index;
  I* id = index_tmp;
  auto move = [&](auto&& slot) {
    for (int64_t i = 0; i < n; ++i) {
      K k = ks[i];
      auto s = slot(k);
      kd[s] = k;
      id[s] = is[i];
    }
    std::swap(ks, kd);
    std::swap(is, id);
  };
  if (n < (int64_t(1) << 32)) return detail::radix_dispatch<K, uint32_t>(keys, n, 0, move);
  return detail::radix_dispatch<K, uint64_t>(keys, n, 0, move);
}

// ---- Vectorised quicksort (sort_avx512.cpp) ------------------------------------------

/// Whether this CPU runs the AVX-512 sorts (checked once).
bool have_avx512_sort();
/// In-place ascending sorts of unsigned keys; only when have_avx512_sort().
void avx512_sort(uint32_t* keys, int64_t n);
void avx512_sort(uint64_t* keys, int64_t n);

}  // namespace xrt::cpu::sorting
