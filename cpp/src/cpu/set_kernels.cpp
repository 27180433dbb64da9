// cpp/src/cpu/set_kernels.cpp: unique and isin, on the sort keys of row_sort.h.
//
// unique: without index outputs, the values are sorted in place in the values output and
// compacted group by group; with them, a stable argsort gives each group's first index
// (its smallest) and the inverse. Groups are runs of equal keys, except that every NaN
// (every complex value with a NaN part) is a group of its own. -0.0 and +0.0 share a key,
// so they form one group, whose value is the first in input order.
// isin: the distinct keys of x2, NaN-free, are sorted once; each element of x1 is a
// binary search (NaN is never found).
#include <algorithm>
#include <vector>

#include "cpu/dtype_dispatch.h"
#include "cpu/loops.h"
#include "cpu/row_sort.h"
#include "cpu/set_kernels.h"
#include "xpuruntime/sorting.h"

namespace xrt::cpu {
namespace {

using sorting::Row;
using sorting::RowSorter;
using sorting::SortKey;

// Sort keys of real and complex values, and which keys stand for NaNs.
template <class T> struct Keys {
  using Key = sorting::key_t<T>;
  static Key of(const T& v) { return SortKey<T>::of(v); }
  static bool is_nan(Key k) {
    if constexpr (SortKey<T>::kFloat) return k == Key(~Key(0));  // the canonical NaN key
    else return false;
  }
};
template <class F> struct Keys<std::complex<F>> {
  using Key = typename RowSorter<std::complex<F>>::Pair;
  static Key of(const std::complex<F>& v) { return {SortKey<F>::of(v.real()), SortKey<F>::of(v.imag())}; }
  static bool is_nan(Key k) { return Keys<F>::is_nan(k.re) || Keys<F>::is_nan(k.im); }
};

template <class Key> bool same_key(const Key& a, const Key& b) { return !(a < b) && !(b < a); }

template <class T> void unique_typed(const KernelCall& call) {
  using K = Keys<T>;
  const Tensor& x = call.in(0);
  const int64_t n = x.shape()[0];
  Row<T> row{x.data(), x.strides()[0] * int64_t(sizeof(T))};
  T* values = reinterpret_cast<T*>(call.outputs[0].data());
  int64_t* indices = n && call.outputs[1].numel() ? reinterpret_cast<int64_t*>(call.outputs[1].data()) : nullptr;
  int64_t* inverse = n && call.outputs[2].numel() ? reinterpret_cast<int64_t*>(call.outputs[2].data()) : nullptr;
  int64_t* counts = n && call.outputs[3].numel() ? reinterpret_cast<int64_t*>(call.outputs[3].data()) : nullptr;
  int64_t& found = *reinterpret_cast<int64_t*>(call.outputs[4].data());
  found = 0;
  if (n == 0) return;
  RowSorter<T> sorter;
  int64_t groups = 0;
  if constexpr (!detail::is_complex_v<T>) {
    if (!indices && !inverse) {
      sorter.sort(row, n, reinterpret_cast<char*>(values), int64_t(sizeof(T)), false);
      auto previous = K::of(values[0]);
      int64_t start = 0;
      for (int64_t i = 1; i <= n; ++i) {
        auto k = i < n ? K::of(values[i]) : previous;
        if (i < n && k == previous && !K::is_nan(k)) continue;
        values[groups] = values[start];
        if (counts) counts[groups] = i - start;
        ++groups;
        start = i;
        previous = k;
      }
      found = groups;
      return;
    }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<typename K::Key> keys(static_cast<size_t>(n));
  sorter.argsort(row, n, order.data(), 1, false, keys.data());
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || !same_key(keys[i], keys[i - 1]) || K::is_nan(keys[i])) {
      values[groups] = row[order[i]];
      if (indices) indices[groups] = order[i];
      if (counts) counts[groups] = 0;
      ++groups;
    }
    if (counts) ++counts[groups - 1];
    if (inverse) inverse[order[i]] = groups - 1;
  }
  found = groups;
}

template <class T> void isin_typed(const KernelCall& call) {
  using K = Keys<T>;
  using Key = typename K::Key;
  const Tensor& x2 = call.in(1);
  Row<T> row{x2.data(), x2.strides()[0] * int64_t(sizeof(T))};
  std::vector<Key> keys;
  keys.reserve(static_cast<size_t>(x2.numel()));
  for (int64_t i = 0; i < x2.numel(); ++i) {
    Key k = K::of(row[i]);
    if (!K::is_nan(k)) keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end(), same_key<Key>), keys.end());
  const bool invert = static_cast<const SortingAttrs&>(*call.attrs).invert;
  for_each_run<2>({&call.out(), &call.in(0)}, [&](const std::array<char*, 2>& p,
                                                  const std::array<int64_t, 2>& s, int64_t m) {
    for (int64_t i = 0; i < m; ++i) {
      Key k = K::of(*reinterpret_cast<const T*>(p[1] + i * s[1]));
      bool in = !K::is_nan(k) && std::binary_search(keys.begin(), keys.end(), k);
      *reinterpret_cast<bool*>(p[0] + i * s[0]) = in != invert;
    }
  });
}

}  // namespace

void unique_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(), [&](auto tag) { unique_typed<typename decltype(tag)::type>(call); });
}

void isin_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(), [&](auto tag) { isin_typed<typename decltype(tag)::type>(call); });
}

}  // namespace xrt::cpu
