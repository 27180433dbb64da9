// cpp/kernels/xrt/reduce.cuh: the reduction kernels, for any reducer of reducers.cuh.
//
// The host (cuda/reduce_launch.cpp) describes a reduction as two boxes of merged
// dimensions with byte strides: the kept one (one output each, row-major) and the reduced
// one (its last dimension is the run the kernels read along). Two walks:
// - inner: a group (a warp or the block) per output reads its runs together, with 16-byte
//   loads when the run is contiguous; lanes, then the group, combine in a fixed tree.
// - outer: a thread per output (or per OVEC adjacent outputs, loaded as one vector) walks
//   the reduced box in order: the column reduction (outputs adjacent in memory), and short
//   reductions, whose order is then the host's sequential one.
// Either may split each output's elements into `splits` pieces of `piece` (elements, or
// runs for an inner walk of several runs) whose partial accumulators are combined in
// piece order, so results never depend on timing: by a second launch (Partials<R>) after
// an inner walk; within the launch after an outer walk, by the last block of each column
// of blocks to finish (Note [Outer finish]).
#pragma once
#include "xrt/reducers.cuh"

namespace xrt {
namespace reduce {

constexpr int kBlock = 256;  // threads of every reduction block
constexpr int kUnroll = 4;   // loads in flight per thread

/// The kernels' one argument; the host packs the same 8-byte words (reduce_launch.cpp).
template <int KND, int RND> struct Layout {
  const char* in;
  char* out;                  ///< results (Out), or partial accumulators when splits > 1
  index_t nout;
  index_t kept_size[KND];
  index_t kept_stride[KND];   ///< bytes
  index_t red_size[RND];
  index_t red_stride[RND];    ///< bytes; the last is the run's
  index_t splits;
  index_t piece;
  char* result;               ///< outer walk, splits > 1: the results (Out)
  unsigned* tickets;          ///< outer walk, splits > 1: one per grid column (zeroed)
  ReduceParams params;
};

/// Byte offset of row-major position i of a box.
template <int ND>
__device__ __forceinline__ index_t box_offset(index_t i, const index_t* size,
                                              const index_t* stride) {
  index_t offset = 0;
#pragma unroll
  for (int d = ND - 1; d > 0; --d) {
    index_t q = i / size[d];
    offset += (i - q * size[d]) * stride[d];
    i = q;
  }
  return offset + i * stride[0];
}

template <class T> __device__ __forceinline__ T load(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

template <int Bytes> struct Chunk;
template <> struct Chunk<1> { typedef uint8_t type; };
template <> struct Chunk<2> { typedef uint16_t type; };
template <> struct Chunk<4> { typedef uint32_t type; };
template <> struct Chunk<8> { typedef uint2 type; };
template <> struct Chunk<16> { typedef uint4 type; };

/// N adjacent elements, read as one load (the host checks the alignment).
template <class T, int N> struct Vec {
  typedef typename Chunk<N * sizeof(T)>::type Raw;
  union {
    Raw raw;
    T v[N];
  };
  __device__ __forceinline__ Vec() {}
  __device__ __forceinline__ void load_from(const char* p) {
    raw = *reinterpret_cast<const Raw*>(p);
  }
};

// ---- Combining across threads ----------------------------------------------------------

/// Moves a value of any type between the lanes of a warp, one 32-bit word at a time.
template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_words(T v, Shuffle shuffle) {
  constexpr int W = (sizeof(T) + 3) / 4;
  union {
    T t;
    int w[W];
  } u;
  u.t = v;
#pragma unroll
  for (int k = 0; k < W; ++k) u.w[k] = shuffle(u.w[k]);
  return u.t;
}

template <class T> __device__ __forceinline__ T shuffle_down(T v, int delta) {
  return shuffle_words(v, [delta](int w) { return __shfl_down_sync(0xffffffffu, w, delta); });
}
template <class T> __device__ __forceinline__ T shuffle_up(T v, int delta) {
  return shuffle_words(v, [delta](int w) { return __shfl_up_sync(0xffffffffu, w, delta); });
}
template <class T> __device__ __forceinline__ T shuffle_index(T v, int lane) {
  return shuffle_words(v, [lane](int w) { return __shfl_sync(0xffffffffu, w, lane); });
}

/// Lane 0 gets the combination of the warp's values, in a fixed tree.
template <class R> __device__ __forceinline__ typename R::Acc warp_combine(
    const R& r, typename R::Acc a) {
#pragma unroll
  for (int delta = 16; delta > 0; delta /= 2) a = r.combine(a, shuffle_down(a, delta));
  return a;
}

/// Thread 0 gets the combination of the block's values (every thread must call).
template <class R> __device__ typename R::Acc block_combine(const R& r, typename R::Acc a) {
  typedef typename R::Acc Acc;
  __shared__ __align__(16) unsigned char storage[sizeof(Acc) * (kBlock / 32)];
  Acc* partial = reinterpret_cast<Acc*>(storage);
  a = warp_combine(r, a);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // a previous call's readers are done with `partial`
  if (lane == 0) partial[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < kBlock / 32 ? partial[lane] : r.identity();
    a = warp_combine(r, a);
  }
  return a;
}

template <class R> __device__ __forceinline__ void store_result(
    const R& r, char* out, index_t o, index_t slot, index_t splits, typename R::Acc a) {
  if (splits == 1)
    reinterpret_cast<typename R::Out*>(out)[o] = r.finalize(a, o);
  else
    reinterpret_cast<typename R::Acc*>(out)[slot] = a;
}

// ---- Inner walk: a group per output ----------------------------------------------------

/// This lane's share of elements [begin, end) of a run (element stride `stride` bytes,
/// position of element 0: pos0), the group's lanes interleaved, kUnroll loads in flight.
template <class R, int GROUP>
__device__ __forceinline__ typename R::Acc strided_share(const R& r, const char* base,
                                                         index_t stride, index_t begin,
                                                         index_t end, index_t o,
                                                         index_t pos0, int lane) {
  typedef typename R::In In;
  typedef typename R::Acc Acc;
  Acc lanes[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) lanes[u] = r.identity();
  index_t i = begin + lane;
  for (; i + (kUnroll - 1) * GROUP < end; i += kUnroll * GROUP) {
    In value[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) value[u] = load<In>(base + (i + u * GROUP) * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      lanes[u] = step(r, lanes[u], value[u], o, pos0 + i + u * GROUP);
  }
  for (; i < end; i += GROUP)
    lanes[0] = step(r, lanes[0], load<In>(base + i * stride), o, pos0 + i);
#pragma unroll
  for (int width = kUnroll / 2; width > 0; width /= 2)
#pragma unroll
    for (int u = 0; u < width; ++u) lanes[u] = r.combine(lanes[u], lanes[u + width]);
  return lanes[0];
}

/// The same for a contiguous run, read 16 bytes (VEC elements) at a time from its first
/// aligned element on; the elements before and after go one by one.
template <class R, int VEC, int GROUP>
__device__ __forceinline__ typename R::Acc vector_share(const R& r, const char* base,
                                                        index_t begin, index_t end, index_t o,
                                                        index_t pos0, int lane) {
  typedef typename R::In In;
  typedef typename R::Acc Acc;
  const In* x = reinterpret_cast<const In*>(base);
  index_t misaligned = (reinterpret_cast<unsigned long long>(x + begin) % 16) / sizeof(In);
  index_t first = begin + (misaligned ? VEC - misaligned : 0);
  if (first > end) first = end;
  Acc edges = r.identity();  // the unaligned head and tail (fewer than VEC each)
  index_t i = begin + lane;
  if (i < first) edges = step(r, edges, x[i], o, pos0 + i);
  index_t nvec = (end - first) / VEC;
  const char* v = reinterpret_cast<const char*>(x + first);
  // kUnroll x A accumulators (fewer than VEC for wide accumulators: registers).
  constexpr int A = sizeof(Acc) > 8 ? 1 : VEC < 4 ? VEC : 4;
  Acc lanes[kUnroll][A];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
#pragma unroll
    for (int k = 0; k < A; ++k) lanes[u][k] = r.identity();
  index_t j = lane;
  for (; j + (kUnroll - 1) * GROUP < nvec; j += kUnroll * GROUP) {
    Vec<In, VEC> chunk[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) chunk[u].load_from(v + (j + u * GROUP) * 16);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        index_t at = first + (j + u * GROUP) * VEC + k;
        lanes[u][k % A] = step(r, lanes[u][k % A], chunk[u].v[k], o, pos0 + at);
      }
  }
  for (; j < nvec; j += GROUP) {
    Vec<In, VEC> chunk;
    chunk.load_from(v + j * 16);
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      lanes[0][k % A] = step(r, lanes[0][k % A], chunk.v[k], o, pos0 + first + j * VEC + k);
  }
  i = first + nvec * VEC + lane;
  if (i < end) edges = step(r, edges, x[i], o, pos0 + i);
  // Pairwise: the kUnroll x A accumulators, then the edges.
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
#pragma unroll
    for (int width = A / 2; width > 0; width /= 2)
#pragma unroll
      for (int k = 0; k < width; ++k) lanes[u][k] = r.combine(lanes[u][k], lanes[u][k + width]);
#pragma unroll
  for (int width = kUnroll / 2; width > 0; width /= 2)
#pragma unroll
    for (int u = 0; u < width; ++u) lanes[u][0] = r.combine(lanes[u][0], lanes[u + width][0]);
  return r.combine(lanes[0][0], edges);
}

template <class R, int VEC, int GROUP>
__device__ __forceinline__ typename R::Acc run_share(const R& r, const char* base,
                                                     index_t stride, index_t begin,
                                                     index_t end, index_t o, index_t pos0,
                                                     int lane) {
  if constexpr (VEC > 1) return vector_share<R, VEC, GROUP>(r, base, begin, end, o, pos0, lane);
  else return strided_share<R, GROUP>(r, base, stride, begin, end, o, pos0, lane);
}

/// GROUP threads (32, or the block) per (output, piece) task. Pieces are of elements when
/// the reduced box is one run (RND 1), else of runs. Partials go to out[o * splits + s].
template <class R, int KND, int RND, int VEC, int GROUP>
__device__ void inner(const Layout<KND, RND>& layout) {
  typedef typename R::Acc Acc;
  R r;
  r.p = layout.params;
  const int lane = threadIdx.x % GROUP;
  const index_t per_block = kBlock / GROUP;
  const index_t tasks = layout.nout * layout.splits;
  const index_t run = layout.red_size[RND - 1], stride = layout.red_stride[RND - 1];
  for (index_t task = blockIdx.x * per_block + threadIdx.x / GROUP; task < tasks;
       task += index_t(gridDim.x) * per_block) {
    index_t o = task / layout.splits, s = task - o * layout.splits;
    if (!r.active(o)) continue;  // the same for the whole group
    const char* base = layout.in + box_offset<KND>(o, layout.kept_size, layout.kept_stride);
    Acc acc;
    if constexpr (RND == 1) {
      index_t begin = s * layout.piece;
      index_t end = begin + layout.piece < run ? begin + layout.piece : run;
      acc = run_share<R, VEC, GROUP>(r, base, stride, begin, end, o, 0, lane);
    } else {
      index_t runs = 1;
#pragma unroll
      for (int d = 0; d < RND - 1; ++d) runs *= layout.red_size[d];
      index_t begin = s * layout.piece;
      index_t end = begin + layout.piece < runs ? begin + layout.piece : runs;
      acc = r.identity();
      for (index_t q = begin; q < end; ++q) {
        const char* at = base + box_offset<(RND > 1 ? RND - 1 : 1)>(q, layout.red_size,
                                                                     layout.red_stride);
        acc = r.combine(acc, run_share<R, VEC, GROUP>(r, at, stride, 0, run, o, q * run, lane));
      }
    }
    acc = GROUP == 32 ? warp_combine(r, acc) : block_combine(r, acc);
    if (lane == 0) store_result(r, layout.out, o, o * layout.splits + s, layout.splits, acc);
  }
}

// ---- Outer walk: a thread per OVEC adjacent outputs ------------------------------------

/// An accumulator another block published, read from L2 (L1 is not coherent).
template <class A> __device__ __forceinline__ A load_published(const A* p) {
  union {
    A a;
    unsigned char b[sizeof(A)];
    unsigned w[sizeof(A) / 4 + 1];
  } u;
  if constexpr (sizeof(A) % 4 == 0) {
#pragma unroll
    for (int k = 0; k < int(sizeof(A) / 4); ++k)
      u.w[k] = __ldcg(reinterpret_cast<const unsigned*>(p) + k);
  } else {
#pragma unroll
    for (int k = 0; k < int(sizeof(A)); ++k)
      u.b[k] = __ldcg(reinterpret_cast<const unsigned char*>(p) + k);
  }
  return u.a;
}

// Note [Outer finish]: the blocks of one grid column (blockIdx.x) hold the same outputs'
// pieces (blockIdx.y). Each publishes its partial accumulators, then takes a ticket; the
// block that takes the last one combines the column's pieces in piece order, from the
// identity, and writes the results: the same operations in the same order as a second
// launch of Partials<R>, so the same bits, without that launch.
template <class R, int KND, int RND, int OVEC>
__device__ void outer_finish(const R& r, const Layout<KND, RND>& layout) {
  typedef typename R::Acc Acc;
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(layout.tickets + blockIdx.x, 1u) == unsigned(layout.splits - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  const Acc* partials = reinterpret_cast<const Acc*>(layout.out);
  const index_t threads = layout.nout / OVEC, splits = layout.splits, nout = layout.nout;
  // The finish is a latency chain at the end of the launch (one finishing block per
  // column): the thread's OVEC outputs' loads of U pieces go out together, up to 128
  // bytes of them (sum over axis 0 of 16384^2 float32, 66 pieces: 2% of the launch when
  // each output read kUnroll pieces at a time).
  constexpr int U = 128 / (int(sizeof(Acc)) * OVEC) > 1 ? 128 / (int(sizeof(Acc)) * OVEC) : 1;
  for (index_t t = blockIdx.x * index_t(kBlock) + threadIdx.x; t < threads;
       t += index_t(gridDim.x) * kBlock) {
    const index_t o = t * OVEC;
    Acc acc[OVEC];
#pragma unroll
    for (int k = 0; k < OVEC; ++k) acc[k] = r.identity();
    index_t s = 0;
    for (; s + U <= splits; s += U) {
      Acc v[U][OVEC];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int k = 0; k < OVEC; ++k) v[u][k] = load_published(partials + (s + u) * nout + o + k);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int k = 0; k < OVEC; ++k) acc[k] = r.combine(acc[k], v[u][k]);
    }
    for (; s < splits; ++s)
#pragma unroll
      for (int k = 0; k < OVEC; ++k)
        acc[k] = r.combine(acc[k], load_published(partials + s * nout + o + k));
#pragma unroll
    for (int k = 0; k < OVEC; ++k)
      if (r.active(o + k))
        reinterpret_cast<typename R::Out*>(layout.result)[o + k] = r.finalize(acc[k], o + k);
  }
}


/// Walks pieces of the reduced box in row-major order; blockIdx.y is the piece. OVEC > 1:
/// outputs o .. o + OVEC - 1 are adjacent in memory (the host checks sizes and alignment).
/// Partials go to out[s * nout + o].
template <class R, int KND, int RND, int OVEC>
__device__ void outer(const Layout<KND, RND>& layout) {
  typedef typename R::In In;
  typedef typename R::Acc Acc;
  R r;
  r.p = layout.params;
  const index_t s = blockIdx.y;
  const index_t threads = layout.nout / OVEC;
  index_t count = 1;
#pragma unroll
  for (int d = 0; d < RND; ++d) count *= layout.red_size[d];
  const index_t begin = s * layout.piece;
  const index_t end = begin + layout.piece < count ? begin + layout.piece : count;
  for (index_t t = blockIdx.x * index_t(kBlock) + threadIdx.x; t < threads;
       t += index_t(gridDim.x) * kBlock) {
    const index_t o = t * OVEC;
    bool any_active = false;
#pragma unroll
    for (int k = 0; k < OVEC; ++k) any_active |= r.active(o + k);
    if (!any_active) continue;
    const char* base = layout.in + box_offset<KND>(o, layout.kept_size, layout.kept_stride);
    Acc acc[OVEC];
#pragma unroll
    for (int k = 0; k < OVEC; ++k) acc[k] = r.identity();
    if constexpr (RND == 1) {
      const index_t stride = layout.red_stride[0];
      index_t i = begin;
      for (; i + kUnroll <= end; i += kUnroll) {
        Vec<In, OVEC> chunk[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) chunk[u].load_from(base + (i + u) * stride);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int k = 0; k < OVEC; ++k)
            acc[k] = step(r, acc[k], chunk[u].v[k], o + k, i + u);
      }
      for (; i < end; ++i) {
        Vec<In, OVEC> chunk;
        chunk.load_from(base + i * stride);
#pragma unroll
        for (int k = 0; k < OVEC; ++k) acc[k] = step(r, acc[k], chunk.v[k], o + k, i);
      }
    } else if (begin < end) {
      // An odometer over the reduced box from `begin`.
      index_t index[RND];
      index_t offset = 0, rest = begin;
#pragma unroll
      for (int d = RND - 1; d >= 0; --d) {
        index[d] = rest % layout.red_size[d];
        rest /= layout.red_size[d];
        offset += index[d] * layout.red_stride[d];
      }
      for (index_t i = begin; i < end; ++i) {
        Vec<In, OVEC> chunk;
        chunk.load_from(base + offset);
#pragma unroll
        for (int k = 0; k < OVEC; ++k) acc[k] = step(r, acc[k], chunk.v[k], o + k, i);
#pragma unroll
        for (int d = RND - 1; d >= 0; --d) {
          offset += layout.red_stride[d];
          if (++index[d] < layout.red_size[d]) break;
          offset -= layout.red_size[d] * layout.red_stride[d];
          index[d] = 0;
        }
      }
    }
#pragma unroll
    for (int k = 0; k < OVEC; ++k)
      if (r.active(o + k))
        store_result(r, layout.out, o + k, s * layout.nout + o + k, layout.splits, acc[k]);
  }
  if (layout.splits > 1) outer_finish<R, KND, RND, OVEC>(r, layout);
}

}  // namespace reduce
}  // namespace xrt
