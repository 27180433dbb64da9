// cpp/src/cuda/compaction.h: the host side of mask.cuh's one-pass stream compaction,
// shared by the mask kernels (mask_kernels.cpp) and unique (set_kernels.cpp).
#pragma once
#include <string>

#include "cuda/driver.h"
#include "cuda/reduce_common.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda::compaction {

inline constexpr unsigned kBlock = 256;  // kBlock of mask.cuh
inline constexpr int64_t kGroup = 32;    // kGroup of scan.cuh

/// The tiles of one compaction launch over n positions, ITEMS per thread, and their
/// meeting place (scan.cuh's Work: flags, zeroed here, then the totals).
struct TileWork {
  int64_t tiles = 0;
  Tensor buffer;

  TileWork(int64_t n, int items, Device device, CUstream stream) {
    int64_t per_tile = int64_t(kBlock) * items;
    tiles = (n + per_tile - 1) / per_tile;
    if (tiles > (int64_t(1) << 31) - 1)
      throw UnsupportedOperationError("compaction on CUDA: too many tiles for one launch");
    int64_t groups = (tiles + kGroup - 1) / kGroup;
    int64_t flag_bytes = (16 + 4 * (tiles + groups) + 15) / 16 * 16;
    buffer = device_scratch(flag_bytes + 8 * (tiles + groups), device);
    XRT_CU(cuMemsetD32Async, reinterpret_cast<CUdeviceptr>(buffer.data()), 0u,
           static_cast<size_t>(flag_bytes / 4), stream);
  }
  char* data() const { return buffer.data(); }
  unsigned blocks() const { return static_cast<unsigned>(tiles); }
};

}  // namespace xrt::cuda::compaction
