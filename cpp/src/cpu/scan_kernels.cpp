// cpp/src/cpu/scan_kernels.cpp: cumulative sums and products along one axis.
//
// - A scan is sequential along its axis (each result is the previous one combined with the
//   next element, exactly as repeated add/multiply would give), so the work is shared out
//   by lines: lines whose elements are contiguous across lines (axis=0 of a C-ordered
//   matrix) are scanned side by side in blocks, vectorised across the block.
// - Accumulators are accumulators.h's (64-bit integers, float32 for the 16-bit floats);
//   every output element is rounded from the accumulator once.
#include <vector>

#include "cpu/accumulators.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {
namespace {

constexpr int64_t kLineBlock = 512;  // lines scanned side by side

// A tensor without one axis: the start of each line along that axis.
Tensor lines_of(const Tensor& t, int axis) {
  Dims shape, strides;
  for (int d = 0; d < t.ndim(); ++d) {
    if (d == axis) continue;
    shape.push_back(t.shape()[d]);
    strides.push_back(t.strides()[d]);
  }
  return t.as_strided(shape, strides, t.byte_offset());
}

// out[k] = x[0] (*) ... (*) x[k] along axis, for reducer R (Sum or Prod).
template <class R> void scan(const R& r, const Tensor& x, const Tensor& out, int axis) {
  using In = typename R::In;
  using Out = typename R::Out;
  using Acc = typename R::Acc;
  int64_t length = x.shape()[axis];
  if (length == 0 || x.numel() == 0) return;
  int64_t xs = x.strides()[axis], os = out.strides()[axis];
  Tensor out_lines = lines_of(out, axis), x_lines = lines_of(x, axis);
  LoopPlan<2> plan({&out_lines, &x_lines});
  auto inner = [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const In* v = reinterpret_cast<const In*>(p[1]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(In) && n >= 8) {
      Acc acc[kLineBlock];
      for (int64_t b = 0; b < n; b += kLineBlock) {
        int64_t m = std::min(kLineBlock, n - b);
        for (int64_t j = 0; j < m; ++j) acc[j] = r.identity();
        for (int64_t k = 0; k < length; ++k) {
          const In* row = v + k * xs + b;
          Out* dst = o + k * os + b;
          for (int64_t j = 0; j < m; ++j) {
            acc[j] = r.combine(acc[j], r.map(row[j], 0, 0));
            dst[j] = cast_value<Out>(acc[j]);
          }
        }
      }
      return;
    }
    for (int64_t line = 0; line < n; ++line) {
      Out* dst = reinterpret_cast<Out*>(p[0] + line * s[0]);
      const In* src = reinterpret_cast<const In*>(p[1] + line * s[1]);
      Acc acc = r.identity();
      for (int64_t k = 0; k < length; ++k) {
        acc = r.combine(acc, r.map(src[k * xs], 0, 0));
        dst[k * os] = cast_value<Out>(acc);
      }
    }
  };
  int64_t grain = std::max<int64_t>(1, kParallelGrain / length);
  if (plan.numel <= grain) return plan.walk(0, plan.numel, inner);
  parallel_for(plan.numel, grain,
               [&](int64_t begin, int64_t end) { plan.walk(begin, end, inner); });
}

// cumulative_sum / cumulative_prod: out (a view: the op wrote the initial value, if any)
// along attrs.axes[0].
template <template <class, class> class Family> void scan_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  int axis = static_cast<int>(call.attrs->axes[0]);
  DType out_dtype = call.out().dtype();
  bool direct = visit_accumulation<false, true>(x.dtype(), out_dtype, [&](auto in, auto out) {
    scan(Family<typename decltype(in)::type, typename decltype(out)::type>{}, x, call.out(), axis);
  });
  if (direct) return;
  Tensor cast = cast_input(x, call.out().dtype());
  const Tensor* inputs[] = {&cast};
  scan_kernel<Family>(KernelCall{inputs, 1, call.outputs, 1, call.attrs});
}

struct ScanEntry {
  const char* name;
  void (*run)(const KernelCall&);
  const char* description;
};

const ScanEntry kScans[] = {
    {"cumulative_sum", scan_kernel<Sum>, "sequential along the axis, lines side by side"},
    {"cumulative_prod", scan_kernel<Prod>, "sequential along the axis, lines side by side"},
};

}  // namespace

void register_scan_kernels(KernelRegistry& registry) {
  for (const ScanEntry& entry : kScans) {
    registry.add(kernel_info(entry.name, "native", entry.run, entry.description));
  }
}

}  // namespace xrt::cpu
