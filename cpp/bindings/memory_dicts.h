// cpp/bindings/memory_dicts.h: allocator statistics and segment snapshots as the Python
// dicts and lists users read (memory_stats(), memory_snapshot()); shared by _core and the
// test module xpuruntime_testing.
#pragma once
#include <nanobind/nanobind.h>

#include <vector>

#include "xpuruntime/caching_allocator.h"

namespace xrt::py {

namespace nb = nanobind;

/// {"allocated_bytes.all.current": ..., "num_ooms": ...}, PyTorch's flat keys.
inline nb::dict stats_dict(const MemoryStats& stats) {
  nb::dict d;
  for (auto& [key, value] : stat_items(stats)) d[key.c_str()] = value;
  return d;
}

/// One dict per segment, with its blocks in address order.
inline nb::list snapshot_list(const std::vector<SegmentInfo>& segments) {
  nb::list out;
  for (const SegmentInfo& s : segments) {
    nb::dict seg;
    seg["address"] = s.address;
    seg["size"] = s.size;
    seg["stream"] = s.stream;
    seg["pool"] = s.small ? "small" : "large";
    seg["private_pool"] = s.private_pool;
    nb::list blocks;
    for (const SegmentInfo::Block& b : s.blocks) {
      nb::dict block;
      block["address"] = b.address;
      block["size"] = b.size;
      block["state"] = b.allocated ? "allocated" : b.pending ? "pending" : "free";
      blocks.append(block);
    }
    seg["blocks"] = blocks;
    out.append(seg);
  }
  return out;
}

}  // namespace xrt::py
