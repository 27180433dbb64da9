// cpp/src/cpu/fill_kernels.cpp: fill and arange.
#include "core/host/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"

namespace xrt::cpu {

using host::visit_dtype;

void fill_kernel(const KernelCall& call) {
  const Tensor& out = call.out();
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T value = call.attrs->value.to<T>();
    for_each_run<1>({&out}, [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s,
                                int64_t n) {
      if (s[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = value;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = value;
      }
    }, /*in_memory_order=*/true);
  });
}

// Note: values are start + i * step (not a running sum), as NumPy computes them, so a
// float arange does not accumulate rounding error along its length.
void arange_kernel(const KernelCall& call) {
  const Tensor& out = call.out();
  const Scalar& start = call.attrs->value;
  const Scalar& step = call.attrs->step;
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = reinterpret_cast<T*>(out.data());
    int64_t n = out.numel();
    auto is_int = [](const Scalar& v) {
      return v.kind == Scalar::Kind::Int || v.kind == Scalar::Kind::UInt;
    };
    if constexpr (std::is_integral_v<T>) {
      // Integer ranges are computed exactly in 64-bit (wrapping) arithmetic; a float start
      // or step with an integer dtype takes the float path below and is cast (truncated).
      if (is_int(start) && is_int(step)) {
        uint64_t first = start.kind == Scalar::Kind::UInt ? start.u : static_cast<uint64_t>(start.i);
        uint64_t delta = step.kind == Scalar::Kind::UInt ? step.u : static_cast<uint64_t>(step.i);
        parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i)
            o[i] = static_cast<T>(first + static_cast<uint64_t>(i) * delta);
        });
        return;
      }
    }
    double first = start.to<double>(), delta = step.to<double>();
    parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        o[i] = cast_value<T>(first + static_cast<double>(i) * delta);
    });
  });
}

}  // namespace xrt::cpu
