// cpp/kernels/xrt/set.cuh: unique and isin on the sort keys of sort.cuh, as the CPU's
// cpu/set_kernels.cpp: -0.0 and +0.0 share a key; every NaN key is the largest; a value
// with a NaN part is never equal to anything (unique: a group of its own; isin: never
// found). Complex values order as NumPy's (the CPU's RowSorter): by NaN class (none, the
// imaginary part, the real part, both), then by (real key, imaginary key).
//
// unique: (key, index) pairs sorted stably (the host, through the radix sort: complex in
// passes from the least significant key up), then one compaction pass (mask.cuh) over the
// sorted positions, selecting where a group starts. Integers without index outputs sort
// keys alone and decode the values from them.
// isin: the sorted keys of x2, binary-searched for each element of x1.
#pragma once
#include "xrt/mask.cuh"
#include "xrt/sort.cuh"

namespace xrt {
namespace set {

/// The sort key of T (complex128: of its real part; Imag gives the imaginary part's), and
/// which keys are NaN.
template <class T> struct SetKey {
  typedef typename sort::Key<T>::K K;
  static constexpr bool kFloat = false;
  __device__ static K of(T v) { return sort::Key<T>::of(v); }
  __device__ static bool is_nan(K) { return false; }
  /// The value of a key (integers and bool: the key is the value, sign bit flipped).
  __device__ static T value(K k) {
    typedef typename sort::Key<T>::U U;
    U u = U(k);
    if (sort::Key<T>::kSigned) u = U(u ^ U(U(1) << (8 * sizeof(T) - 1)));
    return T(u);
  }
};
template <> __device__ __forceinline__ bool SetKey<bool>::value(K k) { return k != 0; }
template <class T, class K_, K_ kNan> struct FloatKey {
  typedef K_ K;
  static constexpr bool kFloat = true;
  __device__ static K of(T v) { return sort::Key<T>::of(v); }
  __device__ static bool is_nan(K k) { return k == kNan; }
};
template <> struct SetKey<float> : FloatKey<float, uint32_t, 0xffffffffu> {};
template <> struct SetKey<double> : FloatKey<double, uint64_t, ~0ull> {};
template <> struct SetKey<float16> : FloatKey<float16, uint32_t, 0xffffu> {};
template <> struct SetKey<bfloat16> : FloatKey<bfloat16, uint32_t, 0xffffu> {};
/// What complex keys share: the NaN class of a value (NumPy's order: none, a NaN imaginary
/// part, a NaN real part, both) and whether two values have the same keys.
template <class F> struct ComplexKey {
  typedef uint64_t K;
  static constexpr bool kFloat = true;
  __device__ static bool nan_part(F v) { return SetKey<F>::is_nan(SetKey<F>::of(v)); }
  __device__ static bool has_nan(complex<F> v) { return nan_part(v.re) || nan_part(v.im); }
  __device__ static K nan_class(complex<F> v) { return K(nan_part(v.re)) * 2 + nan_part(v.im); }
  __device__ static bool same(complex<F> a, complex<F> b) {
    return SetKey<F>::of(a.re) == SetKey<F>::of(b.re) && SetKey<F>::of(a.im) == SetKey<F>::of(b.im);
  }
};
/// complex64: (real key << 32) | imaginary key, in one 64-bit key.
template <> struct SetKey<complex64> : ComplexKey<float> {
  __device__ static K of(complex64 v) {
    return uint64_t(SetKey<float>::of(v.re)) << 32 | SetKey<float>::of(v.im);
  }
  __device__ static bool is_nan(K k) {
    return SetKey<float>::is_nan(uint32_t(k >> 32)) || SetKey<float>::is_nan(uint32_t(k));
  }
};
/// complex128: the real part's key; the imaginary part's is a second key (imag).
template <> struct SetKey<complex128> : ComplexKey<double> {
  __device__ static K of(complex128 v) { return SetKey<double>::of(v.re); }
  __device__ static K imag(complex128 v) { return SetKey<double>::of(v.im); }
  __device__ static bool is_nan(K k) { return SetKey<double>::is_nan(k); }
};

template <class T> struct is_complex { static constexpr bool value = false; };
template <> struct is_complex<complex64> { static constexpr bool value = true; };
template <> struct is_complex<complex128> { static constexpr bool value = true; };
template <class T> struct is_complex128 { static constexpr bool value = false; };
template <> struct is_complex128<complex128> { static constexpr bool value = true; };

/// The key of a sort pass: 0 the value's key, 1 complex128's imaginary part's, 2 the NaN
/// class of a complex value.
template <class T, int PART>
__device__ __forceinline__ typename SetKey<T>::K pass_key(T v) {
  if constexpr (PART == 1) return SetKey<T>::imag(v);
  else if constexpr (PART == 2) return SetKey<T>::nan_class(v);
  else return SetKey<T>::of(v);
}

#define XRT_GRID_LOOP(i, n)                                                      \
  for (index_t i = blockIdx.x * index_t(blockDim.x) + threadIdx.x; i < (n); \
       i += index_t(gridDim.x) * blockDim.x)

/// keys[i] = key of x[i], index[i] = i (the pairs of a first sort pass; no index: keys
/// alone).
template <class T, int PART>
__device__ void encode(const T* __restrict__ x, typename SetKey<T>::K* __restrict__ keys,
                       uint32_t* __restrict__ index, index_t n) {
  XRT_GRID_LOOP(i, n) {
    keys[i] = pass_key<T, PART>(x[i]);
    if (index) index[i] = uint32_t(i);
  }
}

/// keys[j] = key of x[index[j]]: the pairs of a next pass, or sorted keys kept for a search.
template <class T, int PART>
__device__ void rekey(const T* __restrict__ x, typename SetKey<T>::K* __restrict__ keys,
                      const uint32_t* __restrict__ index, index_t n) {
  XRT_GRID_LOOP(j, n) keys[j] = pass_key<T, PART>(x[index[j]]);
}

/// Whether sorted position j starts a group: the first, a key unlike the one before it, or
/// a NaN. Complex values are compared through order (their last pass sorted NaN classes).
template <class T>
__device__ __forceinline__ bool starts_group(const T* x, const typename SetKey<T>::K* keys,
                                             const uint32_t* order, index_t j) {
  typedef SetKey<T> S;
  if (j == 0) return true;
  if constexpr (is_complex<T>::value) {
    T v = x[order[j]];
    return S::has_nan(v) || !S::same(x[order[j - 1]], v);
  } else {
    typename S::K k = keys[j];
    return S::is_nan(k) || keys[j - 1] != k;
  }
}

/// The groups of n sorted pairs (keys, order): per group g, values[g] = its first element,
/// indices[g] = that element's index (the smallest: the sort is stable), starts[g] = its
/// first sorted position; inverse[i] = the group of x[i]; *groups = the number of groups.
/// Null outputs are not wanted; without order (integers sorted as keys alone) the values
/// are decoded from the keys.
template <class T, int ITEMS>
__device__ void groups(const T* __restrict__ x, const typename SetKey<T>::K* __restrict__ keys,
                       const uint32_t* __restrict__ order, index_t n, T* __restrict__ values,
                       int64_t* __restrict__ indices, int64_t* __restrict__ inverse,
                       uint32_t* __restrict__ starts, char* work, index_t tiles,
                       int64_t* groups) {
  const index_t tile = scan::launch_order_tile();
  const index_t first = mask::first_position<ITEMS>(tile);
  bool start[ITEMS];
  unsigned ballot[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    index_t i = first + j * 32;
    start[j] = i < n && starts_group(x, keys, order, i);
    ballot[j] = __ballot_sync(0xffffffffu, start[j]);
  }
  index_t place = mask::warp_start<ITEMS>(ballot, work, tile, tiles, groups);
  const unsigned below = mask::lanes_below(), self = below + 1u;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    index_t i = first + j * 32;
    if (i < n) {
      index_t g = place + __popc(ballot[j] & (below | self)) - 1;  // the group of position i
      if (!order) {
        if constexpr (!SetKey<T>::kFloat && !is_complex<T>::value) {
          if (start[j]) values[g] = SetKey<T>::value(keys[i]);
        }
        if (start[j] && starts) starts[g] = uint32_t(i);
      } else {
        uint32_t source = order[i];
        if (start[j]) {
          values[g] = x[source];
          if (indices) indices[g] = source;
          if (starts) starts[g] = uint32_t(i);
        }
        if (inverse) inverse[source] = g;
      }
    }
    place += __popc(ballot[j]);
  }
}

/// counts[g] = the size of group g, from the groups' first sorted positions.
__device__ void counts(int64_t* __restrict__ counts, const uint32_t* __restrict__ starts,
                       const int64_t* __restrict__ groups, index_t n) {
  const index_t g_count = *groups;
  XRT_GRID_LOOP(g, g_count) counts[g] = (g + 1 < g_count ? index_t(starts[g + 1]) : n) - starts[g];
}

/// Whether sorted key j (with imag, for complex128) is below (key, imag).
template <class T>
__device__ __forceinline__ bool below(const typename SetKey<T>::K* keys,
                                      const typename SetKey<T>::K* imags, index_t j,
                                      typename SetKey<T>::K key, typename SetKey<T>::K imag) {
  if constexpr (is_complex128<T>::value)
    return keys[j] < key || (keys[j] == key && imags[j] < imag);
  return keys[j] < key;
}

/// out[i] = (x1[i] is among x2's m sorted keys) != invert; operands out (bool) and x1.
/// Each thread searches kWays elements at once (a branch-free lower bound whose steps
/// depend on m alone, so the searches run in step). SHARED: the keys are first copied to
/// shared memory (the host checks that they fit).
template <class T, int ND, bool SHARED>
__device__ void isin(char* __restrict__ out, const char* __restrict__ x1,
                     StridedLayout<ND, 2> layout, index_t n,
                     const typename SetKey<T>::K* __restrict__ keys,
                     const typename SetKey<T>::K* __restrict__ imags, index_t m, bool invert) {
  typedef SetKey<T> S;
  typedef typename S::K K;
  constexpr bool kPairs = is_complex128<T>::value;
  constexpr int kWays = 4;
  if constexpr (SHARED) {
    extern __shared__ unsigned long long shared_words[];
    K* k = reinterpret_cast<K*>(shared_words);
    for (index_t j = threadIdx.x; j < m; j += blockDim.x) {
      k[j] = keys[j];
      if (kPairs) k[m + j] = imags[j];
    }
    __syncthreads();
    keys = k;
    imags = k + m;
  }
  const index_t stride = index_t(gridDim.x) * blockDim.x;
  for (index_t first = blockIdx.x * index_t(blockDim.x) + threadIdx.x; first < n;
       first += kWays * stride) {
    K key[kWays], imag[kWays];
    bool nan[kWays];
    index_t offset[kWays][2], at_[kWays];
#pragma unroll
    for (int w = 0; w < kWays; ++w) {
      index_t i = first + w * stride;
      key[w] = imag[w] = 0;
      nan[w] = true;
      at_[w] = 0;
      if (i < n) {
        layout.offsets(uint64_t(i), offset[w]);
        T v = *at<T>(x1, offset[w][1]);
        key[w] = S::of(v);
        nan[w] = S::is_nan(key[w]);
        if constexpr (kPairs) {
          imag[w] = S::imag(v);
          nan[w] = nan[w] || S::is_nan(imag[w]);
        }
      }
    }
    for (index_t left = m; left > 1;) {
      index_t half = left / 2;
#pragma unroll
      for (int w = 0; w < kWays; ++w)
        at_[w] = below<T>(keys, imags, at_[w] + half, key[w], imag[w]) ? at_[w] + half : at_[w];
      left -= half;
    }
#pragma unroll
    for (int w = 0; w < kWays; ++w) {
      if (first + w * stride >= n) continue;
      index_t j = at_[w] + (m > 0 && below<T>(keys, imags, at_[w], key[w], imag[w]));
      bool found = !nan[w] && j < m && keys[j] == key[w] && (!kPairs || imags[j] == imag[w]);
      *at<bool>(out, offset[w][0]) = found != invert;
    }
  }
}

#undef XRT_GRID_LOOP

}  // namespace set
}  // namespace xrt
