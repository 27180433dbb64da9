// cpp/include/xpuruntime/cuda_memory.h: CUDA memory as the bindings see it: which allocator,
// statistics and controls per device, record_stream, graph-private pools, pinned host memory.
// `device` -1 means the calling thread's current device everywhere here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "xpuruntime/caching_allocator.h"
#include "xpuruntime/storage.h"
#include "xpuruntime/tensor.h"

namespace xrt::cuda {

enum class AllocatorKind { Caching, StreamOrdered };

/// Chooses the allocator of every device: before the first CUDA allocation only
/// (ValueError after it, unless kind is already the one in use). Without a call, the
/// XPURUNTIME_CUDA_ALLOCATOR environment variable ("caching", "stream_ordered") decides,
/// and caching is the default.
void set_allocator(AllocatorKind kind);
AllocatorKind allocator_kind();
/// "caching" / "stream_ordered"; ValueError for anything else.
AllocatorKind parse_allocator_kind(const std::string& name);
const char* allocator_name(AllocatorKind kind);

// Statistics and control per device (in stream-ordered mode, reserved bytes are the
// driver pool's and there are no segments to show).
MemoryStats memory_stats(int device);
std::string memory_summary(int device);
std::vector<SegmentInfo> memory_snapshot(int device);
/// Gives every device's unused cached memory (and unused pinned buffers) back.
void empty_cache();
void reset_peak_memory_stats(int device);
void reset_accumulated_memory_stats(int device);
/// Caps the memory the allocator reserves on device (0: no cap).
void set_memory_limit(int device, size_t bytes);
/// The cap as a fraction (0, 1] of the device's total memory.
void set_memory_fraction(int device, double fraction);

/// Notes that storage (a CUDA allocation) is used on stream too: its memory is reused only
/// after the work queued there before the free has run. Other storage is ignored.
void record_stream(const Storage& storage, const Stream& stream);

// Note [Graph-private pools]: a CUDA graph replays its kernels on the addresses they had at
// capture, so memory allocated while capturing must stay the graph's until the graph is
// gone. The graph helper brackets a capture on stream with begin_private_pool(device, id,
// stream) / end_private_pool(device, id) (id: any nonzero number naming the graph's pool;
// several captures may share one) and calls release_private_pool when the graph is
// destroyed. In between, allocations on that stream come from the pool's own segments and
// their blocks return to the pool when freed, never to other work. The pool may grow by
// cuMemAlloc during capture: capture in relaxed or thread-local mode. In stream-ordered
// mode these do nothing: cuMemAllocAsync is captured as graph memory nodes.
void begin_private_pool(int device, PoolId id, const Stream& stream);
void end_private_pool(int device, PoolId id);
void release_private_pool(int device, PoolId id);

/// A contiguous CPU tensor in pinned memory from device's pinned pool: copies between it and
/// the device skip staging. ValueError for a negative dimension.
Tensor empty_pinned(const Dims& shape, DType dtype, int device);
MemoryStats pinned_memory_stats(int device);

/// Copies of pageable memory of at least this many bytes are staged through pinned buffers
/// (0 restores the default; SIZE_MAX turns staging off). For benchmarks and tests.
void set_staging_threshold(size_t nbytes);
size_t staging_threshold();
/// Whether host->device staging writes its pinned chunks with streaming (non-temporal)
/// stores (the default) or memcpy.
void set_staging_streaming_stores(bool on);

}  // namespace xrt::cuda
