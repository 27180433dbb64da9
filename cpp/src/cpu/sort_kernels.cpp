// cpp/src/cpu/sort_kernels.cpp: the sort, argsort and searchsorted kernels, and the
// registration of the whole family (the set kernels live in set_kernels.cpp).
//
// sort and argsort walk the rows along the sort axis (any strides, in parallel when
// there are many) and hand each to a RowSorter (row_sort.h). searchsorted binary-searches
// x1 (through sorter) comparing sort keys, so its order is sort()'s: NaN above everything,
// -0.0 equal to +0.0.
#include <algorithm>
#include <memory>
#include <string>

#include "core/host/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "cpu/row_sort.h"
#include "cpu/set_kernels.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/registry.h"
#include "xpuruntime/sorting.h"

namespace xrt::cpu {

using host::visit_dtype;

namespace {

using sorting::Row;
using sorting::RowSorter;
using sorting::SortKey;

template <class T> constexpr bool is_real_v = !detail::is_complex_v<T>;

/// The rows of two tensors of one shape along one axis: row r starts at in_offset(r)
/// and out_offset(r) bytes; its elements are in_step and out_step bytes apart. Rows
/// are numbered row-major over the other axes.
class Rows {
 public:
  Rows(const Tensor& in, const Tensor& out, int axis)
      : length_(in.shape()[axis]),
        in_step_(in.strides()[axis] * int64_t(in.itemsize())),
        out_step_(out.strides()[axis] * int64_t(out.itemsize())) {
    for (int d = 0; d < in.ndim(); ++d) {
      if (d == axis) continue;
      shape_.push_back(in.shape()[d]);
      in_strides_.push_back(in.strides()[d] * int64_t(in.itemsize()));
      out_strides_.push_back(out.strides()[d] * int64_t(out.itemsize()));
      count_ *= in.shape()[d];
    }
    // Rows side by side in memory (the sort axis is not the innermost one): a block of
    // them is read and written a cache line at a time.
    int last = shape_.size() - 1;
    if (last >= 0 && in_strides_[last] == int64_t(in.itemsize()) &&
        out_strides_[last] == int64_t(out.itemsize()) && length_ > 1)
      adjacent_ = shape_[last];
  }
  int64_t count() const { return count_; }
  int64_t length() const { return length_; }
  int64_t in_step() const { return in_step_; }
  int64_t out_step() const { return out_step_; }
  /// How many consecutive rows sit next to each other in memory (0: not the case).
  int64_t adjacent() const { return adjacent_; }
  void offsets(int64_t row, int64_t& in_offset, int64_t& out_offset) const {
    in_offset = out_offset = 0;
    for (int d = shape_.size() - 1; d >= 0; --d) {
      int64_t i = row % shape_[d];
      row /= shape_[d];
      in_offset += i * in_strides_[d];
      out_offset += i * out_strides_[d];
    }
  }

 private:
  Dims shape_, in_strides_, out_strides_;
  int64_t count_ = 1, length_, in_step_, out_step_, adjacent_ = 0;
};

/// Calls sort_row(sorter, in_row, length, out, out_step) for every row, with one
/// RowSorter per task. Rows that sit side by side (sorting along a strided axis) go in
/// blocks through contiguous buffers: a gather and a scatter of whole cache lines
/// instead of one strided pass per row.
template <class T, class Out, class SortRow>
void for_each_row(const Tensor& in, const Tensor& out, int axis, bool avx512,
                  SortRow&& sort_row) {
  constexpr int64_t kBlock = 16;
  Rows rows(in, out, axis);
  const int64_t n = rows.length();
  if (rows.count() == 0 || n == 0) return;
  int64_t grain = std::max<int64_t>(1, kParallelGrain / n);
  if (rows.adjacent() < 2) {
    parallel_for(rows.count(), grain, [&](int64_t begin, int64_t end) {
      RowSorter<T> sorter(avx512);
      for (int64_t r = begin; r < end; ++r) {
        int64_t in_offset, out_offset;
        rows.offsets(r, in_offset, out_offset);
        sort_row(sorter, Row<T>{in.data() + in_offset, rows.in_step()}, n,
                 out.data() + out_offset, rows.out_step());
      }
    });
    return;
  }
  grain = (grain + kBlock - 1) / kBlock * kBlock;
  parallel_for(rows.count(), grain, [&](int64_t begin, int64_t end) {
    RowSorter<T> sorter(avx512);
    std::unique_ptr<T[]> in_block(new T[kBlock * n]);  // (not std::vector: T may be bool)
    std::unique_ptr<Out[]> out_block(new Out[kBlock * n]);
    for (int64_t r = begin; r < end;) {
      int64_t in_offset, out_offset;
      rows.offsets(r, in_offset, out_offset);
      int64_t block = std::min({kBlock, end - r, rows.adjacent() - r % rows.adjacent()});
      const char* src = in.data() + in_offset;
      for (int64_t i = 0; i < n; ++i, src += rows.in_step())
        for (int64_t b = 0; b < block; ++b)
          in_block[b * n + i] = reinterpret_cast<const T*>(src)[b];
      for (int64_t b = 0; b < block; ++b) {
        Row<T> row{reinterpret_cast<const char*>(&in_block[b * n]), int64_t(sizeof(T))};
        sort_row(sorter, row, n, reinterpret_cast<char*>(&out_block[b * n]),
                 int64_t(sizeof(Out)));
      }
      char* dst = out.data() + out_offset;
      for (int64_t i = 0; i < n; ++i, dst += rows.out_step())
        for (int64_t b = 0; b < block; ++b) reinterpret_cast<Out*>(dst)[b] = out_block[b * n + i];
      r += block;
    }
  });
}

const SortingAttrs& sorting_attrs(const KernelCall& call) {
  return static_cast<const SortingAttrs&>(*call.attrs);
}

template <bool kAvx512> void sort_kernel(const KernelCall& call) {
  const SortingAttrs& attrs = sorting_attrs(call);
  visit_dtype(call.in(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_real_v<T>) {
      throw TypeError("sort is not defined for complex dtypes");
    } else {
      for_each_row<T, T>(call.in(0), call.out(), int(attrs.axes[0]), kAvx512,
                         [&](RowSorter<T>& sorter, Row<T> row, int64_t n, char* out, int64_t step) {
        sorter.sort(row, n, out, step, attrs.descending);
      });
    }
  });
}

template <bool kAvx512> void argsort_kernel(const KernelCall& call) {
  const SortingAttrs& attrs = sorting_attrs(call);
  visit_dtype(call.in(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_row<T, int64_t>(call.in(0), call.out(), int(attrs.axes[0]), kAvx512,
                             [&](RowSorter<T>& sorter, Row<T> row, int64_t n, char* out,
                                 int64_t step) {
      sorter.argsort(row, n, reinterpret_cast<int64_t*>(out), step / int64_t(sizeof(int64_t)),
                     attrs.descending);
    });
  });
}

template <class T> void searchsorted_typed(const KernelCall& call) {
  using Key = sorting::key_t<T>;
  const Tensor& x1 = call.in(0);
  const int64_t n = x1.shape()[0];
  const Row<T> a{x1.data(), x1.strides()[0] * int64_t(sizeof(T))};
  const bool with_sorter = call.num_inputs == 3;
  const Row<int64_t> order{with_sorter ? call.in(2).data() : nullptr,
                           with_sorter ? call.in(2).strides()[0] * int64_t(sizeof(int64_t)) : 0};
  // The key of the i-th smallest element of x1; a search reads O(log n) of them, so a
  // bad sorter index is reported when a search reaches it.
  auto key_at = [&](int64_t i) {
    if (!with_sorter) return SortKey<T>::of(a[i]);
    int64_t j = order[i];
    if (j < 0 || j >= n)
      throw IndexError("searchsorted: sorter index " + std::to_string(j) +
                       " is out of bounds for x1 of size " + std::to_string(n));
    return SortKey<T>::of(a[j]);
  };
  const bool right = sorting_attrs(call).right;
  for_each_run<2>({&call.out(), &call.in(1)}, [&](const std::array<char*, 2>& p,
                                                  const std::array<int64_t, 2>& s, int64_t m) {
    for (int64_t i = 0; i < m; ++i) {
      Key k = SortKey<T>::of(*reinterpret_cast<const T*>(p[1] + i * s[1]));
      int64_t first = 0, count = n;  // left: first key >= k; right: first key > k
      while (count > 0) {
        int64_t half = count / 2;
        Key middle = key_at(first + half);
        if (right ? !(k < middle) : middle < k) {
          first += half + 1;
          count -= half + 1;
        } else {
          count = half;
        }
      }
      *reinterpret_cast<int64_t*>(p[0] + i * s[0]) = first;
    }
  });
}

void searchsorted_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_real_v<T>) throw TypeError("searchsorted is not defined for complex dtypes");
    else searchsorted_typed<T>(call);
  });
}


}  // namespace

void register_sorting_kernels(KernelRegistry& r) {
  // The AVX-512 kernels exist in every build but only run where the CPU has AVX-512.
  auto avx512 = [](const DTypeSignature&) { return sorting::have_avx512_sort(); };
  r.add(kernel_info("sort", "avx512", sort_kernel<true>,
                    "keys sorted by an AVX-512 quicksort (8/16-bit keys: radix sort), rows in "
                    "parallel", avx512, 10));
  r.add(kernel_info("sort", "radix", sort_kernel<false>,
                    "keys sorted by an LSD radix sort, rows in parallel"));
  r.add(kernel_info("argsort", "avx512", argsort_kernel<true>,
                    "(key, index) words sorted by an AVX-512 quicksort, rows in parallel",
                    avx512, 10));
  r.add(kernel_info("argsort", "radix", argsort_kernel<false>,
                    "(key, index) words sorted by an LSD radix sort, rows in parallel"));
  r.add(kernel_info("searchsorted", "native", searchsorted_kernel, "binary search over sort keys"));
  r.add(kernel_info("unique", "native", unique_kernel,
                    "a table per key (8/16-bit keys) or a sort, then one pass over the groups"));
  r.add(kernel_info("isin", "native", isin_kernel,
                    "a flag table (short integer ranges) or binary search in x2's sorted keys"));
}

}  // namespace xrt::cpu
