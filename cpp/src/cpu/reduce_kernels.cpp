// cpp/src/cpu/reduce_kernels.cpp: the reducing ops, a table of reducers over one engine
// (reduce_engine.h).
//
// - Sums, products and means (accumulators.h): the pairs of (input, result) dtypes that the
//   ops' rules produce run directly on the input; rarer pairs (an explicit dtype=) cast
//   the input first.
// - max/min propagate NaN; argmax/argmin take the first extreme, and the first NaN.
// - var/std take two passes: each output's mean in the compute type, then the squared
//   deviations from it.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu/accumulators.h"
#include "cpu/kernels.h"
#include "cpu/reduce_engine.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {
namespace {

using reduce::reduce;

template <class In_, class Out_> struct Mean : Sum<In_, Out_> {
  using Acc = typename Sum<In_, Out_>::Acc;
  Out_ finalize(Acc a, int64_t count, int64_t) const {
    if constexpr (is_complex_v<Acc>) return Out_((a + Acc(0)) / typename Acc::value_type(count));
    else return Out_((a + Acc(0)) / Acc(count));
  }
};

// max/min of a contiguous float run, blind to NaN (one max instruction per vector), with a
// running sum beside it as a probe: the sum is NaN only if a NaN was seen (or, rarely,
// +inf met -inf). Written with vectors of the target's width (compilers keep the
// element-wise select of wider generic vectors scalar), four of each in flight.
template <class T, bool Max, int Bytes>
__attribute__((always_inline)) inline T blind_extremum_body(const T* x, int64_t n, T& probe_sum) {
  typedef T V __attribute__((vector_size(Bytes)));
  constexpr int W = Bytes / sizeof(T), U = 4;
  auto step = [](auto& acc, auto v) { acc = Max ? (v > acc ? v : acc) : (v < acc ? v : acc); };
  V m[U], probe[U];
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < W; ++j) m[u][j] = Max ? -INFINITY : INFINITY, probe[u][j] = 0;
  int64_t i = 0;
  for (; i + U * W <= n; i += U * W)
    for (int u = 0; u < U; ++u) {
      V v;
      std::memcpy(&v, x + i + u * W, Bytes);
      step(m[u], v);
      probe[u] += v;
    }
  for (; i + W <= n; i += W) {
    V v;
    std::memcpy(&v, x + i, Bytes);
    step(m[0], v);
    probe[0] += v;
  }
  for (int u = 1; u < U; ++u) step(m[0], m[u]), probe[0] += probe[u];
  T result = m[0][0], sum = probe[0][0];
  for (int j = 1; j < W; ++j) step(result, m[0][j]), sum += probe[0][j];
  for (; i < n; ++i) step(result, x[i]), sum += x[i];
  probe_sum = sum;
  return result;
}

template <class T, bool Max>
__attribute__((target("arch=x86-64-v4"))) T blind_extremum_v4(const T* x, int64_t n, T& probe) {
  return blind_extremum_body<T, Max, 64>(x, n, probe);
}
template <class T, bool Max>
__attribute__((target("arch=x86-64-v3"))) T blind_extremum_v3(const T* x, int64_t n, T& probe) {
  return blind_extremum_body<T, Max, 32>(x, n, probe);
}
template <class T, bool Max> T blind_extremum_v1(const T* x, int64_t n, T& probe) {
  return blind_extremum_body<T, Max, 16>(x, n, probe);
}

template <class T, bool Max> T blind_extremum(const T* x, int64_t n, T& probe) {
  static const auto best = __builtin_cpu_supports("x86-64-v4")   ? blind_extremum_v4<T, Max>
                           : __builtin_cpu_supports("x86-64-v3") ? blind_extremum_v3<T, Max>
                                                                 : blind_extremum_v1<T, Max>;
  return best(x, n, probe);
}

template <class T, bool Max> struct Extremum {
  using In = T;
  using Out = T;
  using Acc = compute_t<T>;
  static constexpr bool kIndexed = false;
  Acc identity() const {
    if constexpr (kFloat<Acc>) return Max ? -INFINITY : INFINITY;
    else return Max ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
  }
  Acc map(In v, int64_t, int64_t) const { return Acc(v); }
  // NaN wins: a NaN held in a is kept, a NaN in b fails the comparison and is taken.
  Acc combine(Acc a, Acc b) const {
    if constexpr (Max) return (a > b || is_nan(a)) ? a : b;
    else return (a < b || is_nan(a)) ? a : b;
  }
  Out finalize(Acc a, int64_t, int64_t) const { return Out(a); }

  // float32/float64 runs: the NaN-blind pass, taken again with `combine` only when the
  // probe says that a NaN may be there.
  Acc run(const In* x, int64_t n, int64_t stride, int64_t) const requires kFloat<T> {
    if (stride == 1) {
      Acc probe;
      Acc v = blind_extremum<T, Max>(x, n, probe);
      if (!is_nan(probe)) return v;
      return reduce::lanes<Extremum, true>(*this, x, n, 1, 0);
    }
    return reduce::lanes<Extremum, false>(*this, x, n, stride, 0);
  }
};

// all, any and count_nonzero read every dtype as unsigned integers of its size: a value is
// nonzero when its bits under `mask` are (the mask drops a float's sign bits, so -0.0 is
// zero and NaN is not). Five types of bits serve the fifteen dtypes.
enum class Truth { All, Any, Count };

template <class Bits, Truth Op> struct Nonzero {
  using In = Bits;
  using Out = std::conditional_t<Op == Truth::Count, int64_t, bool>;
  using Acc = std::conditional_t<Op == Truth::Count, int64_t, uint8_t>;
  static constexpr bool kIndexed = false;
  Bits mask;
  Acc identity() const { return Op == Truth::All; }
  Acc map(In v, int64_t, int64_t) const { return (v & mask) != 0; }
  Acc combine(Acc a, Acc b) const {
    if constexpr (Op == Truth::All) return a & b;
    else if constexpr (Op == Truth::Any) return a | b;
    else return a + b;
  }
  Out finalize(Acc a, int64_t, int64_t) const { return Out(a); }
};

// The second pass of var/std: squared distances from each output's mean (in means[out]).
template <class T> struct SquaredDeviation {
  using In = T;
  using Mean = compute_t<T>;
  using Acc = decltype(std::abs(Mean()));
  using Out = std::conditional_t<is_complex_v<T>, Acc, T>;
  static constexpr bool kIndexed = false;
  const Mean* means;
  double correction;
  bool root;  // std: the square root of the variance
  Acc identity() const { return Acc(-0.0); }
  Acc map(In v, int64_t out, int64_t) const {
    Mean d = Mean(v) - means[out];
    if constexpr (is_complex_v<Mean>) return d.real() * d.real() + d.imag() * d.imag();
    else return d * d;
  }
  Acc combine(Acc a, Acc b) const { return a + b; }
  Out finalize(Acc a, int64_t count, int64_t) const {
    double divisor = static_cast<double>(count) - correction;
    Acc v = divisor > 0 ? Acc(a + Acc(0)) / Acc(divisor) : Acc(NAN);
    return Out(root ? std::sqrt(v) : v);
  }
};

template <class T, bool Max> struct ArgExtremum {
  using In = T;
  using Out = int64_t;
  using Value = compute_t<T>;
  struct Acc { Value value; int64_t index; };
  static constexpr bool kIndexed = true;
  static constexpr int64_t kBlock = 256;
  Extremum<T, Max> extremum;

  static bool better(Value b, Value a) {
    bool nan_first = is_nan(b) && !is_nan(a);
    return (Max ? b > a : b < a) || nan_first;
  }
  Acc identity() const { return {extremum.identity(), -1}; }
  Acc map(In v, int64_t, int64_t position) const { return {Value(v), position}; }
  Acc combine(Acc a, Acc b) const { return a.index < 0 || better(b.value, a.value) ? b : a; }
  Out finalize(Acc a, int64_t, int64_t) const { return a.index; }

  // A run: the extreme of each block of a contiguous run comes from the vectorised value
  // reduction; only a block that improves on the best so far is searched for its index.
  Acc run(const In* x, int64_t n, int64_t stride, int64_t position) const {
    Acc best = identity();
    if (stride != 1) {
      for (int64_t i = 0; i < n; ++i) best = combine(best, map(x[i * stride], 0, position + i));
      return best;
    }
    for (int64_t start = 0; start < n; start += kBlock) {
      int64_t m = std::min(kBlock, n - start);
      Value v = reduce::reduce_run(extremum, x + start, m, 1, 0, 0);
      if (best.index >= 0 && !better(v, best.value)) continue;
      for (int64_t i = start; i < start + m; ++i) {
        Value xi = Value(x[i]);
        if (xi == v || (is_nan(v) && is_nan(xi))) { best = {xi, position + i}; break; }
      }
    }
    return best;
  }
};

// ---- Kernels: dtype dispatch -------------------------------------------------------------

template <class T> T* out_data(const KernelCall& call) {
  return reinterpret_cast<T*>(call.out().data());
}

// Sums, products and means of x into the call's output (see visit_accumulation).
template <template <class, class> class Family, bool FloatOnly, bool Widen>
void accumulate_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  DType out_dtype = call.out().dtype();
  bool direct = visit_accumulation<FloatOnly, Widen>(x.dtype(), out_dtype, [&](auto in, auto out) {
    using Out = typename decltype(out)::type;
    reduce(Family<typename decltype(in)::type, Out>{}, x, call.attrs->axes, out_data<Out>(call));
  });
  if (direct) return;
  Tensor cast = cast_input(x, call.out().dtype());
  const Tensor* inputs[] = {&cast};
  accumulate_kernel<Family, FloatOnly, Widen>(KernelCall{inputs, 1, call.outputs, 1, call.attrs});
}

// max, min, argmax, argmin: reducers of the input's type (bool read as uint8); complex
// inputs have no order (the ops refuse them first).
template <template <class, bool> class Family, bool Max>
void ordered_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(), [&](auto tag) {
    using T = std::conditional_t<std::is_same_v<typename decltype(tag)::type, bool>, uint8_t,
                                 typename decltype(tag)::type>;
    if constexpr (is_complex_v<T>) {
      throw TypeError("complex numbers have no order");
    } else {
      using R = Family<T, Max>;
      reduce(R{}, call.in(0), call.attrs->axes, out_data<typename R::Out>(call));
    }
  });
}

template <Truth Op> void truth_kernel(const KernelCall& call) {
  DType d = call.in(0).dtype();
  auto go = [&](auto mask) {
    using R = Nonzero<decltype(mask), Op>;
    reduce(R{mask}, call.in(0), call.attrs->axes, out_data<typename R::Out>(call));
  };
  bool floating = is_floating(d) || is_complex(d);
  switch (itemsize(d)) {
    case 1: return go(uint8_t(0xff));
    case 2: return go(uint16_t(floating ? 0x7fff : 0xffff));
    case 4: return go(uint32_t(floating ? 0x7fffffffu : ~0u));
    case 8:
      return go(uint64_t(d == DType::Complex64 ? 0x7fffffff7fffffffull
                         : floating            ? 0x7fffffffffffffffull : ~0ull));
    default: {
      unsigned __int128 half = 0x7fffffffffffffffull;  // complex128: both parts
      return go(half << 64 | half);
    }
  }
}

// var (Sqrt false) and std (Sqrt true); attrs.value is the correction. Integer inputs
// arrive with a float64 result and are cast first.
template <bool Sqrt> void moment_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  if (!is_floating(x.dtype()) && !is_complex(x.dtype())) {
    Tensor cast = cast_input(x, call.out().dtype());
    const Tensor* inputs[] = {&cast};
    return moment_kernel<Sqrt>(KernelCall{inputs, 1, call.outputs, 1, call.attrs});
  }
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      throw TypeError("var/std need a floating-point input");
    } else {
      using M = compute_t<T>;
      std::vector<M> means(static_cast<size_t>(call.out().numel()));
      reduce(Mean<T, M>{}, x, call.attrs->axes, means.data());
      using R = SquaredDeviation<T>;
      R deviation{means.data(), call.attrs->value.template to<double>(), Sqrt};
      reduce(deviation, x, call.attrs->axes, out_data<typename R::Out>(call));
    }
  });
}

struct ReductionEntry {
  const char* name;
  void (*run)(const KernelCall&);
  const char* description;
};

const ReductionEntry kReductions[] = {
    {"sum", accumulate_kernel<Sum, false, true>, "pairwise lanes or row accumulation, fixed order"},
    {"prod", accumulate_kernel<Prod, false, false>, "lanes or row accumulation, fixed order"},
    {"mean", accumulate_kernel<Mean, true, false>, "pairwise sum, divided once"},
    {"max", ordered_kernel<Extremum, true>, "NaN-blind lanes checked by a probe"},
    {"min", ordered_kernel<Extremum, false>, "NaN-blind lanes checked by a probe"},
    {"all", truth_kernel<Truth::All>, "lanes of logical and over the bits"},
    {"any", truth_kernel<Truth::Any>, "lanes of logical or over the bits"},
    {"count_nonzero", truth_kernel<Truth::Count>, "lanes of counts over the bits"},
    {"argmax", ordered_kernel<ArgExtremum, true>, "block maxima, then the first index"},
    {"argmin", ordered_kernel<ArgExtremum, false>, "block minima, then the first index"},
    {"var", moment_kernel<false>, "two passes: means, squared deviations"},
    {"std", moment_kernel<true>, "two passes: means, squared deviations"},
};

}  // namespace

Tensor cast_input(const Tensor& x, DType dtype) {
  Tensor cast = Tensor::empty(x.shape(), dtype, x.device());
  const Tensor* inputs[] = {&x};
  copy_kernel(KernelCall{inputs, 1, &cast, 1, nullptr});
  return cast;
}

void register_reduction_kernels(KernelRegistry& registry) {
  for (const ReductionEntry& entry : kReductions) {
    registry.add(kernel_info(entry.name, "native", entry.run, entry.description));
  }
}

}  // namespace xrt::cpu
