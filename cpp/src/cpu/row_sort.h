// cpp/src/cpu/row_sort.h: sorting one strided row of any dtype, the building block of the
// sort, argsort and unique kernels.
//
// RowSorter<T> owns its scratch buffers, so one instance serves many rows of a kernel
// call (one instance per thread). Real dtypes go through their sort keys
// (sort_algorithms.h):
// - sort: keys are sorted and turned back into values; the canonical keys of -0.0 and
//   NaN lose their sign and payload bits, so a row that holds either gets a fix-up pass
//   that rewrites the block of zeros and the block of NaNs from the input, in input order
//   (what a stable sort of the values would have produced).
// - argsort: keys of at most 32 bits are packed with the index into one 64-bit word
//   (key high, index low), so any sort of the words is a stable argsort. 64-bit keys
//   are packed by the top 32 of the bits in which they differ, and every run of equal
//   tops is then sorted again by the remaining bits (random floats: few short runs;
//   integers within a range of 2^32: no second pass at all).
// Complex rows (used by unique) sort by the keys of their real and imaginary parts with
// std::stable_sort, in NumPy's order.
#pragma once
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "cpu/sort_algorithms.h"

namespace xrt::cpu::sorting {

/// A strided row: element i is at data + i * step (bytes).
template <class T> struct Row {
  const char* data;
  int64_t step;
  const T& operator[](int64_t i) const { return *reinterpret_cast<const T*>(data + i * step); }
};

template <class T> class RowSorter {
 public:
  using Key = key_t<T>;
  static constexpr Key kAll = Key(~Key(0));

  /// avx512: whether 32/64-bit keys may go through the AVX-512 sort (else radix sort).
  explicit RowSorter(bool avx512 = have_avx512_sort()) : avx512_(avx512 && have_avx512_sort()) {}

  /// out[i * out_step] = the i-th smallest (largest when descending) element of x.
  void sort(Row<T> x, int64_t n, char* out, int64_t out_step, bool descending) {
    if (n == 0) return;
    const Key flip = descending ? kAll : Key(0);
    // A contiguous output doubles as the key buffer: keys in, sorted, bits out in place.
    const bool in_place = out_step == int64_t(sizeof(T));
    Key* keys = in_place ? reinterpret_cast<Key*>(out) : buffer(keys_, n);
    bool special = encode(x, n, keys, flip);
    const Key* sorted = sort_keys(keys, n);
    if (in_place) {
      decode_bits<T>(sorted, n, keys, flip);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(out + i * out_step) = SortKey<T>::value(Key(sorted[i] ^ flip));
    }
    if constexpr (SortKey<T>::kFloat) {
      if (special) restore_zeros_and_nans(x, n, out, out_step, descending);
    }
  }

  /// out[i * out_step] = the index of the i-th element in sort()'s order; the keys in that
  /// order go to sorted_keys when given.
  void argsort(Row<T> x, int64_t n, int64_t* out, int64_t out_step, bool descending,
               Key* sorted_keys = nullptr) {
    if (n == 0) return;
    const Key flip = descending ? kAll : Key(0);
    if (n > int64_t(UINT32_MAX)) return argsort_long(x, n, out, out_step, sorted_keys, flip);
    uint64_t* words = buffer(words_, n);
    if constexpr (sizeof(Key) <= 4) {
      if (x.step == int64_t(sizeof(T))) {
        encode_words(reinterpret_cast<const T*>(x.data), n, words, flip);
      } else {
        for (int64_t i = 0; i < n; ++i)
          words[i] = uint64_t(Key(SortKey<T>::of(x[i]) ^ flip)) << 32 | uint64_t(i);
      }
      sort_words(words, n, 8 * sizeof(Key));
      write_indices(words, n, out, out_step);
      if (sorted_keys)
        for (int64_t i = 0; i < n; ++i) sorted_keys[i] = Key(Key(words[i] >> 32) ^ flip);
    } else {
      // 64-bit keys: sort by the top 32 of the bits in which the keys differ, then each
      // run of equal tops by the rest. Keys in a range of 2^32 need one sort.
      Key* keys = buffer(keys_, n);
      encode(x, n, keys, flip);
      Key low = keys[0], high = keys[0];
      for (int64_t i = 1; i < n; ++i) {
        low = std::min(low, keys[i]);
        high = std::max(high, keys[i]);
      }
      int bits = high == low ? 0 : 64 - std::countl_zero(uint64_t(high - low));
      int shift = std::max(0, bits - 32);
      for (int64_t i = 0; i < n; ++i)
        words[i] = uint64_t(keys[i] - low) >> shift << 32 | uint64_t(i);
      sort_words(words, n, bits - shift);
      if (shift > 0) sort_runs_by_low_bits(words, n, keys, low, shift);
      write_indices(words, n, out, out_step);
      if (sorted_keys)
        for (int64_t i = 0; i < n; ++i) sorted_keys[i] = Key(keys[words[i] & UINT32_MAX] ^ flip);
    }
  }

 private:
  template <class V> static V* buffer(std::vector<V>& v, int64_t n) {
    if (int64_t(v.size()) < n) v.resize(static_cast<size_t>(n));
    return v.data();
  }

  // keys[i] = key(x[i]) ^ flip; whether x holds -0.0 or NaN.
  static bool encode(Row<T> x, int64_t n, Key* keys, Key flip) {
    if (x.step == int64_t(sizeof(T)))
      return encode_keys(reinterpret_cast<const T*>(x.data), n, keys, flip);
    Key special = 0;
    for (int64_t i = 0; i < n; ++i) {
      keys[i] = Key(SortKey<T>::of(x[i]) ^ flip);
      if constexpr (SortKey<T>::kFloat) special |= Key(SortKey<T>::special(SortKey<T>::bits(x[i])));
    }
    return special != 0;
  }

  // Sorts keys in place, or into key_tmp_; returns where they are.
  const Key* sort_keys(Key* keys, int64_t n) {
    if constexpr (sizeof(Key) >= 4) {
      if (n > 4 && avx512_) {
        avx512_sort(keys, n);
        return keys;
      }
    }
    if (n <= 16) {
      insertion_sort(keys, n);
      return keys;
    }
    return radix_sort(keys, buffer(key_tmp_, n), n);
  }

  /// Sorts (key << 32 | index) words whose keys have at most key_bits bits.
  void sort_words(uint64_t* words, int64_t n, int key_bits) {
    if (n > 4 && key_bits > 16 && avx512_) return avx512_sort(words, n);
    if (n <= 16) return insertion_sort(words, n);
    const uint64_t* sorted = radix_sort(words, buffer(word_tmp_, n), n, /*low_bit=*/32);
    if (sorted != words) std::copy(sorted, sorted + n, words);
  }

  // words are sorted by the bits of (keys - low) above shift; orders each run of equal
  // tops by the bits below. A sorted run keeps only its indices (the scan is past it).
  void sort_runs_by_low_bits(uint64_t* words, int64_t n, const Key* keys, Key low, int shift) {
    const uint64_t mask = (uint64_t(1) << shift) - 1;
    for (int64_t begin = 0, end; begin < n; begin = end) {
      for (end = begin + 1; end < n && (words[end] >> 32) == (words[begin] >> 32); ++end) {}
      if (end - begin < 2) continue;
      for (int64_t i = begin; i < end; ++i) {
        uint64_t index = words[i] & UINT32_MAX;
        words[i] = (uint64_t(keys[index] - low) & mask) << 32 | index;
      }
      sort_words(words + begin, end - begin, shift);
    }
  }

  static void write_indices(const uint64_t* words, int64_t n, int64_t* out, int64_t out_step) {
    if (out_step == 1) {
      for (int64_t i = 0; i < n; ++i) out[i] = int64_t(words[i] & UINT32_MAX);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i * out_step] = int64_t(words[i] & UINT32_MAX);
    }
  }

  // Rows of 2^32 elements and more: (key, index) pairs through the radix sort.
  void argsort_long(Row<T> x, int64_t n, int64_t* out, int64_t out_step, Key* sorted_keys,
                    Key flip) {
    Key* keys = buffer(keys_, n);
    encode(x, n, keys, flip);
    std::vector<uint64_t> index(static_cast<size_t>(n)), index_tmp(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) index[i] = uint64_t(i);
    const Key* sorted = keys;
    const uint64_t* order = index.data();
    if (radix_sort_pairs(keys, index.data(), buffer(key_tmp_, n), index_tmp.data(), n)) {
      sorted = key_tmp_.data();
      order = index_tmp.data();
    }
    for (int64_t i = 0; i < n; ++i) out[i * out_step] = int64_t(order[i]);
    if (sorted_keys)
      for (int64_t i = 0; i < n; ++i) sorted_keys[i] = Key(sorted[i] ^ flip);
  }

  // The zeros and NaNs of the output, rewritten from x in input order.
  void restore_zeros_and_nans(Row<T> x, int64_t n, char* out, int64_t out_step,
                              bool descending) {
    using K = SortKey<T>;
    const Key zero_key = K::of(T(0.0f));
    int64_t below = 0, zeros = 0, nans = 0;
    for (int64_t i = 0; i < n; ++i) {
      Key k = K::of(x[i]);
      nans += K::is_nan(K::bits(x[i]));
      zeros += k == zero_key;
      below += k < zero_key;
    }
    int64_t above = n - below - zeros - nans;
    int64_t zero_at = descending ? nans + above : below;
    int64_t nan_at = descending ? 0 : n - nans;
    for (int64_t i = 0; i < n; ++i) {
      auto u = K::bits(x[i]);
      if (K::is_nan(u)) *reinterpret_cast<T*>(out + nan_at++ * out_step) = x[i];
      else if (K::of(x[i]) == zero_key) *reinterpret_cast<T*>(out + zero_at++ * out_step) = x[i];
    }
  }

  bool avx512_;
  std::vector<Key> keys_, key_tmp_;
  std::vector<uint64_t> words_, word_tmp_;
};

/// Complex rows: NumPy's order, lexicographic by (real, imaginary) within the classes
/// R + Rj < R + NaNj < NaN + Rj < NaN + NaNj.
template <class F> class RowSorter<std::complex<F>> {
 public:
  explicit RowSorter(bool = false) {}
  using Key = key_t<F>;
  struct Pair {
    Key re, im;
    int nan_class() const { return (re == Key(~Key(0))) * 2 + (im == Key(~Key(0))); }
    bool operator<(const Pair& o) const {
      int a = nan_class(), b = o.nan_class();
      if (a != b) return a < b;
      return re != o.re ? re < o.re : im < o.im;
    }
  };

  void argsort(Row<std::complex<F>> x, int64_t n, int64_t* out, int64_t out_step,
               bool descending, Pair* sorted_keys = nullptr) {
    keys_.resize(static_cast<size_t>(n));
    order_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      keys_[i] = {SortKey<F>::of(x[i].real()), SortKey<F>::of(x[i].imag())};
      order_[i] = i;
    }
    std::stable_sort(order_.begin(), order_.end(), [&](int64_t a, int64_t b) {
      return descending ? keys_[b] < keys_[a] : keys_[a] < keys_[b];
    });
    for (int64_t i = 0; i < n; ++i) {
      out[i * out_step] = order_[i];
      if (sorted_keys) sorted_keys[i] = keys_[order_[i]];
    }
  }

 private:
  std::vector<Pair> keys_;
  std::vector<int64_t> order_;
};

}  // namespace xrt::cpu::sorting
