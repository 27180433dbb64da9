// cpp/kernels/xrt/radix_sort.cuh: the LSD radix sort of long rows (the sort axis last,
// contiguous), 8-bit digits, one "onesweep" launch per digit (Note [Onesweep]).
//
// Launches, in stream order, for R rows of n elements and keys of P bytes:
// - upsweep: the digit counts of all P passes at once (hist[row][pass][digit]), and for a
//   value sort of floats the counts the fix-up of zeros and NaNs needs;
// - plan: a block per row turns its counts into the start of each digit's bin, and marks
//   the passes in which one digit holds the whole row (they move nothing: skipped);
// - pass (P launches): each tile ranks its keys by the digit, learns where its keys of
//   each digit go from the tiles before it (decoupled look-back) and scatters them;
// - fixup (float sorts only): rewrites the zeros and NaNs of the output from the input,
//   in input order, in rows that hold -0.0 or a NaN.
// The same kernels sort keys that are already encoded (radix_sort_pairs of
// cuda/radix_sort.h: T is the unsigned key type, whose key is itself), with a payload
// carried from an input array (Payload::kCarried) or none, over PASSES <= sizeof(T)
// low bytes of the keys.
#pragma once
#include "xrt/block_scan.cuh"
#include "xrt/sort_keys.cuh"

namespace xrt {
namespace radix {

using sort::Key;
using sort::key_of;
using sort::value_of_key;

constexpr int kDigitBits = 8;
constexpr int kDigits = 1 << kDigitBits;
constexpr int kUnroll = 8;  // items per thread in flight in upsweep

/// What travels with the keys: nothing (a value sort), each key's position in its row
/// (argsort: the result is int64 indices), or a uint32 read beside each input key and
/// written beside each output key (the pairs of radix_sort_pairs).
enum Payload { kNone = 0, kPosition = 1, kCarried = 2 };

/// The passes of T's keys: one per byte.
template <class T> struct KeyPasses {
  static constexpr int value = int(sizeof(typename Key<T>::S));
};

// Note [Onesweep]: a pass over a tile of THREADS * IPT keys goes
// 1. load: warp w takes the contiguous stretch [w * 32 * IPT, (w + 1) * 32 * IPT) of the
//    tile, item k of lane l at k * 32 + l (coalesced); the first pass that moves keys reads
//    the input and makes keys (and, for argsort, indices) on the fly;
// 2. rank: for each item, the lanes holding the same digit find each other (a shared word
//    per warp and digit), one of them adds their number to the warp's counter of that
//    digit; a key's rank within its warp is the counter before plus its peers on lower
//    lanes: stable;
// 3. look-back: thread d turns the warps' counts of digit d into offsets, publishes the
//    tile's count of d (flag AGGREGATE), then sums the counts of the tiles before it
//    until one carries an inclusive prefix (flag PREFIX), and publishes its own prefix.
//    Tile 0 of a row starts the chain at the digit's bin start. A block's tile is its
//    index: blocks start in index order, so every tile waited on has started and will
//    finish (Note [Tiles in launch order] in scan.cuh; tickets from a counter cost 3-4% of
//    a 2^24-key sort on an H200);
// 4. scatter: keys go to shared memory in tile order by (digit, warp, rank), then thread t
//    writes slots t, t + THREADS, ...: runs of one digit land on consecutive addresses.
//    Indices follow the same way. The last pass writes the result (values decoded from
//    keys, or int64 indices) instead of keys.
// Passes whose digit is the same for every key of a row are skipped for that row: the
// rows' own count of passes done says which buffer holds their keys. Descriptors are
// (flag << 30 | count), so rows are shorter than 2^30 (the host checks).
//
// Note [Onesweep counting]: how lanes count digits in shared memory was measured on an
// H200 (2^24 random int32 keys, 4 passes, the kernels alone timed by CUDA events):
// - upsweep: each lane's own atomicAdd per digit took 41 us; a vote first, letting lane 0
//   add for a warp whose keys share a digit, 77 us; __match_any_sync leaders 540 us.
//   Keys of few distinct high bytes (0..999) gave the same order (23 against 55 us).
// - pass ranking: lanes finding their peers by atomicOr of their bit into a shared word
//   (read back after __syncwarp) and the leader's atomicAdd took 114 us a pass; eight
//   ballots per key 141 us; __match_any_sync 196 us. Capping registers at 48 (5 blocks
//   of 256 threads per multiprocessor) gave 108 us; CUB's onesweep, 93 us.
// Counting a tile's digits before ranking it, to publish the look-back's counts earlier,
// gained nothing measurable (135 against 141 us with ballots, 119 against 114 with words).
constexpr uint32_t kFlagAggregate = 1u << 30;
constexpr uint32_t kFlagPrefix = 2u << 30;
constexpr uint32_t kValueMask = (1u << 30) - 1;

__device__ __forceinline__ uint32_t load_relaxed(const uint32_t* p) {
  return *static_cast<const volatile uint32_t*>(p);
}
__device__ __forceinline__ void store_relaxed(uint32_t* p, uint32_t v) {
  *static_cast<volatile uint32_t*>(p) = v;
}

// ---- upsweep --------------------------------------------------------------------------

/// Block b counts the digits of every pass in chunk b % chunks of row b / chunks (of chunk
/// elements, a multiple of THREADS * kUnroll) into hist[row][pass][digit] (zeroed before).
/// SPECIALS (float sorts): row_specials[row] = {keys below zero's, zeros, NaNs, whether
/// -0.0 or a NaN occurs} (zeroed before), chunk_specials[row][chunk] = {zeros, NaNs}.
template <class T, int THREADS, bool SPECIALS, int PASSES = KeyPasses<T>::value>
__device__ void upsweep(const T* in, uint32_t* hist, uint32_t* row_specials,
                        uint32_t* chunk_specials, index_t n, index_t chunk, index_t chunks,
                        bool descending) {
  typedef Key<T> KT;
  typedef typename KT::S S;
  constexpr int P = PASSES;
  __shared__ uint32_t counts[P * kDigits];
  __shared__ uint32_t special_counts[4];
  for (int i = threadIdx.x; i < P * kDigits; i += THREADS) counts[i] = 0;
  if (threadIdx.x < 4) special_counts[threadIdx.x] = 0;
  __syncthreads();
  const index_t row = blockIdx.x / chunks, c = blockIdx.x % chunks;
  const index_t begin = c * chunk, end = begin + chunk < n ? begin + chunk : n;
  const T* x = in + row * n;
  uint32_t specials[4] = {0, 0, 0, 0};  // below zero, zeros, NaNs, -0.0
  for (index_t base = begin; base < end; base += index_t(THREADS) * kUnroll) {
    S keys[kUnroll];
    bool valid[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      index_t i = base + u * THREADS + threadIdx.x;
      valid[u] = i < end;
      T v = T();
      if (valid[u]) v = x[i];
      keys[u] = S(key_of<T>(v, descending));
      if constexpr (SPECIALS) {
        typename KT::U bits = KT::bits_of(v);
        bool nan = KT::is_nan(bits), zero = KT::is_zero(bits);
        if (valid[u]) {
          specials[0] += !nan && !zero && (bits >> KT::kTop) != 0;
          specials[1] += zero;
          specials[2] += nan;
          specials[3] += bits == KT::kSign;
        }
      }
    }
    // Every lane adds its own 1 (Note [Onesweep counting]).
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (!valid[u]) continue;
#pragma unroll
      for (int p = 0; p < P; ++p)
        atomicAdd(&counts[p * kDigits + (uint32_t(keys[u] >> (kDigitBits * p)) & (kDigits - 1))],
                  1u);
    }
  }
  if constexpr (SPECIALS) {
    for (int k = 0; k < 4; ++k)
      if (specials[k]) atomicAdd(&special_counts[k], specials[k]);
  }
  __syncthreads();
  uint32_t* h = hist + row * P * kDigits;
  for (int i = threadIdx.x; i < P * kDigits; i += THREADS)
    if (counts[i]) atomicAdd(&h[i], counts[i]);
  if (SPECIALS && threadIdx.x == 0) {
    uint32_t* rs = row_specials + row * 4;
    for (int k = 0; k < 3; ++k)
      if (special_counts[k]) atomicAdd(&rs[k], special_counts[k]);
    if (special_counts[2] || special_counts[3]) atomicOr(&rs[3], 1u);
    chunk_specials[(row * chunks + c) * 2] = special_counts[1];
    chunk_specials[(row * chunks + c) * 2 + 1] = special_counts[2];
  }
}

// ---- plan -----------------------------------------------------------------------------

/// A block of kDigits threads per row: hist[row][pass][d] becomes the start of digit d's
/// bin in the row; masks[row] bit p is set when pass p moves nothing.
template <int P> __device__ void plan(uint32_t* hist, uint32_t* masks, index_t n) {
  const index_t row = blockIdx.x;
  uint32_t mask = 0;
  for (int p = 0; p < P; ++p) {
    uint32_t* h = hist + (row * P + p) * kDigits;
    uint32_t c = h[threadIdx.x];
    bool trivial = __syncthreads_or(c == uint32_t(n)) != 0;
    uint32_t total;
    h[threadIdx.x] = block_exclusive_sum<kDigits>(c, total);
    mask |= uint32_t(trivial) << p;
  }
  if (threadIdx.x == 0) masks[row] = mask;
}

// ---- pass -----------------------------------------------------------------------------

/// One pass of digit `pass` over all rows, a tile per block, the block's index (Note
/// [Onesweep]). keys[2] and index[2] are the ping-pong buffers; desc (zeroed) holds
/// rows * tiles * kDigits descriptors of this pass. The first pass that
/// moves a row reads in (and in_index, kCarried), the last writes out (values, or int64
/// positions for kPosition; and out_index, kCarried). KEYS_OUT: the last pass writes the
/// keys (S) to out and any payload, as uint32, to out_index (unique's sorted keys).
template <class T, int PAYLOAD, int THREADS, int IPT, int PASSES = KeyPasses<T>::value,
          bool KEYS_OUT = false>
__device__ void pass(const T* in, void* out, const uint32_t* in_index, uint32_t* out_index,
                     typename Key<T>::S* keys0, typename Key<T>::S* keys1, uint32_t* index0,
                     uint32_t* index1, const uint32_t* bins, const uint32_t* masks,
                     uint32_t* desc, index_t n, index_t tiles, int pass,
                     bool descending) {
  typedef typename Key<T>::K K;
  typedef typename Key<T>::S S;
  constexpr int P = PASSES;
  constexpr bool ARG = PAYLOAD != kNone;  // indices travel with the keys
  constexpr int kWarps = THREADS / 32;
  constexpr int kTile = THREADS * IPT;
  constexpr int kRounds = (kDigits + THREADS - 1) / THREADS;  // digits per thread
  constexpr int kSlotBytes = sizeof(S) > 4 ? 8 : (ARG ? 4 : int(sizeof(S)));
  constexpr uint32_t kAll = (1u << P) - 1;
  // The tile's keys (or indices) in step 4, the warps' words of peers in step 2.
  constexpr int kExchangeBytes = kTile * kSlotBytes > kWarps * kDigits * 4
                                     ? kTile * kSlotBytes : kWarps * kDigits * 4;
  __shared__ unsigned long long exchange_words[(kExchangeBytes + 7) / 8];
  __shared__ uint32_t warp_counts[kWarps * kDigits];
  __shared__ uint32_t tile_start[kDigits];  // first slot of each digit in the tile
  __shared__ uint32_t offset[kDigits];      // position in the row minus slot in the tile
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  for (int i = threadIdx.x; i < kWarps * kDigits; i += THREADS) {
    warp_counts[i] = 0;
    reinterpret_cast<uint32_t*>(exchange_words)[i] = 0;  // the words of peers
  }
  __syncthreads();
  const index_t tile_number = blockIdx.x;
  const index_t row = tile_number / tiles, tile = tile_number % tiles;
  const index_t row_base = row * n, tile_base = tile * kTile;
  const uint32_t mask = masks[row];
  if (mask & (1u << pass)) {
    if (mask == kAll && pass == P - 1) {  // all keys equal: the input order is the result
      for (int k = 0; k < IPT; ++k) {
        index_t i = tile_base + k * THREADS + threadIdx.x;
        if (i >= n) break;
        if (KEYS_OUT) {
          static_cast<S*>(out)[row_base + i] = S(key_of<T>(in[row_base + i], descending));
          if (PAYLOAD != kNone)
            out_index[row_base + i] = PAYLOAD == kCarried ? in_index[row_base + i] : uint32_t(i);
        } else if (PAYLOAD == kPosition) {
          static_cast<int64_t*>(out)[row_base + i] = int64_t(i);
        } else {
          static_cast<T*>(out)[row_base + i] = in[row_base + i];
          if (PAYLOAD == kCarried) out_index[row_base + i] = in_index[row_base + i];
        }
      }
    }
    return;
  }
  const int done = __popc(~mask & ((1u << pass) - 1));  // passes that moved this row
  const bool first = done == 0;
  const bool last = (~mask & kAll & ~((2u << pass) - 1)) == 0;
  const S* keys_in = (done & 1) ? keys0 : keys1;  // pass done - 1 wrote buffer (done - 1) & 1
  const uint32_t* index_in = (done & 1) ? index0 : index1;
  S* keys_out = (done & 1) ? keys1 : keys0;
  uint32_t* index_out = (done & 1) ? index1 : index0;
  const int shift = kDigitBits * pass;

  // 1. load
  S key[IPT];
  uint32_t index[IPT];
#pragma unroll
  for (int k = 0; k < IPT; ++k) {
    index_t i = tile_base + warp * (32 * IPT) + k * 32 + lane;
    bool valid = i < n;
    // Past the row's end: the largest key, so those sort after every key of the tile.
    key[k] = S(~S(0));
    index[k] = 0;
    if (valid) {
      if (first) {
        key[k] = S(key_of<T>(in[row_base + i], descending));
        index[k] = PAYLOAD == kCarried ? in_index[row_base + i] : uint32_t(i);
      } else {
        key[k] = keys_in[row_base + i];
        if (ARG) index[k] = index_in[row_base + i];
      }
    }
  }

  // 2. rank within the warp (Note [Onesweep counting]): the lanes of a digit each set
  // their bit in the warp's word of that digit, read the word back as their peers, and
  // the lowest of them adds their number to the warp's counter of the digit and clears
  // the word. The words share the exchange buffer, which step 4 uses after a barrier.
  uint32_t* peer_words = reinterpret_cast<uint32_t*>(exchange_words) + warp * kDigits;
  uint32_t slot[IPT];
  const unsigned lanes_below = (1u << lane) - 1u;
#pragma unroll
  for (int k = 0; k < IPT; ++k) {
    uint32_t d = uint32_t(key[k] >> shift) & (kDigits - 1);
    volatile uint32_t* word = peer_words + d;
    atomicOr(peer_words + d, 1u << lane);
    __syncwarp();
    const unsigned peers = *word;
    const int leader = __ffs(peers) - 1;
    uint32_t before = 0;
    if (lane == leader)
      before = atomicAdd(&warp_counts[warp * kDigits + d], uint32_t(__popc(peers)));
    before = __shfl_sync(0xffffffffu, before, leader);  // every lane has read its word
    if (lane == leader) *word = 0;
    __syncwarp();
    slot[k] = before + uint32_t(__popc(peers & lanes_below));
  }
  __syncthreads();

  // 3. offsets of the warps, the tile's counts, look-back
  uint32_t count[kRounds], exclusive[kRounds];
  uint32_t* chain = desc + row * tiles * kDigits;
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    int d = r * THREADS + threadIdx.x;
    count[r] = exclusive[r] = 0;
    if (d < kDigits) {
      uint32_t running = 0;
      for (int w = 0; w < kWarps; ++w) {
        uint32_t c = warp_counts[w * kDigits + d];
        warp_counts[w * kDigits + d] = running;
        running += c;
      }
      count[r] = running;
      uint32_t* mine = chain + tile * kDigits + d;
      if (tile == 0) {
        exclusive[r] = bins[(row * P + pass) * kDigits + d];
      } else {
        store_relaxed(mine, kFlagAggregate | running);
        uint32_t sum = 0;
        for (index_t t = tile - 1;; --t) {
          const uint32_t* theirs = chain + t * kDigits + d;
          uint32_t word = load_relaxed(theirs);
          while ((word & ~kValueMask) == 0) {
            __nanosleep(20);
            word = load_relaxed(theirs);
          }
          sum += word & kValueMask;
          if (word & kFlagPrefix) break;
        }
        exclusive[r] = sum;
      }
      store_relaxed(mine, kFlagPrefix | (exclusive[r] + running));
    }
  }
  uint32_t carry = 0;
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    int d = r * THREADS + threadIdx.x;
    uint32_t total;
    uint32_t start = carry + block_exclusive_sum<THREADS>(count[r], total);
    if (d < kDigits) {
      tile_start[d] = start;
      offset[d] = exclusive[r] - start;
    }
    carry += total;
  }
  __syncthreads();

  // 4. scatter through shared memory
  S* shared_keys = reinterpret_cast<S*>(exchange_words);
#pragma unroll
  for (int k = 0; k < IPT; ++k) {
    uint32_t d = uint32_t(key[k] >> shift) & (kDigits - 1);
    slot[k] += tile_start[d] + warp_counts[warp * kDigits + d];
    shared_keys[slot[k]] = key[k];
  }
  __syncthreads();
  const index_t left = n - tile_base;
  const int valid_slots = left < kTile ? int(left) : kTile;
  uint32_t position[IPT];
#pragma unroll
  for (int k = 0; k < IPT; ++k) {
    int i = k * THREADS + threadIdx.x;
    if (i < valid_slots) {
      S s = shared_keys[i];
      position[k] = offset[uint32_t(s >> shift) & (kDigits - 1)] + uint32_t(i);
      if (!last) keys_out[row_base + position[k]] = s;
      else if (KEYS_OUT) static_cast<S*>(out)[row_base + position[k]] = s;
      else if (PAYLOAD != kPosition)
        static_cast<T*>(out)[row_base + position[k]] = value_of_key<T>(K(s), descending);
    }
  }
  if (ARG) {
    __syncthreads();
    uint32_t* shared_index = reinterpret_cast<uint32_t*>(exchange_words);
#pragma unroll
    for (int k = 0; k < IPT; ++k) shared_index[slot[k]] = index[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < IPT; ++k) {
      int i = k * THREADS + threadIdx.x;
      if (i < valid_slots) {
        uint32_t v = shared_index[i];
        if (!last) index_out[row_base + position[k]] = v;
        else if (PAYLOAD == kPosition && !KEYS_OUT)
          static_cast<int64_t*>(out)[row_base + position[k]] = int64_t(v);
        else out_index[row_base + position[k]] = v;
      }
    }
  }
}

// ---- fix-up of zeros and NaNs ---------------------------------------------------------

/// Block b of rows * chunks (upsweep's chunks): in a row flagged by upsweep, writes the
/// chunk's zeros and NaNs to their places in the sorted row, in input order (what a stable
/// sort of the values gives; the keys made them all +0.0 and one NaN).
template <class T, int THREADS>
__device__ void fixup(const T* in, T* out, const uint32_t* row_specials,
                      const uint32_t* chunk_specials, index_t n, index_t chunk, index_t chunks,
                      bool descending) {
  typedef Key<T> KT;
  const index_t row = blockIdx.x / chunks, c = blockIdx.x % chunks;
  const uint32_t* rs = row_specials + row * 4;
  const uint32_t* cs = chunk_specials + row * chunks * 2;
  if (rs[3] == 0 || cs[c * 2] + cs[c * 2 + 1] == 0) return;
  uint32_t zeros_before = 0, nans_before = 0;
  for (index_t q = threadIdx.x; q < c; q += THREADS) {
    zeros_before += cs[q * 2];
    nans_before += cs[q * 2 + 1];
  }
  uint32_t total;
  block_exclusive_sum<THREADS>(zeros_before, total);
  zeros_before = total;
  block_exclusive_sum<THREADS>(nans_before, total);
  nans_before = total;
  const index_t below = rs[0], zeros = rs[1], nans = rs[2];
  const index_t above = n - below - zeros - nans;
  index_t zero_at = (descending ? nans + above : below) + zeros_before;
  index_t nan_at = (descending ? 0 : n - nans) + nans_before;
  const index_t begin = c * chunk, end = begin + chunk < n ? begin + chunk : n;
  const T* x = in + row * n;
  T* o = out + row * n;
  for (index_t base = begin; base < end; base += THREADS) {
    index_t i = base + threadIdx.x;
    T v = T();
    if (i < end) v = x[i];
    typename KT::U bits = KT::bits_of(v);
    bool zero = i < end && KT::is_zero(bits), nan = i < end && KT::is_nan(bits);
    // Counts of a block fit in 16 bits: zeros low, NaNs high.
    uint32_t before = block_exclusive_sum<THREADS>(uint32_t(zero) | uint32_t(nan) << 16, total);
    if (zero) o[zero_at + (before & 0xffffu)] = v;
    if (nan) o[nan_at + (before >> 16)] = v;
    zero_at += total & 0xffffu;
    nan_at += total >> 16;
  }
}

}  // namespace radix
}  // namespace xrt
