// cpp/src/cpu/manipulation_kernels.cpp: repeat (one count, or one per element of the axis).
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {
namespace {

// Copies `block` bytes `count` times from src to consecutive places at dst.
template <size_t Block> void repeat_block(char* dst, const char* src, int64_t count) {
  for (int64_t r = 0; r < count; ++r) std::memcpy(dst + r * Block, src, Block);
}

void repeat_bytes(char* dst, const char* src, int64_t block, int64_t count) {
  switch (block) {
    case 1: return repeat_block<1>(dst, src, count);
    case 2: return repeat_block<2>(dst, src, count);
    case 4: return repeat_block<4>(dst, src, count);
    case 8: return repeat_block<8>(dst, src, count);
    case 16: return repeat_block<16>(dst, src, count);
    default:
      for (int64_t r = 0; r < count; ++r) std::memcpy(dst + r * block, src, static_cast<size_t>(block));
  }
}

// in(0): x, contiguous; in(1), when given: the int64 counts, one per element of the axis
// (attrs.axes[0]), non-negative; without it every count is attrs.value. out: contiguous,
// the axis lengthened to the sum of the counts. Bytes, not values: every dtype is copied
// alike. The input is seen as (outer, n, inner) blocks of `inner` bytes; block (p, i) lands
// count[i] times from position p * total + start[i] of the output's axis.
void repeat_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const int axis = static_cast<int>(call.attrs->axes[0]);
  const int64_t n = x.shape()[axis];
  int64_t outer = 1, inner = static_cast<int64_t>(x.itemsize());
  for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int d = axis + 1; d < x.ndim(); ++d) inner *= x.shape()[d];
  std::vector<int64_t> count(static_cast<size_t>(n), call.attrs->value.to<int64_t>());
  if (call.num_inputs > 1) {
    const int64_t* given = reinterpret_cast<const int64_t*>(call.in(1).data());
    std::copy(given, given + n, count.begin());
  }
  std::vector<int64_t> start(static_cast<size_t>(n) + 1, 0);
  for (int64_t i = 0; i < n; ++i) start[i + 1] = start[i] + count[i];
  const int64_t total = start[n];
  const char* src = x.data();
  char* dst = call.out().data();
  const int64_t* counts = count.data();
  const int64_t* starts = start.data();
  int64_t grain = std::max<int64_t>(1, kParallelGrain * 8 / inner);
  parallel_for(outer * n, grain, [=](int64_t begin, int64_t end) {
    int64_t p = begin / n, i = begin % n;
    for (int64_t k = begin; k < end; ++k) {
      repeat_bytes(dst + (p * total + starts[i]) * inner, src + k * inner, inner, counts[i]);
      if (++i == n) i = 0, ++p;
    }
  });
}

}  // namespace

void register_manipulation_kernels(KernelRegistry& r) {
  r.add(kernel_info("repeat", "native", repeat_kernel,
                    "block copies per element of the axis (bytes)"));
}

}  // namespace xrt::cpu
