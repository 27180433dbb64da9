// cpp/src/cuda/radix_sort.h: the LSD radix sort of sort_kernels.cpp (sort.cuh), for the
// families that sort keys of their own (unique and isin in set_kernels.cpp).
#pragma once
#include <cstdint>

namespace xrt::cuda {

/// Device buffers of (key, index) pairs: two of keys (uint32, or uint64 when wide) and two of
/// uint32 indices, ping and pong, each of rows * n elements. Null indices: keys alone.
struct RadixBuffers {
  char* keys[2];
  char* index[2];
};

/// Sorts each of `rows` rows of n pairs, starting in keys[0] / index[0], stably by the low
/// `bits` bits of their keys (bits above them, up to the next multiple of 8, must be zero),
/// on device's current stream (its context current): the onesweep radix sort (8-bit
/// digits, all rows at once, passes in which a row's digit is constant skipped), or for
/// rows of 2^30 and more the 4-bit one. Both buffers may be overwritten; returns which,
/// 0 or 1, holds the sorted pairs. The payload (index) is any uint32, carried along.
/// n < 2^32; UnsupportedOperationError when rows * tiles does not fit one launch.
int radix_sort_pairs(int device, const RadixBuffers& buffers, int64_t rows, int64_t n,
                     bool wide, int bits);

}  // namespace xrt::cuda
