// cpp/kernels/xrt/sort.cuh: sort and argsort of contiguous rows (the sort axis last) on
// (key, index) pairs, and searchsorted. Keys are sort_keys.cuh's (the CPU's order); sorting
// (key, index) stably and gathering the input by index gives the CPU's results bit for bit
// (±0 and NaNs keep their own bits, in input order).
//
// - short rows: a block per row, a bitonic sort of (key, index) pairs in shared memory
//   (the index breaks ties, so the order is stable);
// - the first LSD radix sort, 4 bits per pass, over all rows at once: per tile digit
//   counts, an exclusive scan of them per row (digit-major, so offsets keep tile order), a
//   stable scatter (ranks within a warp from __match_any_sync, warps in order). Long rows
//   now go through radix_sort.cuh; this one serves rows of 2^30 elements and more, and
//   XPURUNTIME_CUDA_SORT=lsd4 (for comparisons).
#pragma once
#include "xrt/sort_keys.cuh"

namespace xrt {
namespace sort {

constexpr int kRadixBits = 4;
constexpr int kBuckets = 1 << kRadixBits;
constexpr int kBlock = 256;          // threads of the radix kernels
constexpr int kChunks = 4;           // chunks of kBlock elements per radix tile
constexpr int kTile = kBlock * kChunks;
constexpr int kScanBlock = 1024;

/// Writes the result at position i of a row: the index (argsort) or the input element.
template <class T, bool ARG>
__device__ __forceinline__ void emit(const T* in, void* out, index_t at, index_t row_start,
                                     uint32_t index) {
  if (ARG) static_cast<int64_t*>(out)[at] = int64_t(index);
  else static_cast<T*>(out)[at] = in[row_start + index];
}

// ---- short rows: bitonic sort in shared memory ------------------------------------------

/// A block per row of n <= p elements (p a power of two).
template <class T, bool ARG>
__device__ void bitonic_rows(const T* in, void* out, index_t rows, index_t n, int p,
                             bool descending) {
  typedef typename Key<T>::K K;
  extern __shared__ unsigned long long shared_words[];
  K* keys = reinterpret_cast<K*>(shared_words);
  uint32_t* index = reinterpret_cast<uint32_t*>(keys + p);
  for (index_t row = blockIdx.x; row < rows; row += gridDim.x) {
    index_t start = row * n;
    for (int i = threadIdx.x; i < p; i += blockDim.x) {
      bool real = i < n;
      keys[i] = real ? key_of<T>(in[start + i], descending) : K(~K(0));
      index[i] = real ? uint32_t(i) : 0xffffffffu;  // padding sorts after every element
    }
    __syncthreads();
    for (int k = 2; k <= p; k <<= 1) {
      for (int j = k >> 1; j > 0; j >>= 1) {
        for (int i = threadIdx.x; i < p; i += blockDim.x) {
          int l = i ^ j;
          if (l > i) {
            K a = keys[i], b = keys[l];
            uint32_t ia = index[i], ib = index[l];
            bool greater = a > b || (a == b && ia > ib);
            if (greater == ((i & k) == 0)) {
              keys[i] = b;
              keys[l] = a;
              index[i] = ib;
              index[l] = ia;
            }
          }
        }
        __syncthreads();
      }
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x) emit<T, ARG>(in, out, start + i, start, index[i]);
    __syncthreads();
  }
}

// ---- long rows: LSD radix sort ----------------------------------------------------------

/// keys[r * n + i] = key(in[r * n + i]), index[...] = i.
template <class T>
__device__ void encode(const T* in, typename Key<T>::K* keys, uint32_t* index, index_t rows,
                       index_t n, bool descending) {
  index_t total = rows * n;
  for (index_t i = blockIdx.x * index_t(blockDim.x) + threadIdx.x; i < total;
       i += index_t(gridDim.x) * blockDim.x) {
    keys[i] = key_of<T>(in[i], descending);
    index[i] = uint32_t(i % n);
  }
}

/// Digit counts of one tile: counts[(row * kBuckets + digit) * tiles + tile]. A block per
/// (row, tile), blockIdx.x = row * tiles + tile.
template <class K>
__device__ void histogram(const K* keys, uint32_t* counts, index_t n, index_t tiles, int shift) {
  __shared__ uint32_t local[kBuckets];
  if (threadIdx.x < kBuckets) local[threadIdx.x] = 0;
  __syncthreads();
  index_t row = blockIdx.x / tiles, tile = blockIdx.x % tiles;
  index_t begin = tile * kTile, end = begin + kTile < n ? begin + kTile : n;
  const K* k = keys + row * n;
  for (index_t i = begin + threadIdx.x; i < end; i += kBlock)
    atomicAdd(&local[int(k[i] >> shift) & (kBuckets - 1)], 1u);
  __syncthreads();
  if (threadIdx.x < kBuckets)
    counts[(row * kBuckets + threadIdx.x) * tiles + tile] = local[threadIdx.x];
}

/// Exclusive scan of each row's kBuckets * tiles counts, in place; a block per row. Each
/// thread takes kScanItems adjacent counts (two 16-byte loads: a row's counts start at a
/// multiple of kBuckets), so a round covers kScanBlock * kScanItems of them.
__device__ void scan_counts(uint32_t* counts, index_t tiles) {
  constexpr int kScanItems = 8;
  __shared__ uint32_t warp_sums[kScanBlock / 32];
  __shared__ uint32_t carry;
  index_t m = tiles * kBuckets;
  uint32_t* c = counts + blockIdx.x * m;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (index_t base = 0; base < m; base += index_t(kScanBlock) * kScanItems) {
    index_t first = base + index_t(threadIdx.x) * kScanItems;
    uint32_t v[kScanItems];
    uint4* chunk = reinterpret_cast<uint4*>(c + first);
    if (first < m) {  // m is a multiple of kScanItems: the whole chunk is there
      uint4 a = chunk[0], b = chunk[1];
      v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z,
      v[7] = b.w;
    } else {
#pragma unroll
      for (int k = 0; k < kScanItems; ++k) v[k] = 0u;
    }
    uint32_t sum = 0;
#pragma unroll
    for (int k = 0; k < kScanItems; ++k) sum += v[k];
    uint32_t x = sum;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      uint32_t y = __shfl_up_sync(0xffffffffu, x, d);
      if (lane >= d) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
      uint32_t s = warp_sums[lane], t = s;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        uint32_t y = __shfl_up_sync(0xffffffffu, t, d);
        if (lane >= d) t += y;
      }
      warp_sums[lane] = t - s;  // exclusive prefix of the warps
    }
    __syncthreads();
    uint32_t before = carry + warp_sums[warp] + x - sum;  // this thread's first count's
    if (first < m) {
      uint32_t w[kScanItems];
#pragma unroll
      for (int k = 0; k < kScanItems; ++k) {
        w[k] = before;
        before += v[k];
      }
      chunk[0] = make_uint4(w[0], w[1], w[2], w[3]);
      chunk[1] = make_uint4(w[4], w[5], w[6], w[7]);
    }
    __syncthreads();
    if (threadIdx.x == kScanBlock - 1) carry = before;
    __syncthreads();
  }
}

/// Moves the (key, index) pairs of one tile to their places for this digit, in order (keys
/// alone when index is null).
template <class K>
__device__ void scatter(const K* keys, const uint32_t* index, K* keys_out, uint32_t* index_out,
                        const uint32_t* counts, index_t n, index_t tiles, int shift) {
  constexpr int kWarps = kBlock / 32;
  __shared__ uint32_t base[kBuckets];
  __shared__ uint32_t warp_counts[kWarps][kBuckets];
  __shared__ uint32_t warp_offsets[kWarps][kBuckets];
  index_t row = blockIdx.x / tiles, tile = blockIdx.x % tiles;
  const K* k = keys + row * n;
  const uint32_t* x = index ? index + row * n : nullptr;
  K* ko = keys_out + row * n;
  uint32_t* xo = index ? index_out + row * n : nullptr;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x < kBuckets)
    base[threadIdx.x] = counts[(row * kBuckets + threadIdx.x) * tiles + tile];
  unsigned lanes_below = (1u << lane) - 1u;
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    if (threadIdx.x < kWarps * kBuckets) (&warp_counts[0][0])[threadIdx.x] = 0;
    __syncthreads();
    index_t i = tile * kTile + chunk * kBlock + threadIdx.x;
    bool valid = i < n;
    K key = valid ? k[i] : K(0);
    uint32_t ix = valid && x ? x[i] : 0u;
    int digit = valid ? int(key >> shift) & (kBuckets - 1) : kBuckets;
    unsigned peers = __match_any_sync(0xffffffffu, digit);
    unsigned rank = __popc(peers & lanes_below);
    if (valid && rank == 0) warp_counts[warp][digit] = __popc(peers);
    __syncthreads();
    if (threadIdx.x < kBuckets) {
      uint32_t running = base[threadIdx.x];
      for (int w = 0; w < kWarps; ++w) {
        warp_offsets[w][threadIdx.x] = running;
        running += warp_counts[w][threadIdx.x];
      }
      base[threadIdx.x] = running;
    }
    __syncthreads();
    if (valid) {
      uint32_t at = warp_offsets[warp][digit] + rank;
      ko[at] = key;
      if (xo) xo[at] = ix;
    }
  }
}

/// out[r * n + i] from the sorted indices of row r.
template <class T, bool ARG>
__device__ void gather(const T* in, void* out, const uint32_t* index, index_t rows, index_t n) {
  index_t total = rows * n;
  for (index_t i = blockIdx.x * index_t(blockDim.x) + threadIdx.x; i < total;
       i += index_t(gridDim.x) * blockDim.x)
    emit<T, ARG>(in, out, i, i - i % n, index[i]);
}

// ---- searchsorted -----------------------------------------------------------------------

/// out[i] = the insertion point of needles[i] (byte stride needle_step; out contiguous)
/// into sorted a of n elements (byte stride a_step), through sorter when given; left: the
/// first key >= the needle's, right: the first key >. A sorter index out of range sets
/// *error (the host reports it).
template <class T>
__device__ void search(const char* a, index_t a_step, index_t n, const char* sorter,
                       index_t sorter_step, const char* needles, index_t needle_step,
                       index_t m, int64_t* out, bool right, unsigned long long* error) {
  typedef typename Key<T>::K K;
  for (index_t i = blockIdx.x * index_t(blockDim.x) + threadIdx.x; i < m;
       i += index_t(gridDim.x) * blockDim.x) {
    K k = key_of<T>(*at<T>(needles, i * needle_step), false);
    index_t first = 0, count = n;
    bool bad = false;
    while (count > 0) {
      index_t half = count / 2, j = first + half;
      if (sorter) {
        j = *at<int64_t>(sorter, j * sorter_step);
        if (j < 0 || j >= n) {
          atomicExch(error, 1ull);
          bad = true;
          break;
        }
      }
      K middle = key_of<T>(*at<T>(a, j * a_step), false);
      if (right ? !(k < middle) : middle < k) {
        first += half + 1;
        count -= half + 1;
      } else {
        count = half;
      }
    }
    out[i] = bad ? 0 : first;
  }
}

}  // namespace sort
}  // namespace xrt
