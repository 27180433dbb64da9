// cpp/kernels/xrt/repeat.cuh: repeat, as a gather: each output element finds its source
// along the axis, by division (one count for every element) or by a binary search of the
// counts' running totals (a count per element). Elements move as units of their size.
#pragma once
#include "xrt/common.cuh"

namespace xrt {
namespace repeat {

/// out (contiguous: outer, total, inner) from x (contiguous: outer, n, inner): output
/// position j of the axis takes source i = j / repeats, or, when ends is given (ends[i] =
/// the counts of elements 0..i added up), the first i with ends[i] > j. U: the unsigned
/// index type (32 bits when every position fits).
template <class T, class U>
__device__ void gather(T* __restrict__ out, const T* __restrict__ x,
                       const int64_t* __restrict__ ends, U n, U total, U inner, U repeats,
                       U count) {
  for (U u = U(blockIdx.x) * blockDim.x + threadIdx.x; u < count;
       u += U(gridDim.x) * blockDim.x) {
    U t = u, q = 0;
    if (inner != 1) {
      t = u / inner;
      q = u - t * inner;
    }
    U p = 0, j = t, i;
    if (t >= total) {  // past the first outer block
      p = t / total;
      j = t - p * total;
    }
    if (ends) {
      U first = 0, left = n;  // upper bound of j in ends
      while (left > 0) {
        U half = left / 2, middle = first + half;
        bool past = U(ends[middle]) <= j;
        first = past ? middle + 1 : first;
        left = past ? left - half - 1 : half;
      }
      i = first;
    } else {
      i = j / repeats;
    }
    out[u] = x[(p * n + i) * inner + q];
  }
}

}  // namespace repeat
}  // namespace xrt
