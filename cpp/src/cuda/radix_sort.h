// cpp/src/cuda/radix_sort.h: the LSD radix sort of sort_kernels.cpp (sort.cuh), for the
// families that sort keys of their own (unique and isin in set_kernels.cpp).
#pragma once
#include <cstdint>

#include "xpuruntime/dtype.h"

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

/// Sorts the n values of a contiguous 1-D tensor of dtype (real, with keys as wide as its
/// values: 4 or 8 bytes) by their sort keys (sort_keys.cuh's, ascending, stable), writing
/// the sorted keys to keys and, unless positions is null, the position each came from;
/// spare_keys / spare_positions (each of n, or null) are scratch the sort may use. Returns
/// false, with nothing enqueued, where the onesweep sort does not serve: the caller
/// encodes the keys and calls radix_sort_pairs.
bool radix_sort_encoded(int device, DType dtype, const void* values, int64_t n, void* keys,
                        uint32_t* positions, void* spare_keys, uint32_t* spare_positions);

}  // namespace xrt::cuda
