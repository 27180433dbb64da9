// cpp/src/cpu/index_kernels.cpp: gather, scatter, masked gather/scatter, nonzero and
// take_along_axis on the CPU (op definitions: core/indexing_ops.cpp).
//
// - Elements move as units of their size (1, 2, 4, 8 or 16 bytes); the dtype is irrelevant.
// - Index arrays may have any integer dtype; a negative index counts from the end. Every
//   index is checked before it is used; the error names the first bad one in row-major
//   order, whatever the thread count.
// - The index contract (gather/scatter): input v has its indexed axes at [a, a + k)
//   (a = attrs.axes[0]); the k index arrays share one shape B; the result has shape
//   v.shape[:a] + B + v.shape[a + k:]. Masks cover v's axes [a, a + mask.ndim).
// - Mask work runs in fixed chunks: one pass counts the True elements per chunk, the next
//   writes each chunk from its prefix count, so the output never depends on threads.
// - Scatter writes each outer position's indices in order (the last duplicate wins, as in
//   NumPy); only outer positions run in parallel, so duplicates never race.
#include <atomic>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "cpu/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "xpuruntime/indexing.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;      // elements moved per task
constexpr int64_t kMaskGrain = 1 << 16;  // mask positions per chunk

struct Bytes16 { uint64_t lo, hi; };
template <int S>
using Elem = std::conditional_t<S == 1, uint8_t, std::conditional_t<S == 2, uint16_t,
             std::conditional_t<S == 4, uint32_t, std::conditional_t<S == 8, uint64_t, Bytes16>>>>;

template <class F> void visit_size(size_t size, F&& f) {
  switch (size) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
  }
  throw ValueError("indexing: unsupported element size " + std::to_string(size));
}

template <class F> void visit_index_dtype(DType dtype, F&& f) {
  visit_dtype(dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) f(tag);
    else throw TypeError("index arrays must have an integer dtype");
  });
}

// j = raw, counted from the end when negative; false when outside [0, n).
template <class I> inline bool normalize(I raw, int64_t n, int64_t& j) {
  if constexpr (std::is_signed_v<I>) {
    j = raw < 0 ? static_cast<int64_t>(raw) + n : static_cast<int64_t>(raw);
    return static_cast<uint64_t>(j) < static_cast<uint64_t>(n);
  } else {
    j = static_cast<int64_t>(raw);
    return static_cast<uint64_t>(raw) < static_cast<uint64_t>(n);
  }
}

// The smallest failing position reported by any chunk.
class FirstBad {
 public:
  void report(int64_t position) {
    int64_t current = first_.load(std::memory_order_relaxed);
    while (position < current && !first_.compare_exchange_weak(current, position)) {}
  }
  bool any() const { return first_.load() != INT64_MAX; }
  int64_t position() const { return first_.load(); }

 private:
  std::atomic<int64_t> first_{INT64_MAX};
};

// Byte offset of element `flat` (row-major) of t from t.data().
int64_t offset_of(const Tensor& t, int64_t flat) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (flat % t.shape()[d]) * t.strides()[d];
    flat /= t.shape()[d];
  }
  return off * static_cast<int64_t>(t.itemsize());
}

// t's axes [first, last) as a tensor of their own, at t's data.
Tensor axes_view(const Tensor& t, int first, int last) {
  Dims shape(t.shape().begin() + first, t.shape().begin() + last);
  Dims strides(t.strides().begin() + first, t.strides().begin() + last);
  return t.as_strided(std::move(shape), std::move(strides), t.byte_offset());
}

// A view of shape `shape` over the bytes at t.data(): contiguous, or one repeated element.
Tensor block_view(const Tensor& t, const Dims& shape, bool repeated) {
  return t.as_strided(shape, repeated ? Dims(shape.size(), int64_t{0}) : contiguous_strides(shape),
                      t.byte_offset());
}

bool all_strides_zero(const Tensor& t) {
  for (int64_t s : t.strides()) if (s != 0) return false;
  return true;
}

[[noreturn]] void throw_out_of_range(const Tensor& indices, int64_t position, int64_t size,
                                     int slot) {
  int64_t value = 0;
  visit_index_dtype(indices.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    I raw;
    std::memcpy(&raw, indices.data() + offset_of(indices, position), sizeof raw);
    value = std::is_unsigned_v<I> && static_cast<uint64_t>(raw) > INT64_MAX
                ? INT64_MAX : static_cast<int64_t>(raw);
  });
  throw IndexOutOfRange(value, size, slot);
}

// Moves one block (the axes after the indexed ones) between two layouts of its shape.
template <int S> class Block {
 public:
  Block(const Tensor& dst, const Tensor& src) : numel_(dst.numel()) {
    LoopPlan<2> plan({&dst, &src});
    shape_ = plan.shape;
    dst_strides_ = plan.strides[0];
    src_strides_ = plan.strides[1];
    contiguous_ = shape_.size() == 1 && dst_strides_[0] == S && src_strides_[0] == S;
  }
  int64_t numel() const { return numel_; }
  void move(char* dst, const char* src) const {
    if (numel_ == 1) std::memcpy(dst, src, S);
    else if (contiguous_) std::memcpy(dst, src, static_cast<size_t>(numel_) * S);
    else move_dims(dst, src, 0);
  }

 private:
  void move_dims(char* dst, const char* src, int d) const {
    int64_t n = shape_[d], ds = dst_strides_[d], ss = src_strides_[d];
    if (d == shape_.size() - 1) {
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds, src + i * ss, S);
      return;
    }
    for (int64_t i = 0; i < n; ++i) move_dims(dst + i * ds, src + i * ss, d + 1);
  }
  Dims shape_, dst_strides_, src_strides_;
  int64_t numel_;
  bool contiguous_ = false;
};

// ---- Integer-array gather and scatter -------------------------------------------------

// Where the indexed elements of v start: for each position b of B, the byte offset of
// v[..., i_0[b], ..., i_{k-1}[b], ...] from the start of its outer block.
struct IndexedAxes {
  const Tensor& v;
  int axis, count;
  const Tensor* const* arrays;  // count arrays of shape B
  int64_t positions;            // numel(B)

  IndexedAxes(const KernelCall& call, const Tensor& v, int first_array, int count)
      : v(v), axis(static_cast<int>(call.attrs->axes[0])), count(count),
        arrays(call.inputs + first_array),
        positions(count > 0 ? arrays[0]->numel() : 1) {}
  int64_t size(int j) const { return v.shape()[axis + j]; }
  int64_t stride(int j) const {
    return v.strides()[axis + j] * static_cast<int64_t>(v.itemsize());
  }
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
        parallel_for(positions, kGrain, [&](int64_t begin, int64_t end) {
          int64_t at = begin;
          plan.walk(begin, end, [&](const std::array<char*, 1>& p,
                                    const std::array<int64_t, 1>& st, int64_t m) {
            for (int64_t i = 0; i < m; ++i) {
              int64_t jv;
              if (!normalize(*reinterpret_cast<const I*>(p[0] + i * st[0]), n, jv))
                bad.report(at + i);
              offsets[static_cast<size_t>(at + i)] += jv * s;
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
  template <class I> void check_direct() const {
    const I* idx = reinterpret_cast<const I*>(arrays[0]->data());
    int64_t n = size(0);
    FirstBad bad;
    parallel_for(positions, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        int64_t j;
        if (!normalize(idx[b], n, j)) { bad.report(b); return; }
      }
    });
    if (bad.any()) throw_out_of_range(*arrays[0], bad.position(), n, 0);
  }
};

// out[p, b, q] = v[p, offset(b), q]. offset_at(b, &bytes) is false for a bad index.
template <int S, class OffsetAt>
void gather_blocks(const IndexedAxes& ix, Tensor& out, OffsetAt offset_at, FirstBad& bad) {
  const Tensor& v = ix.v;
  Tensor outer = axes_view(v, 0, ix.axis), inner = axes_view(v, ix.axis + ix.count, v.ndim());
  int64_t pn = outer.numel(), qn = inner.numel(), bn = ix.positions;
  const char* vb = v.data();
  char* ob = out.data();
  if (pn == 0 || qn == 0) {  // nothing to move, but the indices are still checked
    for (int64_t b = 0, off; b < bn; ++b)
      if (!offset_at(b, off)) return bad.report(b);
    return;
  }
  if (pn == 1 && qn == 1) {  // the common x[indices] of a vector: one tight loop
    using T = Elem<S>;
    T* o = reinterpret_cast<T*>(ob);
    parallel_for(bn, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        int64_t off;
        if (!offset_at(b, off)) return bad.report(b);
        std::memcpy(o + b, vb + off, S);
      }
    });
    return;
  }
  Block<S> block(block_view(out, inner.shape(), false), inner);
  int64_t block_bytes = qn * S;
  parallel_for(pn * bn, std::max<int64_t>(1, kGrain / qn), [&](int64_t begin, int64_t end) {
    int64_t p = begin / bn, b = begin % bn, poff = offset_of(outer, p);
    for (int64_t u = begin; u < end; ++u) {
      int64_t off;
      if (!offset_at(b, off)) return bad.report(b);
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
        const I* idx = reinterpret_cast<const I*>(ix.arrays[0]->data());
        int64_t n = ix.size(0), s = ix.stride(0);
        gather_blocks<S>(ix, call.out(), [&](int64_t b, int64_t& off) {
          int64_t j;
          if (!normalize(idx[b], n, j)) return false;
          off = j * s;
          return true;
        }, bad);
      });
      if (bad.any()) throw_out_of_range(*ix.arrays[0], bad.position(), ix.size(0), 0);
    } else {
      std::vector<int64_t> offsets = ix.table();
      gather_blocks<S>(ix, call.out(), [&](int64_t b, int64_t& off) {
        off = offsets[static_cast<size_t>(b)];
        return true;
      }, bad);
    }
  });
}

// v[p, offset(b), q] = values[p, b, q] (values contiguous, or one element repeated).
template <int S, class OffsetAt>
void scatter_blocks(const IndexedAxes& ix, const Tensor& values, Tensor& v, OffsetAt offset_at) {
  Tensor outer = axes_view(v, 0, ix.axis), inner = axes_view(v, ix.axis + ix.count, v.ndim());
  int64_t pn = outer.numel(), qn = inner.numel(), bn = ix.positions;
  if (pn * qn * bn == 0) return;
  bool repeated = all_strides_zero(values);
  const char* src = values.data();
  char* vb = v.data();
  if (pn == 1 && qn == 1) {
    for (int64_t b = 0; b < bn; ++b) std::memcpy(vb + offset_at(b), repeated ? src : src + b * S, S);
    return;
  }
  Block<S> block(inner, block_view(values, inner.shape(), repeated));
  int64_t block_bytes = repeated ? 0 : qn * S;
  parallel_for(pn, std::max<int64_t>(1, kGrain / (bn * qn)), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      char* base = vb + offset_of(outer, p);
      for (int64_t b = 0; b < bn; ++b) block.move(base + offset_at(b), src + (p * bn + b) * block_bytes);
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
        const I* idx = reinterpret_cast<const I*>(ix.arrays[0]->data());
        int64_t n = ix.size(0), s = ix.stride(0);
        scatter_blocks<S>(ix, values, v, [&](int64_t b) {
          int64_t j;
          normalize(idx[b], n, j);
          return j * s;
        });
      });
    } else {
      std::vector<int64_t> offsets = ix.table();
      scatter_blocks<S>(ix, values, v, [&](int64_t b) { return offsets[static_cast<size_t>(b)]; });
    }
  });
}

// ---- Masks and nonzero ----------------------------------------------------------------

template <class T> inline bool is_nonzero(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return float(v) != 0.0f;
  else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return v.real() != 0 || v.imag() != 0;
  else return v != T(0);
}

// Element type for reading: bool tensors are read as bytes (any nonzero byte is True).
template <class T> using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// Nonzero elements of x per fixed chunk of positions, and how many precede each chunk.
class Chunks {
 public:
  Chunks(const Tensor& x, int64_t grain) : grain_(grain) {
    int64_t n = x.numel(), chunks = (n + grain - 1) / grain;
    before_.assign(static_cast<size_t>(chunks) + 1, 0);
    LoopPlan<1> plan({&x});
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = Stored<typename decltype(tag)::type>;
      parallel_for(n, grain, [&](int64_t begin, int64_t end) {
        int64_t count = 0;
        plan.walk(begin, end, [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s,
                                  int64_t m) {
          if (s[0] == sizeof(T)) {
            const T* e = reinterpret_cast<const T*>(p[0]);
            for (int64_t i = 0; i < m; ++i) count += is_nonzero(e[i]);
          } else {
            for (int64_t i = 0; i < m; ++i)
              count += is_nonzero(*reinterpret_cast<const T*>(p[0] + i * s[0]));
          }
        });
        before_[static_cast<size_t>(begin / grain) + 1] = count;
      });
    });
    for (size_t c = 1; c < before_.size(); ++c) before_[c] += before_[c - 1];
  }
  int64_t grain() const { return grain_; }
  int64_t total() const { return before_.back(); }
  int64_t before(int64_t position) const { return before_[static_cast<size_t>(position / grain_)]; }

 private:
  int64_t grain_;
  std::vector<int64_t> before_;
};

// Appends src[i * stride] for every m[i] != 0 at dst; returns the new end. Branch-free:
// every element is written and the cursor advances only past selected ones, so it stops
// at the last selected element (writes past it could land in another chunk's output).
template <int S> char* compress(char* dst, const char* src, int64_t stride, const uint8_t* m,
                                int64_t n) {
  using T = Elem<S>;
  while (n > 0 && !m[n - 1]) --n;
  T* d = reinterpret_cast<T*>(dst);
  int64_t k = 0, i = 0;
  if (stride == S) {
    const T* s = reinterpret_cast<const T*>(src);
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, m + i, 8);
      if (w == 0) continue;
      if (w == 0x0101010101010101ull) {
        std::memcpy(d + k, s + i, 8 * S);
        k += 8;
        continue;
      }
      for (int j = 0; j < 8; ++j) {
        d[k] = s[i + j];
        k += m[i + j] != 0;
      }
    }
    for (; i < n; ++i) {
      d[k] = s[i];
      k += m[i] != 0;
    }
  } else {
    for (; i < n; ++i) {
      std::memcpy(d + k, src + i * stride, S);
      k += m[i] != 0;
    }
  }
  return reinterpret_cast<char*>(d + k);
}

// The geometry of v[..., mask, ...]: outer axes, the masked ones, the inner ones.
struct Masked {
  Tensor outer, masked, inner;
  Masked(const Tensor& v, int axis, const Tensor& mask)
      : outer(axes_view(v, 0, axis)), masked(axes_view(v, axis, axis + mask.ndim())),
        inner(axes_view(v, axis + mask.ndim(), v.ndim())) {}
};

void masked_gather_kernel(const KernelCall& call) {
  const Tensor &v = call.in(0), &mask = call.in(1);
  Tensor& out = call.out();
  Masked g(v, static_cast<int>(call.attrs->axes[0]), mask);
  int64_t pn = g.outer.numel(), qn = g.inner.numel(), mn = mask.numel();
  Chunks chunks(mask, std::max<int64_t>(1024, kMaskGrain / std::max<int64_t>(qn, 1)));
  LoopPlan<2> plan({&mask, &g.masked});
  visit_size(v.itemsize(), [&](auto size) {
    constexpr int S = decltype(size)::value;
    Block<S> block(block_view(out, g.inner.shape(), false), g.inner);
    for (int64_t p = 0; p < pn; ++p) {
      int64_t poff = offset_of(g.outer, p);
      char* obase = out.data() + p * chunks.total() * qn * S;
      parallel_for(mn, chunks.grain(), [&](int64_t begin, int64_t end) {
        char* dst = obase + chunks.before(begin) * qn * S;
        plan.walk(begin, end, [&](const std::array<char*, 2>& ptr,
                                  const std::array<int64_t, 2>& st, int64_t n) {
          const uint8_t* m = reinterpret_cast<const uint8_t*>(ptr[0]);
          const char* src = ptr[1] + poff;
          if (qn == 1 && st[0] == 1) {
            dst = compress<S>(dst, src, st[1], m, n);
            return;
          }
          for (int64_t i = 0; i < n; ++i)
            if (m[i * st[0]]) {
              block.move(dst, src + i * st[1]);
              dst += qn * S;
            }
        });
      });
    }
  });
}

void masked_scatter_kernel(const KernelCall& call) {
  const Tensor &values = call.in(0), &mask = call.in(1);
  Tensor& v = call.out();
  Masked g(v, static_cast<int>(call.attrs->axes[0]), mask);
  int64_t pn = g.outer.numel(), qn = g.inner.numel(), mn = mask.numel();
  bool repeated = all_strides_zero(values);
  int64_t grain = std::max<int64_t>(1024, kMaskGrain / std::max<int64_t>(qn, 1));
  std::optional<Chunks> chunks;
  if (!repeated) chunks.emplace(mask, grain);
  int64_t total = repeated ? 0 : chunks->total();
  LoopPlan<2> plan({&mask, &g.masked});
  visit_size(v.itemsize(), [&](auto size) {
    constexpr int S = decltype(size)::value;
    using T = Elem<S>;
    Block<S> block(g.inner, block_view(values, g.inner.shape(), repeated));
    int64_t step = repeated ? 0 : qn * S;
    for (int64_t p = 0; p < pn; ++p) {
      int64_t poff = offset_of(g.outer, p);
      const char* vbase = values.data() + p * total * step;
      parallel_for(mn, grain, [&](int64_t begin, int64_t end) {
        const char* src = vbase + (repeated ? 0 : chunks->before(begin) * step);
        plan.walk(begin, end, [&](const std::array<char*, 2>& ptr,
                                  const std::array<int64_t, 2>& st, int64_t n) {
          const uint8_t* m = reinterpret_cast<const uint8_t*>(ptr[0]);
          char* dst = ptr[1] + poff;
          if (repeated && qn == 1 && st[0] == 1 && st[1] == S && S <= 8) {
            T value, *d = reinterpret_cast<T*>(dst);
            std::memcpy(&value, src, S);
            for (int64_t i = 0; i < n; ++i) d[i] = m[i] ? value : d[i];
            return;
          }
          for (int64_t i = 0; i < n; ++i)
            if (m[i * st[0]]) {
              block.move(dst + i * st[1], src);
              src += step;
            }
        });
      });
    }
  });
}

void nonzero_count_kernel(const KernelCall& call) {
  int64_t total = Chunks(call.in(0), kMaskGrain).total();
  std::memcpy(call.out().data(), &total, sizeof total);
}

// Coordinates of the nonzero elements of a contiguous x, one output per dimension.
void nonzero_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  int nd = x.ndim();
  Chunks chunks(x, kMaskGrain);
  std::vector<int64_t*> out(static_cast<size_t>(nd));
  for (int d = 0; d < nd; ++d) out[static_cast<size_t>(d)] = reinterpret_cast<int64_t*>(call.outputs[d].data());
  int64_t row = x.shape()[nd - 1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = Stored<typename decltype(tag)::type>;
    const T* e = reinterpret_cast<const T*>(x.data());
    parallel_for(x.numel(), chunks.grain(), [&](int64_t begin, int64_t end) {
      int64_t k = chunks.before(begin);
      if (nd == 1) {
        for (int64_t i = begin; i < end; ++i)
          if (is_nonzero(e[i])) out[0][k++] = i;
        return;
      }
      Dims coord(nd);
      for (int64_t d = nd - 1, rest = begin; d >= 0; --d) {
        coord[d] = rest % x.shape()[d];
        rest /= x.shape()[d];
      }
      for (int64_t pos = begin; pos < end;) {
        int64_t run = std::min(row - coord[nd - 1], end - pos);
        for (int64_t j = 0; j < run; ++j) {
          if (!is_nonzero(e[pos + j])) continue;
          for (int d = 0; d < nd - 1; ++d) out[static_cast<size_t>(d)][k] = coord[d];
          out[static_cast<size_t>(nd - 1)][k] = coord[nd - 1] + j;
          ++k;
        }
        pos += run;
        coord[nd - 1] += run;
        for (int d = nd - 1; d > 0 && coord[d] == x.shape()[d]; --d) {
          coord[d] = 0;
          ++coord[d - 1];
        }
      }
    });
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
      parallel_for(plan.numel, kGrain, [&](int64_t begin, int64_t end) {
        int64_t at = begin;
        bool failed = false;
        plan.walk(begin, end, [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s,
                                  int64_t m) {
          for (int64_t i = 0; i < m && !failed; ++i) {
            int64_t j;
            if (!normalize(*reinterpret_cast<const I*>(p[1] + i * s[1]), n, j)) {
              bad.report(at + i);
              failed = true;
            } else {
              std::memcpy(p[0] + i * s[0], p[2] + i * s[2] + j * along, S);
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
  struct Row { const char* op; KernelFn run; const char* description; };
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
    KernelInfo k;
    k.op = row.op;
    k.name = "native";
    k.device = DeviceType::CPU;
    k.run = row.run;
    k.description = row.description;
    registry.add(std::move(k));
  }
}

}  // namespace xrt::cpu
