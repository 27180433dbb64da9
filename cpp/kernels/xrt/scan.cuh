// cpp/kernels/xrt/scan.cuh: cumulative sums and products along one axis, for the Sum and
// Prod reducers of reducers.cuh (each result is convert<Out>(accumulator), as the host's).
//
// - lines: a thread per line, sequential along it: the host's order, so results match it
//   bit for bit. For short lines, and for many lines side by side in memory.
// - tiles: a block per tile of kBlock * ITEMS elements of a line. A tile scans its elements
//   (each lane its VEC adjacent elements of a row, then the warp's lanes with shuffles;
//   rows and warps carry in order), publishes its total,
//   and takes as its carry-in the totals of the tiles before it in a fixed tree: the
//   totals of whole groups of kGroup tiles (each published by its group's last tile) and
//   those of its own group's earlier tiles. A tile is its block's index and waits only for
//   lower ones, so every wait ends (Note [Tiles in launch order]); no carry depends on
//   timing, so the results are bit-identical run to run (Note [Deterministic scans] in
//   cuda/scan_kernels.cpp).
#pragma once
#include "xrt/reduce.cuh"

namespace xrt {
namespace scan {

using reduce::shuffle_index;
using reduce::shuffle_up;

using reduce::kBlock;

constexpr int kGroup = 32;  // tiles per published group total

template <int KND> struct Layout {
  const char* in;
  char* out;
  index_t lines;
  index_t kept_size[KND];
  index_t in_stride[KND];   ///< bytes, per kept dimension
  index_t out_stride[KND];
  index_t length;           ///< elements along the axis
  index_t in_step;          ///< bytes between elements along the axis
  index_t out_step;
  index_t tiles;            ///< per line (tiles kernel)
  char* work;               ///< tiles kernel: flags and totals (zeroed flags)
};

// ---- lines -----------------------------------------------------------------------------

template <class R, int KND> __device__ void lines(const Layout<KND>& layout) {
  typedef typename R::In In;
  typedef typename R::Out Out;
  typedef typename R::Acc Acc;
  R r;
  for (index_t t = blockIdx.x * index_t(kBlock) + threadIdx.x; t < layout.lines;
       t += index_t(gridDim.x) * kBlock) {
    const char* x = layout.in + reduce::box_offset<KND>(t, layout.kept_size, layout.in_stride);
    char* y = layout.out + reduce::box_offset<KND>(t, layout.kept_size, layout.out_stride);
    Acc acc = r.identity();
    index_t k = 0;
    for (; k + 4 <= layout.length; k += 4) {
      In v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = reduce::load<In>(x + (k + u) * layout.in_step);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        acc = r.combine(acc, r.map(v[u], 0, 0));
        *reinterpret_cast<Out*>(y + (k + u) * layout.out_step) = reduce::convert<Out>(acc);
      }
    }
    for (; k < layout.length; ++k) {
      acc = r.combine(acc, r.map(reduce::load<In>(x + k * layout.in_step), 0, 0));
      *reinterpret_cast<Out*>(y + k * layout.out_step) = reduce::convert<Out>(acc);
    }
  }
}

// ---- tiles -----------------------------------------------------------------------------

/// Note [Tiles in launch order]: the look-backs (scans, compactions) give each block the
/// tile of its own index. Blocks start in index order (CUB's decoupled look-back relies on
/// the same), so a block waits only for blocks that have started, and every wait ends.
/// Tickets (an atomicAdd on one word by every block, then a block barrier) gave that order
/// by construction, but on one address they queue: nonzero of 1e7 bool (2442 tiles) took
/// 2-7 us longer a launch with them on an H200 (Note [Nonzero by runs] in mask.cuh).
__device__ __forceinline__ index_t launch_order_tile() { return blockIdx.x; }

/// Where the tiles of one launch meet: 16 bytes unused (they held a ticket counter), a flag
/// per tile and per group (the host zeroes these), then the totals. Offsets in bytes from
/// `work`.
struct Work {
  index_t tiles, groups;
  __device__ Work(index_t tiles_, index_t groups_) : tiles(tiles_), groups(groups_) {}
  __device__ int* tile_flag(char* w) const { return reinterpret_cast<int*>(w + 16); }
  __device__ int* group_flag(char* w) const { return tile_flag(w) + tiles; }
  template <class Acc> __device__ Acc* tile_total(char* w) const {
    index_t flags = (16 + 4 * (tiles + groups) + 15) / 16 * 16;
    return reinterpret_cast<Acc*>(w + flags);
  }
  template <class Acc> __device__ Acc* group_total(char* w) const {
    return tile_total<Acc>(w) + tiles;
  }
};

/// Publishes value, then raises the flag.
template <class T> __device__ __forceinline__ void publish(T* slot, int* flag, T value) {
  *slot = value;
  __threadfence();
  atomicExch(flag, 1);
}

__device__ __forceinline__ bool raised(const int* flag) {
  return *reinterpret_cast<const volatile int*>(flag) != 0;
}

/// A published value, read from L2 (never a stale L1 line); after its flag was seen.
template <class T> __device__ __forceinline__ T read_published(const T* slot) {
  constexpr int W = sizeof(T) / 4;
  union {
    T t;
    unsigned w[W];
  } u;
#pragma unroll
  for (int k = 0; k < W; ++k) u.w[k] = __ldcg(reinterpret_cast<const unsigned*>(slot) + k);
  return u.t;
}

/// Lane 0 gets the combination, in a fixed tree, of the published values [0, n) (n may be
/// any size): lane l takes l, l + 32, ... in order, waiting for every flag at once first.
template <class R> __device__ typename R::Acc combine_published(
    const R& r, const typename R::Acc* slots, const int* flags, index_t n) {
  typedef typename R::Acc Acc;
  const int lane = threadIdx.x % 32;
  bool ready;
  do {
    ready = true;
    for (index_t k = lane; k < n; k += 32) ready = ready && raised(flags + k);
  } while (!__all_sync(0xffffffffu, ready));
  __threadfence();
  Acc a = r.identity();
  index_t k = lane;
  for (; k + 96 < n; k += 128) {
    Acc v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = read_published(slots + k + 32 * u);
#pragma unroll
    for (int u = 0; u < 4; ++u) a = r.combine(a, v[u]);
  }
  for (; k < n; k += 32) a = r.combine(a, read_published(slots + k));
  return reduce::warp_combine(r, a);
}

/// A tile of kBlock * ITEMS elements: each warp takes 32 * ITEMS consecutive ones in rows
/// of 32 * VEC, lane l holding elements l * VEC ... l * VEC + VEC - 1 of each row (read as
/// one 16-byte load when VEC > 1: the host checks that the line is contiguous and aligned;
/// VSTORE: the output too). A row is scanned within each lane in order, then across lanes.
template <class R, int KND, int ITEMS, int VEC, bool VSTORE>
__device__ void tiles(const Layout<KND>& layout) {
  typedef typename R::In In;
  typedef typename R::Out Out;
  typedef typename R::Acc Acc;
  constexpr int kWarps = kBlock / 32;
  constexpr int kRows = ITEMS / VEC;
  constexpr index_t kTile = index_t(kBlock) * ITEMS;
  R r;
  __shared__ __align__(16) unsigned char shared_bytes[sizeof(Acc) * (kWarps + 2)];
  Acc* shared = reinterpret_cast<Acc*>(shared_bytes);  // warp totals, group part, own part
  const index_t total_tiles = layout.lines * layout.tiles;
  const index_t groups_per_line = (layout.tiles + kGroup - 1) / kGroup;
  Work work(total_tiles, layout.lines * groups_per_line);
  const index_t tile = launch_order_tile();
  const index_t line = tile / layout.tiles, i = tile - line * layout.tiles;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const char* x = layout.in + reduce::box_offset<KND>(line, layout.kept_size, layout.in_stride);
  char* y = layout.out + reduce::box_offset<KND>(line, layout.kept_size, layout.out_stride);
  // Element k of row j of this lane: first + j * 32 * VEC + k.
  const index_t first = i * kTile + index_t(warp) * 32 * ITEMS + index_t(lane) * VEC;
  const index_t length = layout.length;

  Acc value[kRows][VEC];
  {
    In loaded[kRows][VEC];
#pragma unroll
    for (int j = 0; j < kRows; ++j) {
      index_t at = first + index_t(j) * 32 * VEC;
      if (VEC > 1 && at + VEC <= length) {  // one load
        reduce::Vec<In, VEC> chunk;
        chunk.load_from(x + at * layout.in_step);
#pragma unroll
        for (int k = 0; k < VEC; ++k) loaded[j][k] = chunk.v[k];
      } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k)
          if (at + k < length) loaded[j][k] = reduce::load<In>(x + (at + k) * layout.in_step);
      }
    }
#pragma unroll
    for (int j = 0; j < kRows; ++j)
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        index_t at = first + index_t(j) * 32 * VEC + k;
        value[j][k] = at < length ? r.map(loaded[j][k], 0, 0) : r.identity();
      }
  }
  Acc carry = r.identity();
#pragma unroll
  for (int j = 0; j < kRows; ++j) {
#pragma unroll
    for (int k = 1; k < VEC; ++k) value[j][k] = r.combine(value[j][k - 1], value[j][k]);
    Acc scanned = value[j][VEC - 1];  // this lane's total, then its inclusive scan
#pragma unroll
    for (int delta = 1; delta < 32; delta *= 2) {
      Acc before = shuffle_up(scanned, delta);
      if (lane >= delta) scanned = r.combine(before, scanned);
    }
    Acc row_total = shuffle_index(scanned, 31);
    if (VEC == 1) {
      value[j][0] = r.combine(carry, scanned);
    } else {
      Acc before = shuffle_up(scanned, 1);  // the lanes before this one
      Acc prefix = lane > 0 ? r.combine(carry, before) : carry;
#pragma unroll
      for (int k = 0; k < VEC; ++k) value[j][k] = r.combine(prefix, value[j][k]);
    }
    carry = r.combine(carry, row_total);
  }
  if (lane == 0) shared[warp] = carry;
  __syncthreads();

  // The tile's total: its warps' totals in order; publish it, and the group's if last.
  Acc* tile_totals = work.tile_total<Acc>(layout.work) + line * layout.tiles;
  int* tile_flags = work.tile_flag(layout.work) + line * layout.tiles;
  Acc* group_totals = work.group_total<Acc>(layout.work) + line * groups_per_line;
  int* group_flags = work.group_flag(layout.work) + line * groups_per_line;
  const index_t group = i / kGroup, group_first = group * kGroup;
  if (threadIdx.x == 0 && layout.tiles > 1) {
    Acc total = shared[0];
    for (int w = 1; w < kWarps; ++w) total = r.combine(total, shared[w]);
    publish(tile_totals + i, tile_flags + i, total);
  }
  if (warp == 0 && i % kGroup == kGroup - 1 && i + 1 < layout.tiles) {
    Acc a = combine_published(r, tile_totals + group_first, tile_flags + group_first, kGroup);
    if (lane == 0) publish(group_totals + group, group_flags + group, a);
  }

  // The carry-in: totals of the earlier groups (warp 0) and of this group's earlier tiles
  // (warp 1), each in a fixed tree.
  if (i > 0 && warp == 0) {
    Acc a = combine_published(r, group_totals, group_flags, group);
    if (lane == 0) shared[kWarps] = a;
  }
  if (i > 0 && warp == 1) {
    Acc a = combine_published(r, tile_totals + group_first, tile_flags + group_first,
                              i - group_first);
    if (lane == 0) shared[kWarps + 1] = a;
  }
  __syncthreads();
  Acc prefix = i > 0 ? r.combine(shared[kWarps], shared[kWarps + 1]) : r.identity();
  for (int w = 0; w < warp; ++w) prefix = r.combine(prefix, shared[w]);
#pragma unroll
  for (int j = 0; j < kRows; ++j) {
    index_t at = first + index_t(j) * 32 * VEC;
    if constexpr (VSTORE) {
      if (at + VEC <= length) {
        reduce::Vec<Out, VEC> chunk;
#pragma unroll
        for (int k = 0; k < VEC; ++k)
          chunk.v[k] = reduce::convert<Out>(r.combine(prefix, value[j][k]));
        *reinterpret_cast<typename reduce::Vec<Out, VEC>::Raw*>(y + at * layout.out_step) =
            chunk.raw;
        continue;
      }
    }
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      if (at + k < length)
        *reinterpret_cast<Out*>(y + (at + k) * layout.out_step) =
            reduce::convert<Out>(r.combine(prefix, value[j][k]));
  }
}

}  // namespace scan
}  // namespace xrt
