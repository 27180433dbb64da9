// cpp/src/cuda/codegen.cpp: device type names, strided plans, grid sizes.
#include "cuda/codegen.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/host/memory_order.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {

const char* device_type(DType dtype) {
  static const char* const names[kNumDTypes] = {
      "bool",          "xrt::int8_t",   "xrt::int16_t",   "xrt::int32_t",    "xrt::int64_t",
      "xrt::uint8_t",  "xrt::uint16_t", "xrt::uint32_t",  "xrt::uint64_t",   "xrt::float16",
      "xrt::bfloat16", "float",         "double",         "xrt::complex64",  "xrt::complex128",
  };
  return names[static_cast<int>(dtype)];
}

StridedPlan plan_strided(std::initializer_list<const Tensor*> operands, bool in_memory_order) {
  StridedPlan plan;
  plan.nargs = static_cast<int>(operands.size());
  const Tensor& first = **operands.begin();
  const Dims& shape = first.shape();
  Dims sizes;
  if (operands.size() > kMaxOperands) throw ValueError("too many operands for one kernel");
  std::array<Dims, kMaxOperands> strides;
  plan.numel = 1;
  int order[64];
  host::memory_order(first, in_memory_order, order);
  for (int i = 0; i < shape.size(); ++i) {
    const int d = order[i];
    plan.numel *= shape[d];
    if (shape[d] == 1) continue;
    bool merge = sizes.size() > 0;
    int k = 0;
    for (const Tensor* t : operands) {
      int64_t s = t->strides()[d] * static_cast<int64_t>(t->itemsize());
      merge = merge && strides[k].back() == s * shape[d];
      ++k;
    }
    k = 0;
    if (merge) sizes[sizes.size() - 1] *= shape[d];
    else sizes.push_back(shape[d]);
    for (const Tensor* t : operands) {
      int64_t s = t->strides()[d] * static_cast<int64_t>(t->itemsize());
      if (merge) strides[k][strides[k].size() - 1] = s;
      else strides[k].push_back(s);
      ++k;
    }
  }
  if (sizes.size() == 0) {  // 0-d, or every dimension of size 1: one element
    sizes.push_back(1);
    for (size_t k = 0; k < operands.size(); ++k) strides[k].push_back(0);
  }
  plan.ndim = sizes.size();
  constexpr int64_t limit = std::numeric_limits<int32_t>::max();
  plan.index32 = plan.numel <= limit;
  plan.contiguous = plan.ndim == 1;
  int k = 0;
  for (const Tensor* t : operands) {
    int64_t extent = 0;
    for (int d = 0; d < plan.ndim; ++d) extent += std::abs(strides[k][d]) * (sizes[d] - 1);
    plan.index32 = plan.index32 && extent <= limit;
    plan.contiguous = plan.contiguous && (sizes[0] == 1 ||
                                          strides[k][0] == static_cast<int64_t>(t->itemsize()));
    ++k;
  }
  plan.layout = sizes;
  for (size_t j = 0; j < operands.size(); ++j)
    for (int d = 0; d < plan.ndim; ++d) plan.layout.push_back(strides[j][d]);
  return plan;
}

unsigned grid_dim(int64_t blocks, char axis, const char* what) {
  const int64_t limit = axis == 'x' ? (int64_t(1) << 31) - 1 : 65535;
  if (blocks < 0 || blocks > limit)
    throw UnsupportedOperationError(std::string(what) + " on CUDA: " + std::to_string(blocks) +
                                    " blocks in grid dimension " + axis +
                                    ", which takes at most " + std::to_string(limit));
  return static_cast<unsigned>(blocks);
}

unsigned grid_blocks(int64_t n, int64_t per_block, unsigned max_blocks) {
  if (n <= 0) return 0;
  int64_t blocks = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(std::min<int64_t>(blocks, max_blocks));
}

int tile_items(int fallback, int multiple_of) {
  const char* env = std::getenv("XPURUNTIME_CUDA_TILE_ITEMS");
  if (!env || !*env) return fallback;
  char* end = nullptr;
  long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 4 || v > 32 || v % 4 != 0 || v % multiple_of != 0) return fallback;
  return static_cast<int>(v);
}

}  // namespace xrt::cuda
