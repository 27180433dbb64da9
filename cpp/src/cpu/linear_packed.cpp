// cpp/src/cpu/linear_packed.cpp: linear on a packed float32 weight, in portable C++ (Note
// [Packed linear weights] in core/linear_ops.cpp); the AVX-512 kernel is
// linear_packed_avx512.cpp.
#include <algorithm>
#include <vector>

#include "core/host/thread_pool.h"
#include "core/linear_internal.h"
#include "cpu/kernels.h"

namespace xrt::cpu {

void linear_packed_kernel(const KernelCall& call) {
  const PackedLinearOperands o(call);
  const int64_t m = o.m, n = o.n, k = o.k;
  const float *a = o.x, *panels = o.panels, *bias = o.bias;
  float* c = o.out;
  const int64_t npanels = (n + kLinearPanel - 1) / kLinearPanel;
  host::parallel_for(m, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n * k)),
                     [&](int64_t r0, int64_t r1) {
    float acc[kLinearPanel];
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t jp = 0; jp < npanels; ++jp) {
        std::fill(acc, acc + kLinearPanel, 0.0f);
        const float* panel = panels + jp * k * kLinearPanel;
        for (int64_t p = 0; p < k; ++p)
          for (int j = 0; j < kLinearPanel; ++j) acc[j] += a[r * k + p] * panel[p * kLinearPanel + j];
        const int64_t cols = std::min<int64_t>(kLinearPanel, n - jp * kLinearPanel);
        for (int64_t j = 0; j < cols; ++j)
          c[r * n + jp * kLinearPanel + j] = acc[j] + (bias ? bias[jp * kLinearPanel + j] : 0.0f);
      }
  });
  apply_activation(activation_of(call), call.out());
}

}  // namespace xrt::cpu
