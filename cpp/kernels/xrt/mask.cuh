// cpp/kernels/xrt/mask.cuh: stream compaction, for boolean masks (x[mask], x[mask] = v),
// nonzero and its count, and the groups of unique (set.cuh).
//
// One pass over the positions: a block per tile of kBlock * ITEMS positions; warp w takes
// 32 * ITEMS consecutive ones in rows of 32 (lane l: position row * 32 + l), so that loads
// and the compacted stores of a row are coalesced. A row's selected lanes come from a
// ballot and their ranks from popcounts; the tile's carry-in (the positions selected before
// it) comes from the counts the earlier tiles and groups of tiles publish (Note [Counts in
// their flags]): a tile is its block's index and waits only for lower ones, so every wait
// ends (Note [Tiles in launch order] in scan.cuh).
#pragma once
#include "xrt/block_scan.cuh"
#include "xrt/scan.cuh"

namespace xrt {
namespace mask {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

/// Counts, for reduce.cuh's warp and block combines.
struct CountSum {
  typedef index_t Acc;
  __device__ Acc identity() const { return 0; }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
};

/// Whether a value is nonzero (NaN is; -0.0 is not), as the CPU's is_nonzero.
template <class T> __device__ __forceinline__ bool is_nonzero(T v) { return v != T(0); }
template <> __device__ __forceinline__ bool is_nonzero(float16 v) { return float(v) != 0.0f; }
template <> __device__ __forceinline__ bool is_nonzero(bfloat16 v) { return float(v) != 0.0f; }
template <> __device__ __forceinline__ bool is_nonzero(complex64 v) {
  return v.re != 0.0f || v.im != 0.0f;
}
template <> __device__ __forceinline__ bool is_nonzero(complex128 v) {
  return v.re != 0.0 || v.im != 0.0;
}


/// Position of row 0 of this lane in a tile: rows are 32 apart.
template <int ITEMS> __device__ __forceinline__ index_t first_position(index_t tile) {
  return tile * index_t(kBlock * ITEMS) + index_t(threadIdx.x / 32) * (32 * ITEMS) +
         threadIdx.x % 32;
}

__device__ __forceinline__ unsigned lanes_below() { return (1u << (threadIdx.x % 32)) - 1u; }

/// Note [Counts in their flags]: a tile's count (at most kBlock * ITEMS) and a group's (at
/// most scan::kGroup times that) fit an int, so each is published in its flag word as
/// count + 1, the word being 0 until then (the host zeroes them). One read then gives
/// both the flag and the value: the carry-in costs one round trip to L2 where a flag and
/// a separate total cost two and a fence (nonzero of 1e7 bool spent 39% of its stalls at
/// the barrier behind that look-back).
__device__ __forceinline__ void publish_count(int* word, index_t count) {
  atomicExch(word, int(count) + 1);
}

/// Lane 0 gets the sum of the counts published in words [0, n), waiting for each.
__device__ index_t sum_published_counts(const int* words, index_t n) {
  index_t sum = 0;
  for (index_t k = threadIdx.x % 32; k < n; k += 32) {
    int v;
    do {
      v = *reinterpret_cast<const volatile int*>(words + k);
    } while (v == 0);
    sum += v - 1;
  }
  return reduce::warp_combine(CountSum(), sum);
}

/// The positions selected by the tiles before this one (its carry-in), for every thread,
/// this tile having selected `total` (every thread passes the same). The last tile writes
/// the grand total to *count when count is given. Ends with a block barrier. Note [Counts
/// in their flags].
__device__ index_t tile_carry(index_t total, char* work, index_t tile, index_t tiles,
                              int64_t* count) {
  __shared__ index_t carry[2];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const index_t groups = (tiles + scan::kGroup - 1) / scan::kGroup;
  scan::Work w(tiles, groups);
  int* tile_counts = w.tile_flag(work);
  int* group_counts = w.group_flag(work);
  const index_t group = tile / scan::kGroup, group_first = group * scan::kGroup;
  if (threadIdx.x == 0 && tiles > 1) publish_count(tile_counts + tile, total);
  if (warp == 0 && tile % scan::kGroup == scan::kGroup - 1 && tile + 1 < tiles) {
    index_t a = sum_published_counts(tile_counts + group_first, index_t(scan::kGroup));
    if (lane == 0) publish_count(group_counts + group, a);
  }
  if (tile > 0 && warp == 0) {
    index_t a = sum_published_counts(group_counts, group);
    if (lane == 0) carry[0] = a;
  }
  if (tile > 0 && warp == 1) {
    index_t a = sum_published_counts(tile_counts + group_first, tile - group_first);
    if (lane == 0) carry[1] = a;
  }
  __syncthreads();
  index_t start = tile > 0 ? carry[0] + carry[1] : 0;
  if (count && tile == tiles - 1 && threadIdx.x == 0) *count = start + total;
  return start;
}

/// Where this warp's first selected position goes: the positions selected by earlier tiles
/// (the carry-in) and by this tile's earlier warps. ballot[j]: row j's selected lanes. The
/// last tile writes the grand total to *count when count is given. Every thread calls it.
template <int ITEMS>
__device__ index_t warp_start(const unsigned (&ballot)[ITEMS], char* work, index_t tile,
                              index_t tiles, int64_t* count) {
  __shared__ index_t warp_total[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  index_t mine = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) mine += __popc(ballot[j]);
  if (lane == 0) warp_total[warp] = mine;
  __syncthreads();
  index_t total = 0;
#pragma unroll
  for (int k = 0; k < kWarps; ++k) total += warp_total[k];
  index_t start = tile_carry(total, work, tile, tiles, count);
  for (int k = 0; k < warp; ++k) start += warp_total[k];
  return start;
}

/// Element i of a strided operand (its layout's row-major position i).
template <class T, int ND> struct Strided {
  const char* base;
  StridedLayout<ND, 1> layout;
  __device__ __forceinline__ T operator()(index_t i) const {
    index_t offset[1];
    layout.offsets(uint64_t(i), offset);
    return *at<T>(base, offset[0]);
  }
};

/// The byte offset of position i in a strided layout.
template <int ND> struct Offset {
  StridedLayout<ND, 1> layout;
  __device__ __forceinline__ int64_t operator()(index_t i) const {
    index_t offset[1];
    layout.offsets(uint64_t(i), offset);
    return offset[0];
  }
};

/// out[k] = source(i) for the k-th position i with mask[i] != 0 (n positions, contiguous
/// bytes): x[mask] (the masked elements) or the byte offsets of the selected positions.
template <class T, int ITEMS, class Source>
__device__ void compress(T* __restrict__ out, Source source, const uint8_t* __restrict__ mask,
                         index_t n, char* work, index_t tiles) {
  const index_t tile = scan::launch_order_tile();
  const index_t first = first_position<ITEMS>(tile);
  bool selected[ITEMS];
  unsigned ballot[ITEMS];
  T value[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    index_t i = first + j * 32;
    selected[j] = i < n && mask[i] != 0;
  }
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    ballot[j] = __ballot_sync(0xffffffffu, selected[j]);
    if (selected[j]) value[j] = source(first + j * 32);
  }
  index_t place = warp_start<ITEMS>(ballot, work, tile, tiles, nullptr);
  const unsigned below = lanes_below();
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    if (selected[j]) out[place + __popc(ballot[j] & below)] = value[j];
    place += __popc(ballot[j]);
  }
}

/// v[i] = values[k] for the k-th position i with mask[i] != 0 (v's positions through its
/// layout; values contiguous).
template <class T, int ITEMS, int ND>
__device__ void expand(char* __restrict__ v, StridedLayout<ND, 1> layout,
                       const T* __restrict__ values, const uint8_t* __restrict__ mask, index_t n,
                       char* work, index_t tiles) {
  const index_t tile = scan::launch_order_tile();
  const index_t first = first_position<ITEMS>(tile);
  bool selected[ITEMS];
  unsigned ballot[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    index_t i = first + j * 32;
    selected[j] = i < n && mask[i] != 0;
    ballot[j] = __ballot_sync(0xffffffffu, selected[j]);
  }
  index_t place = warp_start<ITEMS>(ballot, work, tile, tiles, nullptr);
  const unsigned below = lanes_below();
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    if (selected[j]) {
      index_t offset[1];
      layout.offsets(uint64_t(first + j * 32), offset);
      *at<T>(v, offset[0]) = values[place + __popc(ballot[j] & below)];
    }
    place += __popc(ballot[j]);
  }
}

/// The outputs of nonzero: one int64 array per dimension of x's shape.
template <int ND> struct Coordinates {
  int64_t* out[ND];
  index_t size[ND];
};

/// c's k-th coordinates: those of position p of the flat (row-major) index.
template <int ND>
__device__ __forceinline__ void store_coordinates(const Coordinates<ND>& c, index_t k,
                                                  index_t p) {
#pragma unroll
  for (int d = ND - 1; d > 0; --d) {
    index_t q = p / c.size[d];
    c.out[d][k] = p - q * c.size[d];
    p = q;
  }
  c.out[0][k] = p;
}

/// Coordinates of the nonzero elements of a contiguous x of n elements, in order.
template <class T, int ITEMS, int ND>
__device__ void nonzero(const T* __restrict__ x, index_t n, Coordinates<ND> c, char* work,
                        index_t tiles) {
  const index_t tile = scan::launch_order_tile();
  const index_t first = first_position<ITEMS>(tile);
  bool selected[ITEMS];
  unsigned ballot[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    index_t i = first + j * 32;
    selected[j] = i < n && is_nonzero(x[i]);
    ballot[j] = __ballot_sync(0xffffffffu, selected[j]);
  }
  index_t place = warp_start<ITEMS>(ballot, work, tile, tiles, nullptr);
  const unsigned below = lanes_below();
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    if (selected[j]) store_coordinates(c, place + __popc(ballot[j] & below), first + j * 32);
    place += __popc(ballot[j]);
  }
}

/// Note [Nonzero by runs]: where x is 16-byte aligned, nonzero reads it in runs of kRun
/// consecutive elements (one 16-byte load for bytes), RUNS runs a thread with every load
/// issued before any is used, so that a warp's loads are contiguous 16-byte pieces instead
/// of rows of 32 bytes. The ranks come from a block scan of the threads' counts; the
/// selected positions of the tile go through shared memory (as 16-bit offsets in the tile)
/// and leave in order, a warp storing 32 consecutive int64 at a time.
/// A tile is its block's index (Note [Tiles in launch order] in scan.cuh).
/// The kernel alone, 1e7 bool on an H200, density 0.5 / 0.05 / 0.95 (min of 30 launches,
/// CUDA events): ballot rows of 24 38.4 / 31.8 / 46.7 us; one run a thread by ticket
/// 34.1 / 23.6 / 46.4; two runs by index 28.0 / 17.5 / 37.3; four runs by index 29.6 /
/// 16.1 / 39.1 (CUB's select, in torch: 27.7-28.2 at 0.5 under Nsight Compute).
constexpr int kRun = 16;

/// Runs a thread by element size: 32 bytes of 1-byte elements, kRun elements of others
/// (the host's run_positions in cuda/mask_kernels.cpp sizes the tiles from the same rule).
template <class T> struct RunsOf {
  static constexpr int value = sizeof(T) == 1 ? 2 : 1;
};

/// bits[r], bit j: whether element first + r * kRun + j of x (n elements) is nonzero.
template <class T, int RUNS>
__device__ __forceinline__ void nonzero_bits(const T* __restrict__ x, index_t first, index_t n,
                                             unsigned (&bits)[RUNS]) {
#pragma unroll
  for (int r = 0; r < RUNS; ++r) bits[r] = 0;
  if (first + RUNS * kRun <= n) {
    constexpr int kPieces = RUNS * kRun * int(sizeof(T)) / 16;
    uint4 piece[kPieces];
    const uint4* p = reinterpret_cast<const uint4*>(x + first);
#pragma unroll
    for (int k = 0; k < kPieces; ++k) piece[k] = __ldg(p + k);
    const T* value = reinterpret_cast<const T*>(piece);
#pragma unroll
    for (int r = 0; r < RUNS; ++r)
#pragma unroll
      for (int j = 0; j < kRun; ++j) bits[r] |= unsigned(is_nonzero(value[r * kRun + j])) << j;
  } else {
    for (int r = 0; r < RUNS; ++r)
      for (int j = 0; j < kRun && first + r * kRun + j < n; ++j)
        bits[r] |= unsigned(is_nonzero(x[first + r * kRun + j])) << j;
  }
}

/// nonzero's coordinates by runs (Note [Nonzero by runs]); x contiguous, 16-byte aligned,
/// one block a tile of kBlock * RUNS * kRun positions.
template <class T, int ND>
__device__ void nonzero_runs(const T* __restrict__ x, index_t n, Coordinates<ND> c, char* work,
                             index_t tiles) {
  constexpr int RUNS = RunsOf<T>::value, kTile = kBlock * RUNS * kRun;
  static_assert(kTile <= 65536, "offsets in a tile are 16-bit");
  __shared__ uint16_t picked[kTile];
  const index_t tile = scan::launch_order_tile();
  const index_t base = tile * index_t(kTile);
  unsigned bits[RUNS];
  nonzero_bits<T, RUNS>(x, base + index_t(threadIdx.x) * (RUNS * kRun), n, bits);
  uint32_t mine = 0, total;
#pragma unroll
  for (int r = 0; r < RUNS; ++r) mine += __popc(bits[r]);
  uint32_t slot = block_exclusive_sum<kBlock>(mine, total);
#pragma unroll
  for (int r = 0; r < RUNS; ++r)
    for (unsigned b = bits[r]; b; b &= b - 1)
      picked[slot++] = uint16_t((threadIdx.x * RUNS + r) * kRun + __ffs(b) - 1);
  const index_t start = tile_carry(total, work, tile, tiles, nullptr);  // a barrier
  for (uint32_t k = threadIdx.x; k < total; k += kBlock)
    store_coordinates(c, start + k, base + picked[k]);
}

/// *total += the block's counts: one atomic per block (one per warp queued thousands of
/// adds on one address).
__device__ __forceinline__ void add_block_count(unsigned long long mine,
                                                unsigned long long* total) {
  index_t sum = reduce::block_combine(CountSum(), index_t(mine));
  if (threadIdx.x == 0 && sum) atomicAdd(total, (unsigned long long)sum);
}

/// *total += the nonzero elements of x (n positions through its layout); *total starts
/// at 0. bool elements are read as bytes (any nonzero byte is True, as on the CPU).
template <class T, int ND>
__device__ void count(const char* __restrict__ x, StridedLayout<ND, 1> layout, index_t n,
                      unsigned long long* total) {
  unsigned long long mine = 0;
  for (index_t i = blockIdx.x * index_t(kBlock) + threadIdx.x; i < n;
       i += index_t(gridDim.x) * kBlock) {
    index_t offset[1];
    layout.offsets(uint64_t(i), offset);
    mine += is_nonzero(*at<T>(x, offset[0]));
  }
  add_block_count(mine, total);
}

/// The nonzero bytes among the 16 of w.
__device__ __forceinline__ unsigned nonzero_bytes(uint4 w) {
  unsigned parts[4] = {w.x, w.y, w.z, w.w}, n = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    unsigned b = parts[k] | (parts[k] >> 4);  // each byte folds to its lowest bit
    b |= b >> 2;
    b |= b >> 1;
    n += __popc(b & 0x01010101u);
  }
  return n;
}

/// The same for n contiguous bytes at x, x 16-byte aligned: 16 bytes per load, kLoads
/// loads issued before any is used.
__device__ void count_bytes(const uint8_t* __restrict__ x, index_t n,
                            unsigned long long* total) {
  constexpr int kLoads = 4;
  unsigned long long mine = 0;
  const index_t chunks = n / 16;
  const index_t id = blockIdx.x * index_t(kBlock) + threadIdx.x;
  const index_t stride = index_t(gridDim.x) * kBlock;
  const uint4* words = reinterpret_cast<const uint4*>(x);
  index_t i = id;
  for (; i + (kLoads - 1) * stride < chunks; i += kLoads * stride) {
    uint4 w[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) w[k] = words[i + k * stride];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) mine += nonzero_bytes(w[k]);
  }
  for (; i < chunks; i += stride) mine += nonzero_bytes(words[i]);
  if (id < n - chunks * 16) mine += x[chunks * 16 + id] != 0;
  add_block_count(mine, total);
}

/// v[i] = *value wherever mask[i] != 0: operands v and mask (broadcast to v's shape), one
/// value for every selected element (x[mask] = scalar), no count needed. Four positions
/// per thread, their mask bytes read before any store.
template <class T, int ND>
__device__ void fill(char* __restrict__ v, const char* __restrict__ mask,
                     StridedLayout<ND, 2> layout, const T* __restrict__ value, index_t n) {
  constexpr int kWays = 4;
  const T x = *value;
  const index_t stride = index_t(gridDim.x) * kBlock;
  for (index_t first = blockIdx.x * index_t(kBlock) + threadIdx.x; first < n;
       first += kWays * stride) {
    index_t offset[kWays][2];
    bool selected[kWays];
#pragma unroll
    for (int w = 0; w < kWays; ++w) {
      index_t i = first + w * stride;
      selected[w] = false;
      if (i < n) {
        layout.offsets(uint64_t(i), offset[w]);
        selected[w] = *at<uint8_t>(mask, offset[w][1]) != 0;
      }
    }
#pragma unroll
    for (int w = 0; w < kWays; ++w)
      if (selected[w]) *at<T>(v, offset[w][0]) = x;
  }
}

}  // namespace mask
}  // namespace xrt
