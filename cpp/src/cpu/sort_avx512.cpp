// cpp/src/cpu/sort_avx512.cpp: vectorised quicksort of 32/64-bit unsigned keys (AVX-512).
//
// - Partition: pick the median of 2W samples (8W for long ranges) as pivot; stream the
//   range in vectors of W keys, compress-store the lanes below the pivot to the left end
//   and the others to the right end, reading from whichever end has less free room so
//   that writes never overtake reads. The first and last vectors are held in registers
//   to make that room. Eight vectors per step keep the compress units busy.
// - Duplicates: when no key is below the pivot the pivot is the minimum; a second
//   partition splits off the keys equal to it, which are done. Every step thus shrinks
//   the range, and a depth limit hands pathological inputs to std::sort.
// - Ranges of at most 32 vectors are sorted in registers: a sorting network on the
//   columns (Batcher's odd-even merge sort across registers: min/max only), then merge
//   steps that turn sorted runs in blocks of S lanes into runs in blocks of 2S lanes
//   (a flip, half-cleaners across and within registers, and a permute that re-lays the
//   runs), until one run covers all registers in memory order.
// - Large inputs: the top partitions run first, the pieces then sort in parallel.
// The functions carry target attributes and run only after a CPUID check, so the file
// builds for baseline x86-64 like every other one.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "core/host/thread_pool.h"
#include "cpu/sort_algorithms.h"
#include "xpuruntime/cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define XRT_HAVE_AVX512_SORT 1
// Small helpers inline into their callers; the entry points are real functions.
#define XRT_AVX512 __attribute__((target("avx512f,popcnt,bmi2"), always_inline)) inline
#define XRT_AVX512_ENTRY __attribute__((target("avx512f,popcnt,bmi2"), noinline))
// Registers live in arrays indexed by loop counters: the loops must unroll completely.
#define XRT_UNROLL _Pragma("GCC unroll 128")
#endif

namespace xrt::cpu::sorting {

using host::parallel_for;

#ifdef XRT_HAVE_AVX512_SORT
namespace {

// One vector of unsigned keys: W lanes of K.
template <class K> struct Vec;

template <> struct Vec<uint32_t> {
  using Mask = __mmask16;
  static constexpr int W = 16;
  XRT_AVX512 static __m512i load(const uint32_t* p) { return _mm512_loadu_si512(p); }
  XRT_AVX512 static __m512i load_n(const uint32_t* p, int n) {  // missing lanes: max key
    return _mm512_mask_loadu_epi32(_mm512_set1_epi32(-1), Mask((1u << n) - 1), p);
  }
  XRT_AVX512 static void store(uint32_t* p, __m512i v) { _mm512_storeu_si512(p, v); }
  XRT_AVX512 static void store_n(uint32_t* p, int n, __m512i v) {
    _mm512_mask_storeu_epi32(p, Mask((1u << n) - 1), v);
  }
  XRT_AVX512 static __m512i min(__m512i a, __m512i b) { return _mm512_min_epu32(a, b); }
  XRT_AVX512 static __m512i max(__m512i a, __m512i b) { return _mm512_max_epu32(a, b); }
  XRT_AVX512 static __m512i blend(Mask m, __m512i a, __m512i b) {
    return _mm512_mask_mov_epi32(a, m, b);
  }
  XRT_AVX512 static __m512i permute(__m512i index, __m512i v) {
    return _mm512_permutexvar_epi32(index, v);
  }
  XRT_AVX512 static __m512i permute2(__m512i a, __m512i index, __m512i b) {
    return _mm512_permutex2var_epi32(a, index, b);
  }
  XRT_AVX512 static Mask greater_equal(__m512i a, __m512i b) {
    return _mm512_cmpge_epu32_mask(a, b);
  }
  XRT_AVX512 static Mask greater(__m512i a, __m512i b) { return _mm512_cmpgt_epu32_mask(a, b); }
  XRT_AVX512 static void compress_store(uint32_t* p, Mask m, __m512i v) {
    _mm512_mask_compressstoreu_epi32(p, m, v);
  }
  XRT_AVX512 static __m512i broadcast(uint32_t k) { return _mm512_set1_epi32(int(k)); }
  // Exchange lanes i and i ^ J.
  template <int J> XRT_AVX512 static __m512i swap(__m512i v) {
    if constexpr (J == 1) return _mm512_shuffle_epi32(v, _MM_PERM_CDAB);
    if constexpr (J == 2) return _mm512_shuffle_epi32(v, _MM_PERM_BADC);
    if constexpr (J == 4) return _mm512_shuffle_i32x4(v, v, 0xB1);
    if constexpr (J == 8) return _mm512_shuffle_i32x4(v, v, 0x4E);
  }
};

template <> struct Vec<uint64_t> {
  using Mask = __mmask8;
  static constexpr int W = 8;
  XRT_AVX512 static __m512i load(const uint64_t* p) { return _mm512_loadu_si512(p); }
  XRT_AVX512 static __m512i load_n(const uint64_t* p, int n) {
    return _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), Mask((1u << n) - 1), p);
  }
  XRT_AVX512 static void store(uint64_t* p, __m512i v) { _mm512_storeu_si512(p, v); }
  XRT_AVX512 static void store_n(uint64_t* p, int n, __m512i v) {
    _mm512_mask_storeu_epi64(p, Mask((1u << n) - 1), v);
  }
  XRT_AVX512 static __m512i min(__m512i a, __m512i b) { return _mm512_min_epu64(a, b); }
  XRT_AVX512 static __m512i max(__m512i a, __m512i b) { return _mm512_max_epu64(a, b); }
  XRT_AVX512 static __m512i blend(Mask m, __m512i a, __m512i b) {
    return _mm512_mask_mov_epi64(a, m, b);
  }
  XRT_AVX512 static __m512i permute(__m512i index, __m512i v) {
    return _mm512_permutexvar_epi64(index, v);
  }
  XRT_AVX512 static __m512i permute2(__m512i a, __m512i index, __m512i b) {
    return _mm512_permutex2var_epi64(a, index, b);
  }
  XRT_AVX512 static Mask greater_equal(__m512i a, __m512i b) {
    return _mm512_cmpge_epu64_mask(a, b);
  }
  XRT_AVX512 static Mask greater(__m512i a, __m512i b) { return _mm512_cmpgt_epu64_mask(a, b); }
  XRT_AVX512 static void compress_store(uint64_t* p, Mask m, __m512i v) {
    _mm512_mask_compressstoreu_epi64(p, m, v);
  }
  XRT_AVX512 static __m512i broadcast(uint64_t k) { return _mm512_set1_epi64(int64_t(k)); }
  template <int J> XRT_AVX512 static __m512i swap(__m512i v) {
    if constexpr (J == 1) return _mm512_shuffle_epi32(v, _MM_PERM_BADC);
    if constexpr (J == 2) return _mm512_shuffle_i64x2(v, v, 0xB1);
    if constexpr (J == 4) return _mm512_shuffle_i64x2(v, v, 0x4E);
  }
};

// ---- Compile-time tables --------------------------------------------------------------

template <class K> using Lanes = std::array<K, Vec<K>::W>;

template <class K> XRT_AVX512 __m512i load_lanes(const Lanes<K>& lanes) {
  return _mm512_loadu_si512(lanes.data());
}

/// Lane i reads lane i ^ (S - 1): reverses every block of S lanes.
template <class K> constexpr Lanes<K> reverse_blocks(int s) {
  Lanes<K> a{};
  for (int i = 0; i < Vec<K>::W; ++i) a[i] = K(i ^ (s - 1));
  return a;
}

/// Lanes whose bit J is set: in a compare-exchange at lane distance J they take the max.
template <class K> constexpr unsigned upper_lanes(int j) {
  unsigned m = 0;
  for (int i = 0; i < Vec<K>::W; ++i)
    if (i & j) m |= 1u << i;
  return m;
}

/// For two registers a, b holding blocks of S lanes: the low (or high) half of each block
/// of a, then that of b, as one block of S lanes (indices for permute2).
template <class K> constexpr Lanes<K> gather_halves(int s, bool high) {
  constexpr int W = Vec<K>::W;
  Lanes<K> a{};
  int h = s / 2;
  for (int i = 0; i < W; ++i) {
    int block = i / s * s, j = i % s;
    int from = (j < h ? block + j : block + j - h) + (high ? h : 0);
    a[i] = K(j < h ? from : from + W);
  }
  return a;
}

/// Batcher's odd-even merge sort on R inputs, as a list of comparators.
template <int R> struct OddEvenMergeSort {
  template <class Visit> static constexpr void visit(Visit&& f) {
    for (int p = 1; p < R; p *= 2)
      for (int k = p; k >= 1; k /= 2)
        for (int j = k % p; j + k < R; j += 2 * k)
          for (int i = 0; i < k && i + j + k < R; ++i)
            if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) f(i + j, i + j + k);
  }
  static constexpr int size() {
    int n = 0;
    visit([&](int, int) { ++n; });
    return n;
  }
  static constexpr auto pairs() {
    std::array<std::array<int, 2>, size() ? size() : 1> a{};
    int n = 0;
    visit([&](int i, int j) { a[n++] = {i, j}; });
    return a;
  }
};

// ---- Sorting networks in registers ----------------------------------------------------
//
// The registers live in arrays; every index below is a compile-time constant (index
// sequences, not loops), so that the arrays stay in registers.

template <int... I> using Ints = std::integer_sequence<int, I...>;

template <class K> XRT_AVX512 void exchange(__m512i& a, __m512i& b) {
  __m512i lo = Vec<K>::min(a, b);
  b = Vec<K>::max(a, b);
  a = lo;
}

/// Compare-exchange of lanes i and i ^ J: the lanes with bit J set take the max.
template <class K, int J> XRT_AVX512 __m512i exchange_lanes(__m512i v) {
  using V = Vec<K>;
  __m512i t = V::template swap<J>(v);
  return V::blend(typename V::Mask(upper_lanes<K>(J)), V::min(v, t), V::max(v, t));
}

template <int... I> XRT_AVX512 void copy_registers(const __m512i* from, __m512i* to, Ints<I...>) {
  ((to[I] = from[I]), ...);
}

// The flip: run position p against 2m-1-p, i.e. register r against the mirror register
// with its blocks of S lanes reversed.
template <class K, int S> XRT_AVX512 void flip_pair(__m512i& a, __m512i& b, __m512i reverse) {
  using V = Vec<K>;
  constexpr auto second_half = typename V::Mask(upper_lanes<K>(S / 2));
  __m512i t = V::permute(reverse, b);
  __m512i lo = V::min(a, t), hi = V::max(a, t);
  a = V::blend(second_half, lo, hi);
  b = V::permute(reverse, V::blend(second_half, hi, lo));
}
template <class K, int R, int S, int... I> XRT_AVX512 void flip(__m512i* v, Ints<I...>) {
  static constexpr Lanes<K> reverse = reverse_blocks<K>(S);
  const __m512i index = load_lanes<K>(reverse);
  (flip_pair<K, S>(v[I], v[R - 1 - I], index), ...);
}

// Half-cleaner across registers at register distance D (pairs i, i + D in blocks of 2D).
template <class K, int D, int... I> XRT_AVX512 void clean_across(__m512i* v, Ints<I...>) {
  (exchange<K>(v[I / D * 2 * D + I % D], v[I / D * 2 * D + I % D + D]), ...);
}
template <class K, int R, int D> XRT_AVX512 void clean_across_all(__m512i* v) {
  clean_across<K, D>(v, std::make_integer_sequence<int, R / 2>{});
  if constexpr (D > 1) clean_across_all<K, R, D / 2>(v);
}

// Half-cleaners inside each register, lane distances S/4 ... 1.
template <class K, int S> XRT_AVX512 __m512i clean_within(__m512i x) {
  if constexpr (S >= 16) x = exchange_lanes<K, 4>(x);
  if constexpr (S >= 8) x = exchange_lanes<K, 2>(x);
  if constexpr (S >= 4) x = exchange_lanes<K, 1>(x);
  return x;
}
template <class K, int S, int... I> XRT_AVX512 void clean_within_all(__m512i* v, Ints<I...>) {
  ((v[I] = clean_within<K, S>(v[I])), ...);
}

// Re-lays runs: the halves of registers 2k and 2k+1 become registers k and R/2 + k.
template <class K, int R, int S, int... I>
XRT_AVX512 void relayout(const __m512i* v, __m512i* w, Ints<I...>) {
  static constexpr Lanes<K> low = gather_halves<K>(S, false), high = gather_halves<K>(S, true);
  const __m512i low_index = load_lanes<K>(low), high_index = load_lanes<K>(high);
  ((w[I] = Vec<K>::permute2(v[2 * I], low_index, v[2 * I + 1])), ...);
  ((w[R / 2 + I] = Vec<K>::permute2(v[2 * I], high_index, v[2 * I + 1])), ...);
}

/// Sorted runs in both halves of every block of S lanes (row-major over the R registers)
/// become one sorted run per block; relaid, they are the halves of blocks of 2S lanes,
/// or, after the last step (S == W), one run in memory order.
template <class K, int R, int S> XRT_AVX512 void merge_steps(__m512i* v) {
  flip<K, R, S>(v, std::make_integer_sequence<int, R / 2>{});
  clean_across_all<K, R, R / 2>(v);
  clean_within_all<K, S>(v, std::make_integer_sequence<int, R>{});
  __m512i w[R];
  relayout<K, R, S>(v, w, std::make_integer_sequence<int, R / 2>{});
  if constexpr (S < Vec<K>::W) merge_steps<K, R, 2 * S>(w);
  copy_registers(w, v, std::make_integer_sequence<int, R>{});
}

template <class K, int R, int... I> XRT_AVX512 void sort_columns(__m512i* v, Ints<I...>) {
  static constexpr auto pairs = OddEvenMergeSort<R>::pairs();
  (exchange<K>(v[pairs[I][0]], v[pairs[I][1]]), ...);
}

/// Sorts R registers (R >= 2, a power of two) into memory order.
template <class K, int R> XRT_AVX512 void sort_registers(__m512i* v) {
  sort_columns<K, R>(v, std::make_integer_sequence<int, OddEvenMergeSort<R>::size()>{});
  merge_steps<K, R, 2>(v);
}

template <class K, int R> XRT_AVX512 void sort_small(K* keys, int n) {
  using V = Vec<K>;
  constexpr int W = V::W;
  __m512i v[R];
  XRT_UNROLL
  for (int r = 0; r < R; ++r) {
    int count = std::clamp(n - r * W, 0, W);
    v[r] = count == W ? V::load(keys + r * W) : V::load_n(keys + r * W, count);
  }
  sort_registers<K, R>(v);
  XRT_UNROLL
  for (int r = 0; r < R; ++r) {
    int count = std::clamp(n - r * W, 0, W);
    if (count == W) V::store(keys + r * W, v[r]);
    else if (count > 0) V::store_n(keys + r * W, count, v[r]);
  }
}

constexpr int kSmallRegisters = 32;

template <class K> XRT_AVX512_ENTRY void sort_small(K* keys, int64_t n) {
  constexpr int W = Vec<K>::W;
  int registers = int((n + W - 1) / W);
  if (registers <= 2) sort_small<K, 2>(keys, int(n));
  else if (registers <= 4) sort_small<K, 4>(keys, int(n));
  else if (registers <= 8) sort_small<K, 8>(keys, int(n));
  else if (registers <= 16) sort_small<K, 16>(keys, int(n));
  else sort_small<K, kSmallRegisters>(keys, int(n));
}

// ---- Partition ------------------------------------------------------------------------

/// Writes partitioned vectors: keys below the pivot (at most it, when Inclusive) to the
/// left end, the others to the right end.
template <class K, bool Inclusive> struct Partitioner {
  using V = Vec<K>;
  using Mask = typename V::Mask;
  K* keys;
  int64_t left, right;  // [0, left) and [right, n) are written
  __m512i pivot;

  XRT_AVX512 void put(__m512i x, Mask valid = Mask(~0u)) {
    Mask to_right = Mask((Inclusive ? V::greater(x, pivot) : V::greater_equal(x, pivot)) & valid);
    Mask to_left = Mask(~to_right & valid);
    int count_right = std::popcount(unsigned(to_right));
    int count_left = std::popcount(unsigned(to_left));
    V::compress_store(keys + left, to_left, x);
    left += count_left;
    right -= count_right;
    V::compress_store(keys + right, to_right, x);
  }
};

/// Partitions keys[0, n), n >= 2W, in place; returns the size of the left part.
template <class K, bool Inclusive> XRT_AVX512 int64_t partition(K* keys, int64_t n, K pivot) {
  using V = Vec<K>;
  constexpr int W = V::W;
  constexpr int U = 8;  // vectors per step
  Partitioner<K, Inclusive> out{keys, 0, n, V::broadcast(pivot)};
  // [read_left, read_right) is unread. Reading from the end with less free room keeps
  // at least one vector of room at both ends.
  int64_t held = n >= 4 * U * W ? U : 1;
  __m512i head[U], tail[U];
  for (int u = 0; u < held; ++u) {
    head[u] = V::load(keys + u * W);
    tail[u] = V::load(keys + n - (u + 1) * W);
  }
  int64_t read_left = held * W, read_right = n - held * W;
  if (held == U) {
    while (read_right - read_left >= U * W) {
      __m512i x[U];
      if (out.right - read_right <= read_left - out.left) {
        read_right -= U * W;
        for (int u = 0; u < U; ++u) {
          x[u] = V::load(keys + read_right + u * W);
          _mm_prefetch(reinterpret_cast<const char*>(keys + read_right - (u + 1) * W), _MM_HINT_T0);
        }
      } else {
        for (int u = 0; u < U; ++u) {
          x[u] = V::load(keys + read_left + u * W);
          _mm_prefetch(reinterpret_cast<const char*>(keys + read_left + (U + u) * W), _MM_HINT_T0);
        }
        read_left += U * W;
      }
      for (int u = 0; u < U; ++u) out.put(x[u]);
    }
  }
  while (read_right - read_left >= W) {
    __m512i x;
    if (out.right - read_right <= read_left - out.left) {
      read_right -= W;
      x = V::load(keys + read_right);
    } else {
      x = V::load(keys + read_left);
      read_left += W;
    }
    out.put(x);
  }
  // Everything unwritten is now free: the rest and the held vectors go in any order.
  int rest = int(read_right - read_left);
  if (rest > 0) out.put(V::load_n(keys + read_left, rest), typename V::Mask((1u << rest) - 1));
  for (int u = 0; u < held; ++u) {
    out.put(head[u]);
    out.put(tail[u]);
  }
  return out.left;
}

/// The median of V evenly spaced samples (V = 2W, or 8W for long ranges).
template <class K, int Registers> XRT_AVX512 K sample_median(const K* keys, int64_t n) {
  constexpr int kSamples = Registers * Vec<K>::W;
  alignas(64) K sample[kSamples];
  int64_t step = n / kSamples;
  for (int i = 0; i < kSamples; ++i) sample[i] = keys[step / 2 + i * step];
  sort_small<K, Registers>(sample, kSamples);
  return sample[kSamples / 2];
}

template <class K> XRT_AVX512 K choose_pivot(const K* keys, int64_t n) {
  return n < 8192 ? sample_median<K, 2>(keys, n) : sample_median<K, 8>(keys, n);
}

/// Splits keys[0, n) into a left part (returned size) and a right part, both non-empty
/// unless all keys are equal; keys equal to a minimal pivot are final and reported
/// through done_left.
template <class K> XRT_AVX512 int64_t split(K* keys, int64_t n, bool& done_left) {
  K pivot = choose_pivot(keys, n);
  int64_t m = partition<K, false>(keys, n, pivot);
  done_left = m == 0;
  if (done_left) m = partition<K, true>(keys, n, pivot);  // the pivot is the minimum
  return m;
}

template <class K> XRT_AVX512_ENTRY void quicksort(K* keys, int64_t n, int depth) {
  constexpr int64_t kSmall = kSmallRegisters * Vec<K>::W;
  while (n > kSmall) {
    if (depth-- == 0) return std::sort(keys, keys + n);
    bool done_left;
    int64_t m = split(keys, n, done_left);
    if (done_left) {
      keys += m;
      n -= m;
    } else if (m < n - m) {
      quicksort(keys, m, depth);
      keys += m;
      n -= m;
    } else {
      quicksort(keys + m, n - m, depth);
      n = m;
    }
  }
  if (n > 1) sort_small(keys, n);
}

struct Piece {
  int64_t begin, size;
  int depth;
};

template <class K> XRT_AVX512_ENTRY void sort_entry(K* keys, int64_t n) {
  if (n <= kSmallRegisters * Vec<K>::W) return sort_small(keys, n);
  int depth = 2 * (64 - std::countl_zero(uint64_t(n)));
  constexpr int64_t kParallelMin = int64_t(1) << 17;
  int threads = n < 2 * kParallelMin ? 1 : num_threads();
  if (threads <= 1) return quicksort(keys, n, depth);
  // Split until the pieces are small enough to balance over the threads, then sort them
  // in parallel (the result does not depend on how the work was split).
  int64_t target = std::max(kParallelMin, n / (4 * threads));
  std::vector<Piece> pending{{0, n, depth}}, pieces;
  while (!pending.empty()) {
    Piece p = pending.back();
    pending.pop_back();
    if (p.size <= target || p.depth == 0) {
      pieces.push_back(p);
      continue;
    }
    bool done_left;
    int64_t m = split(keys + p.begin, p.size, done_left);
    if (!done_left) pending.push_back({p.begin, m, p.depth - 1});
    pending.push_back({p.begin + m, p.size - m, p.depth - 1});
  }
  parallel_for(int64_t(pieces.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      quicksort(keys + pieces[i].begin, pieces[i].size, pieces[i].depth);
  });
}

}  // namespace
#endif

bool have_avx512_sort() {
#ifdef XRT_HAVE_AVX512_SORT
  static const bool available = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi2");
  return available;
#else
  return false;
#endif
}

void avx512_sort(uint32_t* keys, int64_t n) {
#ifdef XRT_HAVE_AVX512_SORT
  sort_entry(keys, n);
#endif
}

void avx512_sort(uint64_t* keys, int64_t n) {
#ifdef XRT_HAVE_AVX512_SORT
  sort_entry(keys, n);
#endif
}

}  // namespace xrt::cpu::sorting
