// cpp/src/cpu/copy_kernels.cpp: copy with conversion between any two dtypes, any strides
// (float <-> float16 runs convert in blocks, in hardware where the CPU can: half_blocks.h).
#include <cstring>

#include "core/host/dtype_dispatch.h"
#include "cpu/half_blocks.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "xpuruntime/scalar.h"

namespace xrt::cpu {

using host::visit_dtype;

namespace {

template <class To, class From> void copy_typed(const Tensor& out, const Tensor& in) {
  for_each_run<2>({&out, &in}, [](const std::array<char*, 2>& p,
                                  const std::array<int64_t, 2>& s, int64_t n) {
    constexpr int64_t to_size = sizeof(To), from_size = sizeof(From);
    if (s[0] == to_size && s[1] == from_size) {
      if constexpr (std::is_same_v<To, From>) {
        std::memcpy(p[0], p[1], static_cast<size_t>(n) * sizeof(To));
      } else if constexpr (std::is_same_v<To, Float16> && std::is_same_v<From, float>) {
        narrow_to_float16(reinterpret_cast<const float*>(p[1]), reinterpret_cast<Float16*>(p[0]), n);
      } else if constexpr (std::is_same_v<To, float> && std::is_same_v<From, Float16>) {
        widen_float16(reinterpret_cast<const Float16*>(p[1]), reinterpret_cast<float*>(p[0]), n);
      } else {
        To* o = reinterpret_cast<To*>(p[0]);
        const From* x = reinterpret_cast<const From*>(p[1]);
        for (int64_t i = 0; i < n; ++i) o[i] = cast_value<To>(x[i]);
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<To*>(p[0] + i * s[0]) =
          cast_value<To>(*reinterpret_cast<const From*>(p[1] + i * s[1]));
  }, /*in_memory_order=*/true);
}

}  // namespace

void copy_kernel(const KernelCall& call) {
  const Tensor& out = call.out();
  const Tensor& in = call.in(0);
  visit_dtype(out.dtype(), [&](auto to) {
    visit_dtype(in.dtype(), [&](auto from) {
      copy_typed<typename decltype(to)::type, typename decltype(from)::type>(out, in);
    });
  });
}

}  // namespace xrt::cpu
