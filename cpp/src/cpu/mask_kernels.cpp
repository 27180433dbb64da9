// cpp/src/cpu/mask_kernels.cpp: boolean-mask gather and scatter, nonzero and its count.
//
// Masks are processed in fixed chunks: one pass counts the True elements per chunk, the
// next writes each chunk from its prefix count, so the output never depends on threads.
// The inner loops are branch-free (a random mask defeats branch prediction).
#include <optional>
#include <vector>

#include "cpu/index_common.h"

namespace xrt::cpu {
namespace {

template <class T>
inline bool is_nonzero(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return float(v) != 0.0f;
  else if constexpr (std::is_same_v<T, std::complex<float>> ||
                     std::is_same_v<T, std::complex<double>>)
    return v.real() != 0 || v.imag() != 0;
  else
    return v != T(0);
}

// Element type for reading: bool tensors are read as bytes (any nonzero byte is True).
template <class T>
using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// Nonzero bytes among n, eight at a time: each byte folds to 0 or 1 in its lowest bit,
// eight byte-wide counters add up to 255 words, then fold into the total.
inline int64_t count_nonzero_bytes(const uint8_t* p, int64_t n) {
  constexpr uint64_t kLow = 0x0101010101010101ull, kEven = 0x00ff00ff00ff00ffull;
  int64_t count = 0, i = 0;
  while (i + 8 <= n) {
    uint64_t lanes = 0;
    for (int64_t stop = std::min(n, i + 8 * 255); i + 8 <= stop; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      w |= w >> 4;
      w |= w >> 2;
      w |= w >> 1;
      lanes += w & kLow;
    }
    lanes = (lanes & kEven) + ((lanes >> 8) & kEven);  // four 16-bit sums
    count += static_cast<int64_t>((lanes * 0x0001000100010001ull) >> 48);
  }
  for (; i < n; ++i) count += p[i] != 0;
  return count;
}

// Nonzero elements among n at p, stride bytes apart (a function of its own, so that the
// count stays in a register and the contiguous loop vectorises).
template <class T>
int64_t count_nonzero(const char* p, int64_t stride, int64_t n) {
  int64_t count = 0;
  if constexpr (std::is_same_v<T, uint8_t>) {
    if (stride == 1) return count_nonzero_bytes(reinterpret_cast<const uint8_t*>(p), n);
  }
  if (stride == sizeof(T)) {
    const T* e = reinterpret_cast<const T*>(p);
    for (int64_t i = 0; i < n; ++i) count += is_nonzero(e[i]);
  } else {
    for (int64_t i = 0; i < n; ++i)
      count += is_nonzero(*reinterpret_cast<const T*>(p + i * stride));
  }
  return count;
}

// Nonzero elements of x in each fixed chunk [c * grain, (c + 1) * grain) of positions.
std::vector<int64_t> chunk_counts(const Tensor& x, int64_t grain) {
  int64_t n = x.numel();
  std::vector<int64_t> counts(static_cast<size_t>((n + grain - 1) / grain), 0);
  LoopPlan<1> plan({&x});
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = Stored<typename decltype(tag)::type>;
    for_chunks(n, grain, [&](int64_t begin, int64_t end) {
      int64_t count = 0;
      plan.walk(begin, end,
                [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t m) {
                  count += count_nonzero<T>(p[0], s[0], m);
                });
      counts[static_cast<size_t>(begin / grain)] = count;
    });
  });
  return counts;
}

// Where each chunk's output starts: the nonzero elements before it. A single chunk
// starts at 0 and needs no counting.
class Chunks {
 public:
  Chunks(const Tensor& x, int64_t grain) : grain_(grain) {
    if (x.numel() <= grain) return;
    before_ = chunk_counts(x, grain);
    int64_t sum = 0;
    for (int64_t& c : before_) std::swap(c, sum), sum += c;  // exclusive prefix sums
  }
  int64_t grain() const { return grain_; }
  int64_t before(int64_t position) const {
    return before_.empty() ? 0 : before_[static_cast<size_t>(position / grain_)];
  }

 private:
  int64_t grain_;
  std::vector<int64_t> before_;
};

// Appends src[i * stride] for every m[i] != 0 at dst; returns the new end. Branch-free:
// every element is written and the cursor advances only past selected ones, so it stops
// at the last selected element (writes past it could land in another chunk's output).
template <int S>
char* compress(char* dst, const char* src, int64_t stride, const uint8_t* m, int64_t n) {
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

// The inverse of compress: d[i] = next value for every m[i] != 0 (the same value when
// repeated); returns the position after the last value used. Branch-free up to the last
// selected element, so no value past this chunk's is read.
template <int S>
const char* expand(Elem<S>* d, const char* src, bool repeated, const uint8_t* m, int64_t n) {
  using T = Elem<S>;
  while (n > 0 && !m[n - 1]) --n;
  if (repeated) {
    T value;
    std::memcpy(&value, src, S);
    for (int64_t i = 0; i < n; ++i) d[i] = m[i] ? value : d[i];
    return src;
  }
  const T* s = reinterpret_cast<const T*>(src);
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    d[i] = m[i] ? s[k] : d[i];
    k += m[i] != 0;
  }
  return reinterpret_cast<const char*>(s + k);
}

// The geometry of v[..., mask, ...]: outer axes, the masked ones, the inner ones.
struct Masked {
  Tensor outer, masked, inner;
  Masked(const Tensor& v, int axis, const Tensor& mask)
      : outer(axes_view(v, 0, axis)),
        masked(axes_view(v, axis, axis + mask.ndim())),
        inner(axes_view(v, axis + mask.ndim(), v.ndim())) {}
};

// Writes the coordinates of the nonzero elements among positions [begin, end) of a
// contiguous x, from output row k on. Branch-free, like compress: every element writes
// its coordinates and only nonzero ones advance k, up to the chunk's last nonzero element.
template <class T>
void nonzero_coordinates(const T* x, const Dims& shape, int64_t begin, int64_t end, int64_t k,
                         int64_t* const* out) {
  while (end > begin && !is_nonzero(x[end - 1])) --end;
  const int nd = shape.size();
  const int64_t row = shape[nd - 1];
  int64_t* last = out[nd - 1];
  Dims coord(nd);
  for (int64_t d = nd - 1, rest = begin; d >= 0; --d) {
    coord[d] = rest % shape[d];
    rest /= shape[d];
  }
  for (int64_t pos = begin; pos < end;) {
    const int64_t first = coord[nd - 1], run = std::min(row - first, end - pos);
    const T* e = x + pos;
    if (nd == 1) {
      for (int64_t j = 0; j < run; ++j) {
        last[k] = first + j;
        k += is_nonzero(e[j]);
      }
    } else if (nd == 2) {
      int64_t* rows = out[0];
      const int64_t r = coord[0];
      for (int64_t j = 0; j < run; ++j) {
        rows[k] = r;
        last[k] = first + j;
        k += is_nonzero(e[j]);
      }
    } else {
      for (int64_t j = 0; j < run; ++j) {
        for (int d = 0; d < nd - 1; ++d) out[d][k] = coord[d];
        last[k] = first + j;
        k += is_nonzero(e[j]);
      }
    }
    pos += run;
    coord[nd - 1] += run;
    for (int d = nd - 1; d > 0 && coord[d] == shape[d]; --d) {
      coord[d] = 0;
      ++coord[d - 1];
    }
  }
}

}  // namespace

void masked_gather_kernel(const KernelCall& call) {
  const Tensor &v = call.in(0), &mask = call.in(1);
  Tensor& out = call.out();
  int axis = static_cast<int>(call.attrs->axes[0]);
  Masked g(v, axis, mask);
  int64_t pn = g.outer.numel(), qn = g.inner.numel(), mn = mask.numel();
  int64_t total = out.shape()[axis];  // selected positions
  Chunks chunks(mask, std::max<int64_t>(1024, kMaskGrain / std::max<int64_t>(qn, 1)));
  LoopPlan<2> plan({&mask, &g.masked});
  visit_size(v.itemsize(), [&](auto size) {
    constexpr int S = decltype(size)::value;
    Block<S> block(block_view(out, g.inner.shape(), false), g.inner);
    for (int64_t p = 0; p < pn; ++p) {
      int64_t poff = offset_of(g.outer, p);
      char* obase = out.data() + p * total * qn * S;
      for_chunks(mn, chunks.grain(), [&](int64_t begin, int64_t end) {
        char* dst = obase + chunks.before(begin) * qn * S;
        plan.walk(
            begin, end,
            [&](const std::array<char*, 2>& ptr, const std::array<int64_t, 2>& st, int64_t n) {
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
  int axis = static_cast<int>(call.attrs->axes[0]);
  Masked g(v, axis, mask);
  int64_t pn = g.outer.numel(), qn = g.inner.numel(), mn = mask.numel();
  bool repeated = all_strides_zero(values);
  int64_t grain = std::max<int64_t>(1024, kMaskGrain / std::max<int64_t>(qn, 1));
  std::optional<Chunks> chunks;
  if (!repeated) chunks.emplace(mask, grain);
  int64_t total = values.shape()[axis];  // selected positions
  LoopPlan<2> plan({&mask, &g.masked});
  visit_size(v.itemsize(), [&](auto size) {
    constexpr int S = decltype(size)::value;
    using T = Elem<S>;
    Block<S> block(g.inner, block_view(values, g.inner.shape(), repeated));
    int64_t step = repeated ? 0 : qn * S;
    for (int64_t p = 0; p < pn; ++p) {
      int64_t poff = offset_of(g.outer, p);
      const char* vbase = values.data() + p * total * step;
      for_chunks(mn, grain, [&](int64_t begin, int64_t end) {
        const char* src = vbase + (repeated ? 0 : chunks->before(begin) * step);
        plan.walk(
            begin, end,
            [&](const std::array<char*, 2>& ptr, const std::array<int64_t, 2>& st, int64_t n) {
              const uint8_t* m = reinterpret_cast<const uint8_t*>(ptr[0]);
              char* dst = ptr[1] + poff;
              if (qn == 1 && st[0] == 1 && st[1] == S) {
                src = expand<S>(reinterpret_cast<T*>(dst), src, repeated, m, n);
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
  int64_t total = 0;
  for (int64_t c : chunk_counts(call.in(0), kMaskGrain)) total += c;
  std::memcpy(call.out().data(), &total, sizeof total);
}

// Coordinates of the nonzero elements of a contiguous x, one output per dimension.
void nonzero_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  Chunks chunks(x, kMaskGrain);
  std::vector<int64_t*> out;
  for (int d = 0; d < x.ndim(); ++d)
    out.push_back(reinterpret_cast<int64_t*>(call.outputs[d].data()));
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = Stored<typename decltype(tag)::type>;
    const T* e = reinterpret_cast<const T*>(x.data());
    for_chunks(x.numel(), chunks.grain(), [&](int64_t begin, int64_t end) {
      nonzero_coordinates(e, x.shape(), begin, end, chunks.before(begin), out.data());
    });
  });
}

}  // namespace xrt::cpu
