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
#include <limits>
#include <vector>

#include "cpu/accumulators.h"
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
};

template <class T, bool All> struct Logical {
  using In = T;
  using Out = bool;
  using Acc = uint8_t;
  static constexpr bool kIndexed = false;
  Acc identity() const { return All; }
  Acc map(In v, int64_t, int64_t) const { return cast_value<bool>(v); }
  Acc combine(Acc a, Acc b) const { return All ? (a & b) : (a | b); }
  Out finalize(Acc a, int64_t, int64_t) const { return a != 0; }
};

template <class T, bool = false> struct CountNonzero {
  using In = T;
  using Out = int64_t;
  using Acc = int64_t;
  static constexpr bool kIndexed = false;
  Acc identity() const { return 0; }
  Acc map(In v, int64_t, int64_t) const { return cast_value<bool>(v); }
  Acc combine(Acc a, Acc b) const { return a + b; }
  Out finalize(Acc a, int64_t, int64_t) const { return a; }
};

// The second pass of var/std: squared distances from each output's mean (in means[out]).
template <class T, bool Sqrt> struct SquaredDeviation {
  using In = T;
  using Mean = compute_t<T>;
  using Acc = decltype(std::abs(Mean()));
  using Out = std::conditional_t<is_complex_v<T>, Acc, T>;
  static constexpr bool kIndexed = false;
  const Mean* means;
  double correction;
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
    return Out(Sqrt ? std::sqrt(v) : v);
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
      Value v = reduce::lanes<Extremum<T, Max>, true>(extremum, x + start, m, 1, 0);
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

// Sums, products and means of x into the call's output.
template <template <class, class> class Family, bool FloatOnly>
void accumulate_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  bool direct = visit_accumulation<FloatOnly>(x.dtype(), call.out().dtype(), [&](auto in, auto out) {
    using Out = typename decltype(out)::type;
    reduce(Family<typename decltype(in)::type, Out>{}, x, call.attrs->axes, out_data<Out>(call));
  });
  if (direct) return;
  Tensor cast = cast_input(x, call.out().dtype());
  const Tensor* inputs[] = {&cast};
  accumulate_kernel<Family, FloatOnly>(KernelCall{inputs, 1, call.outputs, 1, call.attrs});
}

// Reducers whose types follow from the input dtype; Ordered: not for complex numbers (the
// ops refuse them first).
template <template <class, bool> class Family, bool Flag, bool Ordered>
void by_input_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (Ordered && is_complex_v<T>) {
      throw TypeError("complex numbers have no order");
    } else {
      using R = Family<T, Flag>;
      reduce(R{}, call.in(0), call.attrs->axes, out_data<typename R::Out>(call));
    }
  });
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
      using R = SquaredDeviation<T, Sqrt>;
      R deviation{means.data(), call.attrs->value.template to<double>()};
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
    {"sum", accumulate_kernel<Sum, false>, "pairwise lanes or row accumulation, fixed order"},
    {"prod", accumulate_kernel<Prod, false>, "lanes or row accumulation, fixed order"},
    {"mean", accumulate_kernel<Mean, true>, "pairwise sum, divided once"},
    {"max", by_input_kernel<Extremum, true, true>, "NaN-propagating lanes"},
    {"min", by_input_kernel<Extremum, false, true>, "NaN-propagating lanes"},
    {"all", by_input_kernel<Logical, true, false>, "lanes of logical and"},
    {"any", by_input_kernel<Logical, false, false>, "lanes of logical or"},
    {"count_nonzero", by_input_kernel<CountNonzero, false, false>, "lanes of counts"},
    {"argmax", by_input_kernel<ArgExtremum, true, true>, "block maxima, then the first index"},
    {"argmin", by_input_kernel<ArgExtremum, false, true>, "block minima, then the first index"},
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
    KernelInfo k;
    k.op = entry.name;
    k.name = "native";
    k.device = DeviceType::CPU;
    k.run = entry.run;
    k.description = entry.description;
    registry.add(std::move(k));
  }
}

}  // namespace xrt::cpu
