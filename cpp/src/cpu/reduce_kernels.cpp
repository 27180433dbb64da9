// cpp/src/cpu/reduce_kernels.cpp: sum over axes, deterministic whatever the thread count.
//
// - The input is split into kept axes (one output element each) and reduced axes.
// - Inner strategy (reduced elements closest in memory): each output is a pairwise sum
//   over its reduced elements; a single large output is summed in fixed chunks whose
//   partial sums are added in chunk order.
// - Outer strategy (kept elements closest in memory, e.g. axis=0 of a C-ordered matrix):
//   rows are added into an accumulator in reduced-index order, vectorised along the row.
// - float16/bfloat16 accumulate in float32.
#include <vector>

#include "cpu/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "xpuruntime/scalar.h"

namespace xrt::cpu {
namespace {

using detail::compute_t;

// A merged strided box: what a set of axes of the input looks like in memory.
struct Box {
  Dims shape, strides;  // bytes; merged, innermost last
  int64_t numel = 1;
  Box(const Tensor& x, const Dims& axes) {
    for (int64_t axis : axes) {
      int64_t d = x.shape()[static_cast<int>(axis)];
      int64_t s = x.strides()[static_cast<int>(axis)] * static_cast<int64_t>(x.itemsize());
      numel *= d;
      if (d == 1) continue;
      if (!shape.empty() && strides.back() == s * d) {
        shape[shape.size() - 1] *= d;
        strides[strides.size() - 1] = s;
      } else {
        shape.push_back(d);
        strides.push_back(s);
      }
    }
    if (shape.empty()) { shape.push_back(1); strides.push_back(0); }
  }
};

template <class Acc, class T> Acc pairwise_sum(const char* p, int64_t n, int64_t stride) {
  if (n <= 128) {
    if constexpr (std::is_integral_v<T>) {
      Acc s = 0;
      for (int64_t i = 0; i < n; ++i) s += Acc(*reinterpret_cast<const T*>(p + i * stride));
      return s;
    } else {
      Acc r[8] = {};
      int64_t i = 0;
      if (stride == sizeof(T)) {
        const T* x = reinterpret_cast<const T*>(p);
        for (; i + 8 <= n; i += 8)
          for (int j = 0; j < 8; ++j) r[j] += Acc(x[i + j]);
      }
      Acc s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
      for (; i < n; ++i) s += Acc(*reinterpret_cast<const T*>(p + i * stride));
      return s;
    }
  }
  int64_t half = (n / 2) / 8 * 8;
  return pairwise_sum<Acc, T>(p, half, stride) +
         pairwise_sum<Acc, T>(p + half * stride, n - half, stride);
}

// Sum of the reduced box starting at p (dimension d onwards).
template <class Acc, class T> Acc box_sum(const Box& box, const char* p, int d = 0) {
  int last = box.shape.size() - 1;
  if (d == last) return pairwise_sum<Acc, T>(p, box.shape[d], box.strides[d]);
  Acc s = 0;
  for (int64_t i = 0; i < box.shape[d]; ++i) s += box_sum<Acc, T>(box, p + i * box.strides[d], d + 1);
  return s;
}

template <class T> void sum_typed(const KernelCall& call) {
  using Acc = compute_t<T>;
  const Tensor& x = call.in(0);
  Tensor& out = call.out();
  T* o = reinterpret_cast<T*>(out.data());
  const Dims& axes = call.attrs->axes;
  Dims kept;
  for (int d = 0, j = 0; d < x.ndim(); ++d) {
    if (j < axes.size() && axes[j] == d) { ++j; continue; }
    kept.push_back(d);
  }
  Box reduced(x, axes), outer(x, kept);
  int64_t nout = outer.numel;
  if (nout == 0) return;
  if (reduced.numel == 0) {
    for (int64_t i = 0; i < nout; ++i) o[i] = T(Acc(0));
    return;
  }
  const char* base = x.data();
  auto out_offset = [&](int64_t i) {  // byte offset in x of output element i
    int64_t off = 0;
    for (int d = outer.shape.size() - 1; d >= 0; --d) {
      off += (i % outer.shape[d]) * outer.strides[d];
      i /= outer.shape[d];
    }
    return off;
  };

  // Outer strategy: the kept axes are one run, closer in memory than any reduced axis.
  int64_t min_reduced_stride = INT64_MAX;
  for (int64_t s : reduced.strides) min_reduced_stride = std::min(min_reduced_stride, std::abs(s));
  if (outer.shape.size() == 1 && nout >= 16 && reduced.numel > 1 &&
      std::abs(outer.strides[0]) < min_reduced_stride) {
    int64_t ostride = outer.strides[0];
    parallel_for(nout, 4096, [&](int64_t b, int64_t e) {
      std::vector<Acc> acc(static_cast<size_t>(e - b), Acc(0));
      Box r = reduced;
      int64_t count = r.numel, index[64] = {};
      int nd = r.shape.size();
      const char* p = base + b * ostride;
      for (int64_t step = 0; step < count; ++step) {
        if (ostride == sizeof(T)) {
          const T* row = reinterpret_cast<const T*>(p);
          for (int64_t j = 0; j < e - b; ++j) acc[j] += Acc(row[j]);
        } else {
          for (int64_t j = 0; j < e - b; ++j) acc[j] += Acc(*reinterpret_cast<const T*>(p + j * ostride));
        }
        for (int d = nd - 1; d >= 0; --d) {  // next reduced index, row-major
          p += r.strides[d];
          if (++index[d] < r.shape[d]) break;
          p -= r.shape[d] * r.strides[d];
          index[d] = 0;
        }
      }
      for (int64_t j = b; j < e; ++j) o[j] = T(acc[static_cast<size_t>(j - b)]);
    });
    return;
  }

  // Inner strategy.
  constexpr int64_t kChunk = 1 << 16;
  if (nout == 1 && reduced.shape.size() == 1 && reduced.numel > 2 * kChunk) {
    int64_t n = reduced.numel, stride = reduced.strides[0];
    int64_t chunks = (n + kChunk - 1) / kChunk;
    std::vector<Acc> partial(static_cast<size_t>(chunks));
    parallel_for(n, kChunk, [&](int64_t b, int64_t e) {
      partial[static_cast<size_t>(b / kChunk)] =
          pairwise_sum<Acc, T>(base + b * stride, e - b, stride);
    });
    Acc total = 0;
    for (Acc v : partial) total += v;
    o[0] = T(total);
    return;
  }
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, reduced.numel));
  parallel_for(nout, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = T(box_sum<Acc, T>(reduced, base + out_offset(i)));
  });
}

}  // namespace

void sum_kernel(const KernelCall& call) {
  visit_dtype(call.out().dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) throw TypeError("sum of booleans needs an integer dtype");
    else sum_typed<T>(call);
  });
}

}  // namespace xrt::cpu
