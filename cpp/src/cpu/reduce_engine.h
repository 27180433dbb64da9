// cpp/src/cpu/reduce_engine.h: the one engine behind every reducing CPU kernel.
//
// A reducer (a row of the table in reduce_kernels.cpp) says what to compute:
//
//   struct Reducer {
//     using In, Acc, Out;                      // element, accumulator, result types
//     static constexpr bool kIndexed;          // Acc carries a position (argmax, argmin)
//     Acc identity() const;
//     Acc map(In v, int64_t out, int64_t position) const;  // one element of output `out`
//     Acc combine(Acc a, Acc b) const;         // a holds elements that come before b's
//     Out finalize(Acc a, int64_t count, int64_t out) const;
//     Acc run(const In* x, int64_t n, int64_t stride, int64_t position) const;  // optional
//   };
//
// and the engine decides how to walk memory:
// - The kept axes (one output each, row-major: the output is contiguous) and the reduced
//   axes are merged into boxes (core/host/reduce_plan.h, shared with the CUDA walks).
//   Unless the reducer is indexed, the reduced axes are walked in memory order (sorted by
//   stride, negative strides flipped).
// - Inner strategy: each output reduces the runs of its reduced box. A contiguous run goes
//   to the reducer's own `run` if it has one, else to `lanes`: kLanes independent
//   accumulators in a fixed order, halved pairwise above a leaf, which the compiler
//   vectorises and which keeps float sums accurate (error O(log n), as NumPy's).
// - Outer strategy: when the last kept axis is contiguous (axis=0 of a C-ordered matrix),
//   rows along it are combined into a row of accumulators, vectorised along the row.
// - Note [Deterministic reductions]: work is cut into tasks by sizes alone, never by the
//   thread count. A large reduced box is split into fixed chunks whose partial results
//   are combined in chunk order, so every result is bit-identical however many threads
//   ran; from kMinParallel elements on, the tasks are shared among the threads.
// - The float32/float64 loops are compiled for AVX-512, AVX2 and baseline x86-64 and
//   picked at load time; the order of operations is the same in every clone.
#pragma once
#include <algorithm>
#include <cstdint>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/host/reduce_plan.h"
#include "core/host/thread_pool.h"
#include "xpuruntime/tensor.h"

namespace xrt::cpu::reduce {

using host::parallel_for;
using host::reduce::Box;
using host::reduce::kept_axes;

inline constexpr int64_t kChunk = 1 << 16;          // reduced elements per task (about)
inline constexpr int64_t kMinTaskWork = 1 << 15;    // elements per task, at least
inline constexpr int64_t kMinParallel = 1 << 21;    // elements below which one thread works
inline constexpr int64_t kRowBlockBytes = 16 << 10; // accumulators of an outer-strategy task
inline constexpr int64_t kMaxRowChunks = 16;        // row chunks of the outer strategy

template <class T> constexpr bool kFloatLike =
    std::is_floating_point_v<T> || std::is_same_v<T, std::complex<float>> ||
    std::is_same_v<T, std::complex<double>>;

/// The float32/float64 loops are cloned per instruction set.
template <class R> constexpr bool kCloned =
    std::is_same_v<typename R::In, float> || std::is_same_v<typename R::In, double>;

/// Independent accumulators of a contiguous run, 8 to 64: four 512-bit vectors' worth for
/// the cloned float32/float64 loops (enough in flight to stream from memory at full
/// speed), two for the others.
template <class R> constexpr int kLanes = [] {
  int lanes = (kCloned<R> ? 256 : 128) / static_cast<int>(sizeof(typename R::Acc));
  return lanes < 8 ? 8 : lanes > 64 ? 64 : lanes;
}();

/// Elements per lane in a leaf of the pairwise sum: NumPy's 16, or 32 for the cloned loops
/// (fewer lane combinations per element; the error bound grows by 16 eps).
template <class R> constexpr int kLeafDepth = kCloned<R> ? 32 : 16;

#define XRT_REDUCE_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

// ---- Runs -------------------------------------------------------------------------------

// The leaf of `lanes`: at most kLeafDepth * K elements into K accumulators.
template <class R, bool Contiguous>
__attribute__((always_inline)) inline typename R::Acc lanes_leaf_body(
    const R& r, const typename R::In* x, int64_t n, int64_t stride, int64_t out) {
  using Acc = typename R::Acc;
  constexpr int K = Contiguous ? kLanes<R> : 8;
  auto at = [&](int64_t i) { return Contiguous ? x[i] : x[i * stride]; };
  if (n < K) {
    Acc a = r.identity();
    for (int64_t i = 0; i < n; ++i) a = r.combine(a, r.map(at(i), out, 0));
    return a;
  }
  Acc acc[K];
  for (int j = 0; j < K; ++j) acc[j] = r.identity();
  int64_t i = 0;
  for (; i + K <= n; i += K)
    for (int j = 0; j < K; ++j) acc[j] = r.combine(acc[j], r.map(at(i + j), out, 0));
  for (int j = 0; i < n; ++i, ++j) acc[j] = r.combine(acc[j], r.map(at(i), out, 0));
  for (int width = K / 2; width > 0; width /= 2)
    for (int j = 0; j < width; ++j) acc[j] = r.combine(acc[j], acc[j + width]);
  return acc[0];
}

template <class R, bool Contiguous>
typename R::Acc lanes_leaf(const R& r, const typename R::In* x, int64_t n, int64_t stride,
                           int64_t out) {
  return lanes_leaf_body<R, Contiguous>(r, x, n, stride, out);
}

template <class R, bool Contiguous>
XRT_REDUCE_CLONES typename R::Acc lanes_leaf_cloned(const R& r, const typename R::In* x,
                                                    int64_t n, int64_t stride, int64_t out) {
  return lanes_leaf_body<R, Contiguous>(r, x, n, stride, out);
}

/// Reduces n elements x[0], x[stride], ...: leaves of kLeafDepth * K elements, halved
/// pairwise above (split points are multiples of the lane count K).
template <class R, bool Contiguous>
__attribute__((noinline)) typename R::Acc lanes(const R& r, const typename R::In* x, int64_t n,
                                                int64_t stride, int64_t out) {
  constexpr int K = Contiguous ? kLanes<R> : 8;
  if (n > kLeafDepth<R> * K) {
    int64_t half = n / 2 / K * K;
    auto a = lanes<R, Contiguous>(r, x, half, stride, out);
    return r.combine(a, lanes<R, Contiguous>(r, x + half * stride, n - half, stride, out));
  }
  if constexpr (kCloned<R> && Contiguous)
    return lanes_leaf_cloned<R, Contiguous>(r, x, n, stride, out);
  else
    return lanes_leaf<R, Contiguous>(r, x, n, stride, out);
}

/// One run of n elements, stride in elements; `position` is the index of its first
/// element among the output's reduced elements. A reducer with a `run` member reduces its
/// runs itself; strided runs are pairwise only where rounding makes the order matter.
template <class R>
typename R::Acc reduce_run(const R& r, const typename R::In* x, int64_t n, int64_t stride,
                           int64_t out, int64_t position) {
  if constexpr (requires { r.run(x, n, stride, position); }) {
    return r.run(x, n, stride, position);
  } else {
    if (stride == 1) return lanes<R, true>(r, x, n, 1, out);
    if constexpr (kFloatLike<typename R::Acc>) {
      return lanes<R, false>(r, x, n, stride, out);
    } else {
      typename R::Acc a = r.identity();
      for (int64_t i = 0; i < n; ++i) a = r.combine(a, r.map(x[i * stride], out, 0));
      return a;
    }
  }
}

// ---- Layout -----------------------------------------------------------------------------

/// Walks the element offsets of consecutive flat indices of a box (an odometer).
struct BoxCursor {
  const Box& box;
  int64_t index[64] = {};
  int64_t offset = 0;
  BoxCursor(const Box& b, int64_t start) : box(b) {
    for (int d = box.ndim() - 1; d >= 0; --d) {
      index[d] = start % box.shape[d];
      start /= box.shape[d];
      offset += index[d] * box.strides[d];
    }
  }
  void next() {
    for (int d = box.ndim() - 1; d >= 0; --d) {
      offset += box.strides[d];
      if (++index[d] < box.shape[d]) return;
      offset -= box.shape[d] * box.strides[d];
      index[d] = 0;
    }
  }
};

/// Calls fn(offset, ordinal) for the sub-boxes of dimensions [walk, ndim) of b whose
/// outermost index lies in [row0, row1), in row-major order; ordinal counts them from the
/// start of the box.
template <class F> void for_each_sub_box(const Box& b, int walk, int64_t row0, int64_t row1,
                                         F&& fn) {
  int64_t per_row = 1;
  for (int d = 1; d < walk; ++d) per_row *= b.shape[d];
  int64_t index[64] = {};
  for (int64_t row = row0; row < row1; ++row) {
    int64_t offset = row * b.strides[0];
    for (int64_t k = 0; k < per_row; ++k) {
      fn(offset, row * per_row + k);
      for (int d = walk - 1; d >= 1; --d) {
        offset += b.strides[d];
        if (++index[d] < b.shape[d]) break;
        offset -= b.shape[d] * b.strides[d];
        index[d] = 0;
      }
    }
  }
}

// acc[j] = combine(acc[j], map(row[j])) for a row of n outputs starting at output `out`.
template <class R>
__attribute__((always_inline)) inline void accumulate_row_body(
    const R& r, typename R::Acc* __restrict acc, const typename R::In* __restrict row,
    int64_t n, int64_t out, int64_t position) {
  for (int64_t j = 0; j < n; ++j) acc[j] = r.combine(acc[j], r.map(row[j], out + j, position));
}

template <class R>
void accumulate_row(const R& r, typename R::Acc* acc, const typename R::In* row, int64_t n,
                    int64_t out, int64_t position) {
  accumulate_row_body(r, acc, row, n, out, position);
}

template <class R>
XRT_REDUCE_CLONES void accumulate_row_cloned(const R& r, typename R::Acc* acc,
                                             const typename R::In* row, int64_t n,
                                             int64_t out, int64_t position) {
  accumulate_row_body(r, acc, row, n, out, position);
}

// ---- The engine -------------------------------------------------------------------------

/// parallel_for over n tasks, but a reduction of fewer than kMinParallel elements (`work`)
/// runs here directly: waking another thread costs more than it saves. The tasks are the
/// same either way, so the result is too.
template <class F> void run_tasks(int64_t n, int64_t grain, int64_t work, F&& fn) {
  if (n <= grain || work < kMinParallel) return fn(int64_t(0), n);
  parallel_for(n, grain, fn);
}

/// Reduces x over axes (sorted, non-negative) into out, the contiguous result of the
/// kept axes in row-major order.
template <class R> class Reduction {
 public:
  using In = typename R::In;
  using Acc = typename R::Acc;
  using Out = typename R::Out;

  Reduction(const R& r, const Tensor& x, const Dims& axes, Out* out)
      : r_(r), out_(out), reduced_(x, axes, !R::kIndexed, base_offset_),
        kept_(x, kept_axes(x, axes), false, base_offset_) {
    base_ = reinterpret_cast<const In*>(x.data()) + base_offset_;
  }

  void run() {
    int64_t nout = kept_.numel;
    if (nout == 0) return;
    if (reduced_.numel == 0) {
      for (int64_t i = 0; i < nout; ++i) out_[i] = r_.finalize(r_.identity(), 0, i);
      return;
    }
    int last = kept_.ndim() - 1;
    bool inner_contiguous = reduced_.strides[reduced_.ndim() - 1] == 1;
    bool outer_contiguous = kept_.strides[last] == 1 && kept_.shape[last] >= 8;
    if (!inner_contiguous && outer_contiguous) run_outer();
    else run_inner();
  }

 private:
  // Rows [row0, row1) of the reduced box for the output whose elements start at `at`.
  Acc reduce_rows(const In* at, int64_t row0, int64_t row1, int64_t out) const {
    const Box& b = reduced_;
    int last = b.ndim() - 1;
    if (last == 0)
      return reduce_run(r_, at + row0 * b.strides[0], row1 - row0, b.strides[0], out, row0);
    int64_t run = b.shape[last];
    Acc a = r_.identity();
    for_each_sub_box(b, last, row0, row1, [&](int64_t offset, int64_t ordinal) {
      a = r_.combine(a, reduce_run(r_, at + offset, run, b.strides[last], out, ordinal * run));
    });
    return a;
  }

  // Inner strategy: outputs x chunks of the reduced box's rows.
  void run_inner() {
    const Box& b = reduced_;
    int64_t nout = kept_.numel;
    int64_t rows = b.shape[0];
    int64_t per_chunk = b.ndim() == 1 ? kChunk : std::max<int64_t>(1, kChunk / (b.numel / rows));
    int64_t chunks = (rows + per_chunk - 1) / per_chunk;
    if (chunks == 1) {
      int64_t grain = std::max<int64_t>(1, kMinTaskWork / b.numel);
      run_tasks(nout, grain, nout * b.numel, [&](int64_t begin, int64_t end) {
        BoxCursor cursor(kept_, begin);
        for (int64_t i = begin; i < end; ++i, cursor.next())
          out_[i] = r_.finalize(reduce_rows(base_ + cursor.offset, 0, rows, i), b.numel, i);
      });
      return;
    }
    std::vector<Acc> partial(static_cast<size_t>(nout * chunks));
    run_tasks(nout * chunks, 1, nout * b.numel, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        int64_t i = t / chunks, c = t % chunks;
        BoxCursor cursor(kept_, i);
        partial[t] = reduce_rows(base_ + cursor.offset, c * per_chunk,
                                 std::min(rows, (c + 1) * per_chunk), i);
      }
    });
    combine_partials(partial, chunks);
  }

  // Outer strategy: blocks of contiguous outputs x chunks of the reduced box's rows; every
  // reduced element position contributes one row to the block's accumulators. Blocks are
  // as wide as kRowBlockBytes of accumulators allow, so that a task streams through whole
  // rows; rows are split (into at most kMaxRowChunks chunks) only when the blocks alone
  // are too few tasks for the cores and the work is worth sharing.
  void run_outer() {
    constexpr int64_t block = kRowBlockBytes / sizeof(Acc);
    const Box& b = reduced_;
    int64_t nout = kept_.numel, width = kept_.shape[kept_.ndim() - 1];
    int64_t outer = nout / width, blocks = (width + block - 1) / block;
    int64_t rows = b.shape[0], per_row = b.numel / rows;
    int64_t chunks = 1;
    if (outer * blocks < 8 && nout * b.numel >= kMinParallel)
      chunks = std::clamp<int64_t>(std::min(width, block) * b.numel / kChunk, 1,
                                   std::min(rows, kMaxRowChunks));
    int64_t per_chunk = (rows + chunks - 1) / chunks;
    chunks = (rows + per_chunk - 1) / per_chunk;
    std::vector<Acc> partial(chunks > 1 ? static_cast<size_t>(nout * chunks) : 0);
    int64_t work = std::min(width, block) * per_chunk * per_row;
    int64_t grain = std::max<int64_t>(1, kMinTaskWork / work);
    run_tasks(outer * blocks * chunks, grain, nout * b.numel, [&](int64_t begin, int64_t end) {
      Acc acc[block];
      for (int64_t t = begin; t < end; ++t) {
        int64_t c = t % chunks, k = t / chunks % blocks, o = t / chunks / blocks;
        int64_t first = o * width + k * block;
        int64_t n = std::min(block, width - k * block);
        const In* row = base_ + BoxCursor(kept_, first).offset;
        for (int64_t j = 0; j < n; ++j) acc[j] = r_.identity();
        for_each_sub_box(b, b.ndim(), c * per_chunk, std::min(rows, (c + 1) * per_chunk),
                         [&](int64_t offset, int64_t position) {
          if constexpr (kCloned<R>)
            accumulate_row_cloned(r_, acc, row + offset, n, first, position);
          else
            accumulate_row(r_, acc, row + offset, n, first, position);
        });
        for (int64_t j = 0; j < n; ++j) {
          if (chunks == 1) out_[first + j] = r_.finalize(acc[j], b.numel, first + j);
          else partial[(first + j) * chunks + c] = acc[j];
        }
      }
    });
    if (chunks > 1) combine_partials(partial, chunks);
  }

  // out[i] = finalize(partial[i * chunks] + ... + partial[i * chunks + chunks - 1]).
  void combine_partials(const std::vector<Acc>& partial, int64_t chunks) {
    int64_t nout = kept_.numel;
    for (int64_t i = 0; i < nout; ++i) {
      Acc a = partial[i * chunks];
      for (int64_t c = 1; c < chunks; ++c) a = r_.combine(a, partial[i * chunks + c]);
      out_[i] = r_.finalize(a, reduced_.numel, i);
    }
  }

  const R& r_;
  Out* out_;
  int64_t base_offset_ = 0;
  Box reduced_, kept_;
  const In* base_;
};

/// Runs reducer r over x's axes into out (contiguous, kept axes in row-major order).
template <class R>
void reduce(const R& r, const Tensor& x, const Dims& axes, typename R::Out* out) {
  Reduction<R>(r, x, axes, out).run();
}

}  // namespace xrt::cpu::reduce
