// cpp/src/cpu/linalg_vector_kernels.cpp: the linalg kernels that need no LAPACK:
// vector_norm (every order), vecdot, cross and outer.
//
// - vector_norm accumulates in double whatever the input precision and guards against
//   overflow and underflow: when the plain sum of |x|^p leaves the normal range, the
//   values are summed again scaled by max |x| (p > 0) or min |x| (p < 0), whose scaled
//   terms are all at most 1.
// - vecdot, cross and outer follow the elementwise rules: integers wrap, float16/bfloat16
//   compute in float and round after each multiplication and subtraction, the way
//   multiply and subtract would.
#include <cmath>
#include <limits>

#include "core/host/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "cpu/lapack.h"
#include "cpu/linalg_common.h"
#include "cpu/loops.h"
#include "xpuruntime/scalar.h"

namespace xrt::cpu {

using host::visit_dtype;

namespace {

using detail::compute_t;
using detail::is_complex_v;

// ---- vector_norm ------------------------------------------------------------------------

// Some axes of a tensor as (size, byte stride) pairs, merged where they are contiguous.
struct AxesWalk {
  Dims shape, strides;
  int64_t count = 1;

  AxesWalk(const Tensor& x, const Dims& axes) {
    for (int64_t axis : axes) {
      int64_t size = x.shape()[static_cast<int>(axis)];
      int64_t stride = x.strides()[static_cast<int>(axis)] * static_cast<int64_t>(x.itemsize());
      count *= size;
      if (size == 1) continue;
      if (!shape.empty() && strides.back() == stride * size) {
        shape[shape.size() - 1] *= size;
        strides[strides.size() - 1] = stride;
      } else {
        shape.push_back(size);
        strides.push_back(stride);
      }
    }
  }

  /// Byte offset of element `index` (row-major over the axes).
  int64_t offset(int64_t index) const {
    int64_t off = 0;
    for (int d = shape.size() - 1; d >= 0; --d) {
      off += (index % shape[d]) * strides[d];
      index /= shape[d];
    }
    return off;
  }

  /// Calls f(pointer) for every element, starting at base.
  template <class F>
  void each(const char* base, F&& f) const {
    if (count == 0) return;
    if (shape.empty()) return f(base);
    const int last = shape.size() - 1;
    int64_t index[64] = {};
    for (;;) {
      for (int64_t i = 0; i < shape[last]; ++i) f(base + i * strides[last]);
      int d = last - 1;
      for (; d >= 0; --d) {  // next row, row-major
        base += strides[d];
        if (++index[d] < shape[d]) break;
        base -= shape[d] * strides[d];
        index[d] = 0;
      }
      if (d < 0) return;
    }
  }
};

template <class T>
double magnitude(const T& v) {
  if constexpr (is_complex_v<T>)
    return std::abs(std::complex<double>(v.real(), v.imag()));
  else
    return std::fabs(static_cast<double>(static_cast<compute_t<T>>(v)));
}

// The p-norm of the elements the walk visits from base.
template <class T>
double vector_norm_of(const AxesWalk& walk, const char* base, double p) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (walk.count == 0) return p < 0 ? inf : 0.0;
  double largest = 0, smallest = inf, sum = 0;
  int64_t nonzero = 0;
  bool nan = false;
  walk.each(base, [&](const char* ptr) {
    double m = magnitude(*reinterpret_cast<const T*>(ptr));
    nan |= std::isnan(m);
    largest = std::max(largest, m);
    smallest = std::min(smallest, m);
    nonzero += m != 0;
    sum += p == 1 ? m : p == 2 ? m * m : std::isinf(p) || p == 0 ? 0 : std::pow(m, p);
  });
  if (nan) return std::numeric_limits<double>::quiet_NaN();
  if (p == inf) return largest;
  if (p == -inf) return smallest;
  if (p == 0) return static_cast<double>(nonzero);
  double scale = p > 0 ? largest : smallest;
  if (scale == 0 || std::isinf(scale)) return scale;  // a zero (p < 0) or an infinity (p > 0)
  double norm = p == 1 ? sum : p == 2 ? std::sqrt(sum) : std::pow(sum, 1 / p);
  if (std::isfinite(sum) && sum >= std::numeric_limits<double>::min() && std::isfinite(norm))
    return norm;
  double scaled = 0;
  walk.each(base, [&](const char* ptr) {
    double r = magnitude(*reinterpret_cast<const T*>(ptr)) / scale;
    scaled += p == 2 ? r * r : std::pow(r, p);
  });
  return scale * (p == 2 ? std::sqrt(scaled) : std::pow(scaled, 1 / p));
}

// attrs.axes: the reduced axes; attrs.value: the order. The output has one element per
// combination of the kept axes, in their order (keepdims only changes its shape).
template <class T>
void vector_norm_typed(const KernelCall& call) {
  using R = lapack::real_t<T>;  // the output keeps the precision, drops the complex part
  const Tensor& x = call.in(0);
  const double p = call.attrs->value.to<double>();
  Dims kept;
  for (int d = 0, j = 0; d < x.ndim(); ++d) {
    if (j < call.attrs->axes.size() && call.attrs->axes[j] == d)
      ++j;
    else
      kept.push_back(d);
  }
  AxesWalk reduced(x, call.attrs->axes), outer(x, kept);
  R* out = reinterpret_cast<R*>(call.out().data());
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, reduced.count));
  parallel_for(outer.count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = cast_value<R>(vector_norm_of<T>(reduced, x.data() + outer.offset(i), p));
  });
}

void vector_norm_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || detail::is_half_v<T> || is_complex_v<T>)
      vector_norm_typed<T>(call);
    else
      throw TypeError("vector_norm needs a floating-point dtype");
  });
}

// ---- vecdot, cross, outer ------------------------------------------------------------------

template <class C>
C conj_if_complex(const C& v) {
  if constexpr (is_complex_v<C>)
    return std::conj(v);
  else
    return v;
}

// t without its axis `axis` (a view over the remaining ones).
Tensor drop_axis(const Tensor& t, int axis) {
  Dims shape = t.shape(), strides = t.strides();
  shape.erase(axis);
  strides.erase(axis);
  return t.as_strided(std::move(shape), std::move(strides), t.byte_offset());
}

int64_t byte_stride(const Tensor& t, int axis) {
  return t.strides()[axis] * static_cast<int64_t>(t.itemsize());
}

// Inputs (..., K) with the contracted axis last, broadcast; output (...).
template <class T>
void vecdot_typed(const KernelCall& call) {
  using C = compute_t<T>;
  const Tensor &a = call.in(0), &b = call.in(1);
  const int last = a.ndim() - 1;
  const int64_t k = a.shape()[last], sa = byte_stride(a, last), sb = byte_stride(b, last);
  Tensor a_rows = drop_axis(a, last), b_rows = drop_axis(b, last);
  for_each_run<3>({&call.out(), &a_rows, &b_rows},
                  [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
                    for (int64_t i = 0; i < n; ++i) {
                      const char* x = p[1] + i * s[1];
                      const char* y = p[2] + i * s[2];
                      C sum = C(0);
                      for (int64_t j = 0; j < k; ++j)
                        sum += C(conj_if_complex(C(*reinterpret_cast<const T*>(x + j * sa))) *
                                 C(*reinterpret_cast<const T*>(y + j * sb)));
                      *reinterpret_cast<T*>(p[0] + i * s[0]) = T(sum);
                    }
                  });
}

// Inputs broadcast to the output's shape; attrs.axes[0]: the axis of length 3.
template <class T>
void cross_typed(const KernelCall& call) {
  using C = compute_t<T>;
  const Tensor &a = call.in(0), &b = call.in(1);
  Tensor& out = call.out();
  const int axis = static_cast<int>(call.attrs->axes[0]);
  const int64_t so = byte_stride(out, axis), sa = byte_stride(a, axis), sb = byte_stride(b, axis);
  Tensor o_rest = drop_axis(out, axis), a_rest = drop_axis(a, axis), b_rest = drop_axis(b, axis);
  auto product = [](const char* x, const char* y) {  // rounded to T, like multiply
    return C(T(C(*reinterpret_cast<const T*>(x)) * C(*reinterpret_cast<const T*>(y))));
  };
  for_each_run<3>({&o_rest, &a_rest, &b_rest}, [&](const std::array<char*, 3>& p,
                                                   const std::array<int64_t, 3>& s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const char* x = p[1] + i * s[1];
      const char* y = p[2] + i * s[2];
      char* o = p[0] + i * s[0];
      for (int c = 0; c < 3; ++c) {
        int c1 = (c + 1) % 3, c2 = (c + 2) % 3;
        *reinterpret_cast<T*>(o + c * so) =
            T(product(x + c1 * sa, y + c2 * sb) - product(x + c2 * sa, y + c1 * sb));
      }
    }
  });
}

// out[i, j] = a[i] * b[j]; the op hands a and b over broadcast to (N, M).
template <class T>
void outer_typed(const KernelCall& call) {
  using C = compute_t<T>;
  for_each_run<3>({&call.out(), &call.in(0), &call.in(1)},
                  [](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
                    for (int64_t i = 0; i < n; ++i)
                      *reinterpret_cast<T*>(p[0] + i * s[0]) =
                          T(C(*reinterpret_cast<const T*>(p[1] + i * s[1])) *
                            C(*reinterpret_cast<const T*>(p[2] + i * s[2])));
                  });
}

void vecdot_kernel(const KernelCall& call) {
  visit_dtype(call.out().dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      throw TypeError("vecdot needs a numeric dtype");
    else
      vecdot_typed<T>(call);
  });
}
void cross_kernel(const KernelCall& call) {
  visit_dtype(call.out().dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      throw TypeError("cross needs a numeric dtype");
    else
      cross_typed<T>(call);
  });
}
void outer_kernel(const KernelCall& call) {
  visit_dtype(call.out().dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      throw TypeError("outer needs a numeric dtype");
    else
      outer_typed<T>(call);
  });
}

bool floating(DType d) { return is_floating(d) || is_complex(d); }
bool numeric(DType d) { return is_numeric(d); }

}  // namespace

void register_linalg_vector_kernels(KernelRegistry& registry) {
  add_linalg_kernel(registry, "vector_norm", "native", vector_norm_kernel,
                    "double accumulation, rescaled on overflow/underflow", floating);
  add_linalg_kernel(registry, "vecdot", "native", vecdot_kernel, "strided dot products", numeric);
  add_linalg_kernel(registry, "cross", "native", cross_kernel, "3-vector cross products", numeric);
  add_linalg_kernel(registry, "outer", "native", outer_kernel, "strided products", numeric);
}

}  // namespace xrt::cpu
