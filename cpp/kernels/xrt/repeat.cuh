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

/// out[u] = x[u / repeats] for u < count: one count for every element and no inner
/// dimensions. A thread writes VEC consecutive outputs with one vector store (out is
/// aligned to it), its sources found by one division and then by counting.
template <class T, class U>
__device__ void spread(T* __restrict__ out, const T* __restrict__ x, U repeats, U count) {
  constexpr int VEC = sizeof(T) >= 16 ? 1 : int(16 / sizeof(T));
  struct alignas(sizeof(T) * VEC) Vector {
    T e[VEC];
  };
  const U vectors = count / VEC, stride = U(gridDim.x) * blockDim.x;
  const U first_thread = U(blockIdx.x) * blockDim.x + threadIdx.x;
  for (U g = first_thread; g < vectors; g += stride) {
    U first = g * VEC, i = first / repeats, left = repeats - (first - i * repeats);
    Vector v;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      v.e[k] = x[i];
      if (--left == 0) {
        left = repeats;
        ++i;
      }
    }
    reinterpret_cast<Vector*>(out)[g] = v;
  }
  for (U u = vectors * VEC + first_thread; u < count; u += stride) out[u] = x[u / repeats];
}

}  // namespace repeat
}  // namespace xrt
