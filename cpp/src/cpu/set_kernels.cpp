// cpp/src/cpu/set_kernels.cpp: unique and isin, on the sort keys of row_sort.h.
//
// unique: groups are runs of equal keys, except that every NaN (every complex value with a
// NaN part) is a group of its own. -0.0 and +0.0 share a key, so they form one group,
// whose value is the first in input order.
// - Keys of at most 16 bits (bool, 8/16-bit types) with many elements: a table per key
//   (count, first index), read in key order; two passes over x, no sort.
// - Without index outputs: the values are sorted in place in the values output and
//   compacted group by group.
// - Otherwise a stable argsort gives each group's first index (its smallest) and the
//   inverse.
// isin: the keys of x2 (NaN-free) become a set: a table of flags when they are integers in
// a short range, else a sorted array that each element of x1 is binary-searched in.
// NaN is never found.
#include <algorithm>
#include <vector>

#include "core/host/dtype_dispatch.h"
#include "cpu/loops.h"
#include "cpu/row_sort.h"
#include "cpu/set_kernels.h"
#include "xpuruntime/sorting.h"

namespace xrt::cpu {

using host::visit_dtype;

namespace {

using sorting::Row;
using sorting::RowSorter;
using sorting::SortKey;

// Sort keys of real and complex values, and which keys stand for NaNs.
template <class T> struct Keys {
  using Key = sorting::key_t<T>;
  static constexpr bool kInteger = !SortKey<T>::kFloat;
  static Key of(const T& v) { return SortKey<T>::of(v); }
  static bool is_nan(Key k) {
    if constexpr (SortKey<T>::kFloat) return k == Key(~Key(0));  // the canonical NaN key
    else return false;
  }
};
template <class F> struct Keys<std::complex<F>> {
  using Key = typename RowSorter<std::complex<F>>::Pair;
  static constexpr bool kInteger = false;
  static Key of(const std::complex<F>& v) {
    return {SortKey<F>::of(v.real()), SortKey<F>::of(v.imag())};
  }
  static bool is_nan(Key k) { return Keys<F>::is_nan(k.re) || Keys<F>::is_nan(k.im); }
};

template <class Key> bool same_key(const Key& a, const Key& b) { return !(a < b) && !(b < a); }

/// The outputs of unique that were asked for (null when not).
template <class T> struct UniqueOutputs {
  T* values;
  int64_t *indices, *inverse, *counts;
  int64_t groups = 0;

  /// Opens a group whose first element is x[index] with the given value.
  void open(const T& value, int64_t index, int64_t count) {
    values[groups] = value;
    if (indices) indices[groups] = index;
    if (counts) counts[groups] = count;
    ++groups;
  }
};

template <class T> void unique_by_table(Row<T> x, int64_t n, UniqueOutputs<T>& out) {
  using K = Keys<T>;
  constexpr size_t kTable = size_t(1) << (8 * sizeof(typename K::Key));
  std::vector<int64_t> count(kTable, 0), first(kTable, 0);
  std::vector<int64_t> nans;
  for (int64_t i = 0; i < n; ++i) {
    auto k = K::of(x[i]);
    if (K::is_nan(k)) {
      nans.push_back(i);
    } else if (count[k]++ == 0) {
      first[k] = i;
    }
  }
  std::vector<int64_t>& group = count;  // reused: key -> its group, once counted
  for (size_t k = 0; k < kTable; ++k) {
    if (count[k] == 0) continue;
    out.open(x[first[k]], first[k], count[k]);
    group[k] = out.groups - 1;
  }
  int64_t first_nan_group = out.groups;
  for (int64_t i : nans) out.open(x[i], i, 1);
  if (!out.inverse) return;
  for (int64_t i = 0, nan = 0; i < n; ++i) {
    auto k = K::of(x[i]);
    out.inverse[i] = K::is_nan(k) ? first_nan_group + nan++ : group[k];
  }
}

template <class T> void unique_by_sort(Row<T> x, int64_t n, UniqueOutputs<T>& out) {
  using K = Keys<T>;
  RowSorter<T> sorter;
  if constexpr (!detail::is_complex_v<T>) {
    if (!out.indices && !out.inverse) {
      T* values = out.values;  // sorted in place, then compacted
      sorter.sort(x, n, reinterpret_cast<char*>(values), int64_t(sizeof(T)), false);
      auto previous = K::of(values[0]);
      for (int64_t i = 1, start = 0; i <= n; ++i) {
        auto k = i < n ? K::of(values[i]) : previous;
        if (i < n && k == previous && !K::is_nan(k)) continue;
        out.open(values[start], start, i - start);
        start = i;
        previous = k;
      }
      return;
    }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<typename K::Key> keys(static_cast<size_t>(n));
  sorter.argsort(x, n, order.data(), 1, false, keys.data());
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || !same_key(keys[i], keys[i - 1]) || K::is_nan(keys[i]))
      out.open(x[order[i]], order[i], 0);
    if (out.counts) ++out.counts[out.groups - 1];
    if (out.inverse) out.inverse[order[i]] = out.groups - 1;
  }
}

template <class T> void unique_typed(const KernelCall& call) {
  const Tensor& x = call.in(0);
  int64_t n = x.shape()[0];
  Row<T> row{x.data(), x.strides()[0] * int64_t(sizeof(T))};
  auto index_output = [&](int i) {
    return n && call.outputs[i].numel() ? reinterpret_cast<int64_t*>(call.outputs[i].data())
                                        : nullptr;
  };
  UniqueOutputs<T> out{reinterpret_cast<T*>(call.outputs[0].data()), index_output(1),
                       index_output(2), index_output(3)};
  constexpr int64_t kKeyBits = 8 * sizeof(typename Keys<T>::Key);
  if constexpr (kKeyBits <= 16) {
    if (n > 0 && (kKeyBits <= 8 || n >= (int64_t(1) << kKeyBits) / 16)) {
      unique_by_table(row, n, out);
      n = 0;
    }
  }
  if (n > 0) unique_by_sort(row, n, out);
  *reinterpret_cast<int64_t*>(call.outputs[4].data()) = out.groups;
}

/// The set of keys of x2, as a table of flags or a sorted array.
template <class T> class KeySet {
 public:
  using Key = typename Keys<T>::Key;

  KeySet(Row<T> x, int64_t n, int64_t lookups) {
    keys_.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      Key k = Keys<T>::of(x[i]);
      if (!Keys<T>::is_nan(k)) keys_.push_back(k);
    }
    if (keys_.empty()) return;
    if constexpr (Keys<T>::kInteger) {
      auto [low, high] = std::minmax_element(keys_.begin(), keys_.end());
      uint64_t span = uint64_t(*high - *low);
      if (span < std::max<uint64_t>(uint64_t(1) << 16, 4 * uint64_t(n + lookups))) {
        low_ = *low;
        flags_.assign(span + 1, 0);
        for (Key k : keys_) flags_[size_t(Key(k - low_))] = 1;
        return;
      }
    }
    sort_keys();
  }

  bool contains(Key k) const {
    if constexpr (Keys<T>::kInteger) {
      if (!flags_.empty()) {
        uint64_t offset = uint64_t(Key(k - low_));  // wraps past the end below low_
        return offset < flags_.size() && flags_[offset];
      }
    }
    if (Keys<T>::is_nan(k)) return false;
    // Branch-free lower bound.
    const Key* first = keys_.data();
    size_t count = keys_.size();
    while (count > 0) {
      size_t half = count / 2;
      bool less = first[half] < k;
      first = less ? first + half + 1 : first;
      count = less ? count - half - 1 : half;
    }
    return first != keys_.data() + keys_.size() && same_key(*first, k);
  }

 private:
  void sort_keys() {
    if constexpr (!detail::is_complex_v<T>) {
      if constexpr (sizeof(Key) >= 4) {
        if (keys_.size() > 16 && sorting::have_avx512_sort()) {
          sorting::avx512_sort(keys_.data(), int64_t(keys_.size()));
          return dedupe();
        }
      }
      std::vector<Key> tmp(keys_.size());
      Key* sorted = sorting::radix_sort(keys_.data(), tmp.data(), int64_t(keys_.size()));
      if (sorted != keys_.data()) keys_.swap(tmp);
    } else {
      std::sort(keys_.begin(), keys_.end());
    }
    dedupe();
  }
  void dedupe() {
    keys_.erase(std::unique(keys_.begin(), keys_.end(), same_key<Key>), keys_.end());
  }

  std::vector<Key> keys_;
  std::vector<uint8_t> flags_;  // flags_[k - low_] when the keys are a short integer range
  Key low_{};
};

template <class T> void isin_typed(const KernelCall& call) {
  const Tensor& x2 = call.in(1);
  KeySet<T> set(Row<T>{x2.data(), x2.strides()[0] * int64_t(sizeof(T))}, x2.numel(),
                call.in(0).numel());
  const bool invert = static_cast<const SortingAttrs&>(*call.attrs).invert;
  for_each_run<2>({&call.out(), &call.in(0)}, [&](const std::array<char*, 2>& p,
                                                  const std::array<int64_t, 2>& s, int64_t m) {
    for (int64_t i = 0; i < m; ++i) {
      bool in = set.contains(Keys<T>::of(*reinterpret_cast<const T*>(p[1] + i * s[1])));
      *reinterpret_cast<bool*>(p[0] + i * s[0]) = in != invert;
    }
  });
}

}  // namespace

void unique_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(),
              [&](auto tag) { unique_typed<typename decltype(tag)::type>(call); });
}

void isin_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(),
              [&](auto tag) { isin_typed<typename decltype(tag)::type>(call); });
}

}  // namespace xrt::cpu
