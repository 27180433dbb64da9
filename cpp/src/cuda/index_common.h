// cpp/src/cuda/index_common.h: what the CUDA creation and indexing kernels share (the
// device code of both is cpp/kernels/xrt/index.cuh).
#pragma once
#include <string>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/runtime.h"

namespace xrt::cuda::index_detail {

inline constexpr unsigned kBlock = 256;
inline const std::string kHead =
    "#include \"xrt/index.cuh\"\nextern \"C\" __global__ void __launch_bounds__(256) ";

/// The device type that moves `size` bytes as one element.
inline const char* bytes_type(size_t size) {
  switch (size) {
    case 1: return "xrt::uint8_t";
    case 2: return "xrt::uint16_t";
    case 4: return "xrt::uint32_t";
    case 8: return "xrt::uint64_t";
    default: return "xrt::index_bytes16";
  }
}
inline const char* index_type(bool index32) { return index32 ? "xrt::uint32_t" : "xrt::uint64_t"; }

/// One thread per element of n, on the device's current stream.
inline void launch_n(CUfunction fn, int64_t n, int device, std::vector<void*> args) {
  launch(fn, {grid_blocks(n, kBlock)}, {kBlock}, 0, current_stream(device), args.data());
}

}  // namespace xrt::cuda::index_detail
