// cpp/kernels/xrt/set.cuh: unique and isin on the sort keys of sort.cuh, as the CPU's
// cpu/set_kernels.cpp: -0.0 and +0.0 share a key; every NaN key is the largest; complex
// values order by (real key, imaginary key); a value with a NaN part is never equal to
// anything (unique: a group of its own; isin: never found).
//
// unique: (key, index) pairs sorted stably (the host, through the radix sort), then one
// compaction pass (mask.cuh) over the sorted positions, selecting where a group starts.
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
};
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
/// complex64: (real key << 32) | imaginary key, in one 64-bit key.
template <> struct SetKey<complex64> {
  typedef uint64_t K;
  static constexpr bool kFloat = true;
  __device__ static K of(complex64 v) {
    return uint64_t(SetKey<float>::of(v.re)) << 32 | SetKey<float>::of(v.im);
  }
  __device__ static bool is_nan(K k) {
    return SetKey<float>::is_nan(uint32_t(k >> 32)) || SetKey<float>::is_nan(uint32_t(k));
  }
};
/// complex128: the real part's key; the imaginary part's is a second key (Imag).
template <> struct SetKey<complex128> {
  typedef uint64_t K;
  static constexpr bool kFloat = true;
  __device__ static K of(complex128 v) { return SetKey<double>::of(v.re); }
  __device__ static K imag(complex128 v) { return SetKey<double>::of(v.im); }
  __device__ static bool is_nan(K k) { return SetKey<double>::is_nan(k); }
};

template <class T> struct is_complex128 { static constexpr bool value = false; };
template <> struct is_complex128<complex128> { static constexpr bool value = true; };

/// The key a sort pass of T uses: the imaginary part's for complex128's first pass.
template <class T, bool IMAG>
__device__ __forceinline__ typename SetKey<T>::K pass_key(T v) {
  if constexpr (IMAG) return SetKey<T>::imag(v);
  else return SetKey<T>::of(v);
}

#define XRT_GRID_LOOP(i, n)                                                      \
  for (index_t i = blockIdx.x * index_t(blockDim.x) + threadIdx.x; i < (n); \
       i += index_t(gridDim.x) * blockDim.x)

/// keys[i] = key of x[i], index[i] = i (the pairs of a first sort pass).
template <class T, bool IMAG>
__device__ void encode(const T* __restrict__ x, typename SetKey<T>::K* __restrict__ keys,
                       uint32_t* __restrict__ index, index_t n) {
  XRT_GRID_LOOP(i, n) {
    keys[i] = pass_key<T, IMAG>(x[i]);
    index[i] = uint32_t(i);
  }
}

/// keys[j] = key of x[index[j]]: the pairs of a next pass, or sorted keys kept for a search.
template <class T, bool IMAG>
__device__ void rekey(const T* __restrict__ x, typename SetKey<T>::K* __restrict__ keys,
                      const uint32_t* __restrict__ index, index_t n) {
  XRT_GRID_LOOP(j, n) keys[j] = pass_key<T, IMAG>(x[index[j]]);
}

/// Whether sorted position j starts a group: the first, a key unlike the one before it, or
/// a NaN (complex128: both parts compared).
template <class T>
__device__ __forceinline__ bool starts_group(const T* x, const typename SetKey<T>::K* keys,
                                             const uint32_t* order, index_t j) {
  typedef SetKey<T> S;
  typename S::K k = keys[j];
  if (j == 0 || S::is_nan(k) || keys[j - 1] != k) return true;
  if constexpr (is_complex128<T>::value) {
    typename S::K im = S::imag(x[order[j]]);
    return S::is_nan(im) || S::imag(x[order[j - 1]]) != im;
  }
  return false;
}

/// The groups of n sorted pairs (keys, order): per group g, values[g] = its first element,
/// indices[g] = that element's index (the smallest: the sort is stable), starts[g] = its
/// first sorted position; inverse[i] = the group of x[i]; *groups = the number of groups.
/// Null outputs are not wanted.
template <class T, int ITEMS>
__device__ void groups(const T* __restrict__ x, const typename SetKey<T>::K* __restrict__ keys,
                       const uint32_t* __restrict__ order, index_t n, T* __restrict__ values,
                       int64_t* __restrict__ indices, int64_t* __restrict__ inverse,
                       uint32_t* __restrict__ starts, char* work, index_t tiles,
                       int64_t* groups) {
  const index_t tile = mask::take_tile(work);
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
      uint32_t source = order[i];
      if (start[j]) {
        values[g] = x[source];
        if (indices) indices[g] = source;
        if (starts) starts[g] = uint32_t(i);
      }
      if (inverse) inverse[source] = g;
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

/// Whether key (and imag, for complex128) is among the m sorted keys (and imags).
template <class T>
__device__ __forceinline__ bool contains(const typename SetKey<T>::K* keys,
                                         const typename SetKey<T>::K* imags, index_t m,
                                         typename SetKey<T>::K key,
                                         typename SetKey<T>::K imag) {
  index_t first = 0, count = m;  // lower bound
  while (count > 0) {
    index_t half = count / 2, middle = first + half;
    bool less = keys[middle] < key;
    if constexpr (is_complex128<T>::value)
      less = less || (keys[middle] == key && imags[middle] < imag);
    first = less ? middle + 1 : first;
    count = less ? count - half - 1 : half;
  }
  if (first == m || keys[first] != key) return false;
  if constexpr (is_complex128<T>::value) return imags[first] == imag;
  return true;
}

/// out[i] = (x1[i] is among x2's m sorted keys) != invert; operands out (bool) and x1.
/// SHARED: the keys are first copied to shared memory (the host checks that they fit).
template <class T, int ND, bool SHARED>
__device__ void isin(char* __restrict__ out, const char* __restrict__ x1,
                     StridedLayout<ND, 2> layout, index_t n,
                     const typename SetKey<T>::K* __restrict__ keys,
                     const typename SetKey<T>::K* __restrict__ imags, index_t m, bool invert) {
  typedef SetKey<T> S;
  typedef typename S::K K;
  constexpr bool kPairs = is_complex128<T>::value;
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
  XRT_GRID_LOOP(i, n) {
    index_t offset[2];
    layout.offsets(uint64_t(i), offset);
    T v = *at<T>(x1, offset[1]);
    K key = S::of(v), imag = 0;
    bool nan = S::is_nan(key);
    if constexpr (kPairs) {
      imag = S::imag(v);
      nan = nan || S::is_nan(imag);
    }
    bool found = !nan && contains<T>(keys, imags, m, key, imag);
    *at<bool>(out, offset[0]) = found != invert;
  }
}

#undef XRT_GRID_LOOP

}  // namespace set
}  // namespace xrt
