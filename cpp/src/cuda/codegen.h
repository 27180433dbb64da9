// cpp/src/cuda/codegen.h: what the CUDA kernel families share to generate and launch
// kernels: the device type of each dtype, strided plans of operands, grid sizes.
#pragma once
#include <cstdint>
#include <initializer_list>

#include "xpuruntime/tensor.h"

namespace xrt::cuda {

/// The type common.cuh stores a dtype's elements in: "bool", "xrt::int8_t", "float",
/// "xrt::float16", "xrt::complex64", ...
const char* device_type(DType dtype);

/// The operands of one elementwise launch (output first; all of the output's shape, inputs
/// broadcast with stride 0), reduced as the CPU's loops reduce them: size-1 dimensions
/// dropped, dimensions merged where every operand is contiguous across them.
struct StridedPlan {
  int ndim = 1;              ///< dimensions left (at least 1)
  int nargs = 0;             ///< operands
  int64_t numel = 0;
  bool contiguous = false;   ///< every operand is one dense run of its own elements
  bool index32 = false;      ///< numel and every byte offset fit in 31 bits
  /// The kernel argument xrt::StridedLayout<ndim, nargs> (common.cuh): ndim sizes, then
  /// each operand's ndim byte strides. Pass layout.data() as its argument pointer.
  Dims layout;

  /// "xrt::uint32_t" or "xrt::uint64_t": the unsigned index type of the kernel; the
  /// signed one for offsets is "int" or "xrt::int64_t".
  const char* index_type() const { return index32 ? "xrt::uint32_t" : "xrt::uint64_t"; }
  const char* offset_type() const { return index32 ? "int" : "xrt::int64_t"; }
};
/// At most kMaxOperands operands. The dimensions go in row-major order, or, with
/// in_memory_order (an elementwise map, whose elements may come in any order), in the first
/// operand's memory order (core/host/memory_order.h).
inline constexpr int kMaxOperands = 8;
StridedPlan plan_strided(std::initializer_list<const Tensor*> operands,
                         bool in_memory_order = false);

/// Blocks of `per_block` work items for n items, at most max_blocks (kernels loop over the
/// grid for the rest). 0 when n is 0.
unsigned grid_blocks(int64_t n, int64_t per_block, unsigned max_blocks = 1u << 20);

/// A grid dimension formed from a count of blocks, checked against CUDA's limits (x up to
/// 2^31 - 1, y and z up to 65535) instead of cast: a cast wraps a count of 2^32 or more into
/// a small grid that leaves rows unsorted, not an error. Launches that loop over the grid use
/// grid_blocks; this is for kernels whose block index names the work. Raises
/// UnsupportedOperationError naming `what` when the count does not fit.
unsigned grid_dim(int64_t blocks, char axis, const char* what);

/// Items per thread of a tile kernel (the scans' tiles, nonzero's compaction): `fallback`,
/// unless XPURUNTIME_CUDA_TILE_ITEMS (read per call, for benchmarks that sweep it) names a
/// multiple of `multiple_of` from 4 to 32.
int tile_items(int fallback, int multiple_of = 1);

inline int64_t ceil_div(int64_t n, int64_t by) { return (n + by - 1) / by; }
/// n rounded up to a multiple of `to` (scratch buffers carved at aligned offsets).
inline int64_t round_up(int64_t n, int64_t to) { return ceil_div(n, to) * to; }

}  // namespace xrt::cuda
