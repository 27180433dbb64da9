// cpp/src/cpu/index_kernels.cpp: integer-array gather and scatter, take_along_axis, and the
// registration of every indexing kernel (op definitions: core/indexing_ops.cpp).
//
// - The contract of gather/scatter: input v has its indexed axes at [a, a + k)
//   (a = attrs.axes[0]); the k index arrays share one shape B; the selection has shape
//   v.shape[:a] + B + v.shape[a + k:].
// - Scatter writes each outer position's indices in order (the last duplicate wins, as in
//   NumPy); only outer positions run in parallel, so duplicates never race.
#include <vector>

#include "cpu/index_common.h"
#include "cpu/kernels.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {
namespace {

// Where the indexed elements of v start: for each position b of B, the byte offset of
// v[..., i_0[b], ..., i_{k-1}[b], ...] from the start of its outer block.
struct IndexedAxes {
  const Tensor& v;
  int axis, count;
  const Tensor* const* arrays;  // count arrays of shape B
  int64_t positions;            // numel(B)

  IndexedAxes(const KernelCall& call, const Tensor& v, int first_array, int count)
      : v(v),
        axis(static_cast<int>(call.attrs->axes[0])),
        count(count),
        arrays(call.inputs + first_array),
        positions(count > 0 ? arrays[0]->numel() : 1) {}
  int64_t size(int j) const { return v.shape()[axis + j]; }
  // The axes before and after the indexed ones, and their element counts.
  Tensor outer() const { return axes_view(v, 0, axis); }
  Tensor inner() const { return axes_view(v, axis + count, v.ndim()); }
  int64_t outer_numel() const { return numel_of(0, axis); }
  int64_t inner_numel() const { return numel_of(axis + count, v.ndim()); }
  int64_t numel_of(int first, int last) const {
    int64_t n = 1;
    for (int d = first; d < last; ++d) n *= v.shape()[d];
    return n;
  }
  int64_t stride(int j) const { return v.strides()[axis + j] * static_cast<int64_t>(v.itemsize()); }
  // One contiguous array: read it directly rather than through a table.
  bool direct() const { return count == 1 && arrays[0]->is_contiguous(); }

  // The offsets of every position, checked; IndexOutOfRange names the first bad index.
  std::vector<int64_t> table() const {
    std::vector<int64_t> offsets(static_cast<size_t>(positions), 0);
    for (int j = 0; j < count; ++j) {
      const Tensor& indices = *arrays[j];
      int64_t n = size(j), s = stride(j);
      FirstBad bad;
      LoopPlan<1> plan({&indices});
      visit_index_dtype(indices.dtype(), [&](auto tag) {
        using I = typename decltype(tag)::type;
        for_chunks(positions, kGrain, [&](int64_t begin, int64_t end) {
          int64_t at = begin;
          plan.walk(
              begin, end,
              [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& st, int64_t m) {
                const char* src = p[0];
                const int64_t step = st[0], size = n, stride = s;
                int64_t* out = offsets.data() + at;
                for (int64_t i = 0; i < m; ++i) {
                  int64_t jv;
                  if (!normalize(*reinterpret_cast<const I*>(src + i * step), size, jv))
                    bad.report(at + i);
                  out[i] += jv * stride;
                }
                at += m;
              });
        });
      });
      if (bad.any()) throw_out_of_range(indices, bad.position(), n, j);
    }
    return offsets;
  }

  // Checks a direct array without using it (scatter checks before it writes).
  template <class I>
  void check_direct() const {
    const I* const idx = reinterpret_cast<const I*>(arrays[0]->data());
    const int64_t n = size(0);
    FirstBad bad;
    for_chunks(positions, kGrain, [&](int64_t begin, int64_t end) {
      int64_t b = begin, j;
      for (; b + 4 <= end; b += 4)  // four checks, one branch
        if (!(normalize(idx[b], n, j) & normalize(idx[b + 1], n, j) & normalize(idx[b + 2], n, j) &
              normalize(idx[b + 3], n, j)))
          break;
      for (; b < end; ++b)
        if (!normalize(idx[b], n, j)) return bad.report(b);
    });
    if (bad.any()) throw_out_of_range(*arrays[0], bad.position(), n, 0);
  }
};

// Offsets read straight from one contiguous index array.
template <class I>
struct DirectOffsets {
  const I* indices;
  int64_t size, stride;
  bool operator()(int64_t b, int64_t& offset) const {
    int64_t j;
    if (!normalize(indices[b], size, j)) return false;
    offset = j * stride;
    return true;
  }
  // dst[b] = the element at indices[b], b in [begin, end), four at a time (one branch per
  // four checks); false with bad = b at the first bad index.
  template <int S>
  bool gather(char* dst, const char* src, int64_t begin, int64_t end, int64_t& bad) const {
    const I* const idx = indices;
    const int64_t n = size, s = stride;
    int64_t b = begin, j0, j1, j2, j3;
    for (; b + 4 <= end; b += 4) {
      bool ok = normalize(idx[b], n, j0) & normalize(idx[b + 1], n, j1) &
                normalize(idx[b + 2], n, j2) & normalize(idx[b + 3], n, j3);
      if (!ok) break;
      std::memcpy(dst + b * S, src + j0 * s, S);
      std::memcpy(dst + (b + 1) * S, src + j1 * s, S);
      std::memcpy(dst + (b + 2) * S, src + j2 * s, S);
      std::memcpy(dst + (b + 3) * S, src + j3 * s, S);
    }
    for (; b < end; ++b) {
      if (!normalize(idx[b], n, j0)) {
        bad = b;
        return false;
      }
      std::memcpy(dst + b * S, src + j0 * s, S);
    }
    return true;
  }
};

// Offsets from a checked table.
struct TableOffsets {
  const int64_t* offsets;
  bool operator()(int64_t b, int64_t& offset) const {
    offset = offsets[b];
    return true;
  }
  template <int S>
  bool gather(char* dst, const char* src, int64_t begin, int64_t end, int64_t&) const {
    const int64_t* const off = offsets;
    for (int64_t b = begin; b < end; ++b) std::memcpy(dst + b * S, src + off[b], S);
    return true;
  }
};

// Note: the loops copy what they use into locals first; through references the compiler
// would reload every operand after each store (a char store may alias anything).

// out[p, b, q] = v[p, offset(b), q]. offset_at(b, &bytes) is false for a bad index.
template <int S, class OffsetAt>
void gather_blocks(const IndexedAxes& ix, Tensor& out, const OffsetAt offset_at, FirstBad& bad) {
  const Tensor& v = ix.v;
  const int64_t pn = ix.outer_numel(), qn = ix.inner_numel(), bn = ix.positions;
  const char* const vb = v.data();
  char* const ob = out.data();
  if (pn == 0 || qn == 0) {  // nothing to move, but the indices are still checked
    for (int64_t b = 0, off; b < bn; ++b)
      if (!offset_at(b, off)) return bad.report(b);
    return;
  }
  if (pn == 1 && qn == 1) {  // the common x[indices] of a vector: one tight loop
    for_chunks(bn, kGrain, [&](int64_t begin, int64_t end) {
      int64_t b;
      if (!offset_at.template gather<S>(ob, vb, begin, end, b)) bad.report(b);
    });
    return;
  }
  Tensor outer = ix.outer(), inner = ix.inner();
  Block<S> block(block_view(out, inner.shape(), false), inner);
  const int64_t block_bytes = qn * S;
  for_chunks(pn * bn, std::max<int64_t>(1, kGrain / qn), [&](int64_t begin, int64_t end) {
    const OffsetAt at = offset_at;
    int64_t p = begin / bn, b = begin % bn, poff = offset_of(outer, p);
    for (int64_t u = begin; u < end; ++u) {
      int64_t off;
      if (!at(b, off)) return bad.report(b);
      block.move(ob + u * block_bytes, vb + poff + off);
      if (++b == bn) {
        b = 0;
        if (++p < pn) poff = offset_of(outer, p);
      }
    }
  });
}

void gather_kernel(const KernelCall& call) {
  const Tensor& v = call.in(0);
  IndexedAxes ix(call, v, 1, call.num_inputs - 1);
  visit_size(v.itemsize(), [&](auto size) {
    constexpr int S = decltype(size)::value;
    FirstBad bad;
    if (ix.direct()) {
      visit_index_dtype(ix.arrays[0]->dtype(), [&](auto tag) {
        using I = typename decltype(tag)::type;
        DirectOffsets<I> at{reinterpret_cast<const I*>(ix.arrays[0]->data()), ix.size(0),
                            ix.stride(0)};
        gather_blocks<S>(ix, call.out(), at, bad);
      });
      if (bad.any()) throw_out_of_range(*ix.arrays[0], bad.position(), ix.size(0), 0);
    } else {
      std::vector<int64_t> offsets = ix.table();
      gather_blocks<S>(ix, call.out(), TableOffsets{offsets.data()}, bad);
    }
  });
}

// v[p, offset(b), q] = values[p, b, q] (values contiguous, or one element repeated). The
// offsets were checked before.
template <int S, class OffsetAt>
void scatter_blocks(const IndexedAxes& ix, const Tensor& values, Tensor& v,
                    const OffsetAt offset_at) {
  const int64_t pn = ix.outer_numel(), qn = ix.inner_numel(), bn = ix.positions;
  if (pn * qn * bn == 0) return;
  const bool repeated = all_strides_zero(values);
  const char* const src = values.data();
  char* const vb = v.data();
  int64_t off;
  if (pn == 1 && qn == 1) {
    const int64_t step = repeated ? 0 : S;
    for (int64_t b = 0; b < bn; ++b) {
      offset_at(b, off);
      std::memcpy(vb + off, src + b * step, S);
    }
    return;
  }
  Tensor outer = ix.outer(), inner = ix.inner();
  Block<S> block(inner, block_view(values, inner.shape(), repeated));
  const int64_t block_bytes = repeated ? 0 : qn * S;
  for_chunks(pn, std::max<int64_t>(1, kGrain / (bn * qn)), [&](int64_t begin, int64_t end) {
    const OffsetAt at = offset_at;
    for (int64_t p = begin; p < end; ++p) {
      char* base = vb + offset_of(outer, p);
      for (int64_t b = 0; b < bn; ++b) {
        int64_t o;
        at(b, o);
        block.move(base + o, src + (p * bn + b) * block_bytes);
      }
    }
  });
}

void scatter_kernel(const KernelCall& call) {
  const Tensor& values = call.in(0);
  Tensor& v = call.out();
  IndexedAxes ix(call, v, 1, call.num_inputs - 1);
  visit_size(v.itemsize(), [&](auto size) {
    constexpr int S = decltype(size)::value;
    if (ix.direct()) {
      visit_index_dtype(ix.arrays[0]->dtype(), [&](auto tag) {
        using I = typename decltype(tag)::type;
        ix.check_direct<I>();
        DirectOffsets<I> at{reinterpret_cast<const I*>(ix.arrays[0]->data()), ix.size(0),
                            ix.stride(0)};
        scatter_blocks<S>(ix, values, v, at);
      });
    } else {
      std::vector<int64_t> offsets = ix.table();
      scatter_blocks<S>(ix, values, v, TableOffsets{offsets.data()});
    }
  });
}

// out[..., i, ...] = x[..., indices[..., i, ...], ...] along attrs.axes[0]; x and indices
// are broadcast to out's shape except along that axis.
void take_along_axis_kernel(const KernelCall& call) {
  const Tensor &x = call.in(0), &indices = call.in(1);
  Tensor& out = call.out();
  int a = static_cast<int>(call.attrs->axes[0]);
  int64_t n = x.shape()[a], along = x.strides()[a] * static_cast<int64_t>(x.itemsize());
  Dims strides = x.strides();
  strides[a] = 0;
  Tensor start = x.as_strided(out.shape(), strides, x.byte_offset());  // x[..., 0, ...]
  LoopPlan<3> plan({&out, &indices, &start});
  FirstBad bad;
  visit_size(x.itemsize(), [&](auto size) {
    constexpr int S = decltype(size)::value;
    visit_index_dtype(indices.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      for_chunks(plan.numel, kGrain, [&](int64_t begin, int64_t end) {
        int64_t at = begin;
        bool failed = false;
        plan.walk(begin, end,
                  [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t m) {
                    char* const dst = p[0];
                    const char *const idx = p[1], *const src = p[2];
                    const int64_t ds = s[0], is = s[1], ss = s[2], size = n, step = along;
                    for (int64_t i = 0; i < m && !failed; ++i) {
                      int64_t j;
                      if (!normalize(*reinterpret_cast<const I*>(idx + i * is), size, j)) {
                        bad.report(at + i);
                        failed = true;
                      } else {
                        std::memcpy(dst + i * ds, src + i * ss + j * step, S);
                      }
                    }
                    at += m;
                  });
      });
    });
  });
  if (bad.any()) throw_out_of_range(indices, bad.position(), n, 0);
}

}  // namespace

void register_index_kernels(KernelRegistry& registry) {
  struct Row {
    const char* op;
    KernelFn run;
    const char* description;
  };
  const Row rows[] = {
      {"gather", gather_kernel, "integer-array gather, checked, contiguous fast paths"},
      {"scatter", scatter_kernel, "integer-array scatter, checked before writing"},
      {"masked_gather", masked_gather_kernel, "boolean-mask gather, chunked, branch-free"},
      {"masked_scatter", masked_scatter_kernel, "boolean-mask scatter, chunked"},
      {"nonzero_count", nonzero_count_kernel, "count of nonzero elements, chunked"},
      {"nonzero", nonzero_kernel, "coordinates of nonzero elements, chunked"},
      {"take_along_axis", take_along_axis_kernel, "gather along one axis, checked"},
  };
  for (const Row& row : rows) {
    registry.add(kernel_info(row.op, "native", row.run, row.description));
  }
}

}  // namespace xrt::cpu
