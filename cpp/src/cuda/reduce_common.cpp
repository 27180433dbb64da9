// cpp/src/cuda/reduce_common.cpp: the helpers reduce_common.h declares.
#include "cuda/reduce_common.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "xpuruntime/ops.h"

namespace xrt::cuda {

bool accumulates_directly(DType in, DType out, bool mean) {
  if (in == out) return in != DType::Bool;
  switch (kind(in)) {
    case DTypeKind::Bool:
    case DTypeKind::SignedInt:
      return out == DType::Int64 || (mean && out == DType::Float64);
    case DTypeKind::UnsignedInt:
      return out == DType::UInt64 || (mean && out == DType::Float64);
    default:
      return (in == DType::Float32 && out == DType::Float64) ||
             (in == DType::Complex64 && out == DType::Complex128);
  }
}

int64_t sum_accumulator_size(DType out) {
  if (out == DType::Float16 || out == DType::BFloat16) return 4;
  if (is_integer(out) || out == DType::Bool) return 8;
  return static_cast<int64_t>(itemsize(out));
}

Tensor cast_on_device(const Tensor& x, DType dtype) {
  Tensor cast = empty(x.shape(), dtype, x.device());
  copy_into(cast, x);
  return cast;
}

Tensor device_scratch(int64_t bytes, Device device) {
  return empty(Dims{bytes}, DType::UInt8, device);
}

int sm_count(int device) {
  static std::atomic<int> counts[kMaxDevices] = {};
  int n = counts[device].load(std::memory_order_relaxed);
  if (n > 0) return n;
  CUdevice handle;
  XRT_CU(cuDeviceGet, &handle, device);
  XRT_CU(cuDeviceGetAttribute, &n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle);
  counts[device].store(n, std::memory_order_relaxed);
  return n;
}

int resident_blocks(CUfunction fn) {
  static std::mutex mutex;
  static std::unordered_map<CUfunction, int> known;
  {
    std::lock_guard lock(mutex);
    auto it = known.find(fn);
    if (it != known.end()) return it->second;
  }
  int blocks = 0;
  XRT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, fn, kReduceBlock, size_t(0));
  if (blocks < 1) blocks = 1;
  std::lock_guard lock(mutex);
  known[fn] = blocks;
  return blocks;
}

}  // namespace xrt::cuda
