// cpp/src/cpu/norm_kernels.cpp: the CPU kernels of the row ops (softmax, log_softmax,
// layer_norm, rms_norm; Note [Row ops] in core/norm_ops.cpp), built once per target ISA
// like math_kernels.cpp: this file is the baseline build, norm_kernels_avx2.cpp and
// norm_kernels_avx512.cpp include it again with -march flags and their own namespace.
//
// Rows go to the thread pool in chunks; float16 and bfloat16 rows are computed in float
// buffers. A row is a few passes over memory that stays in
// cache: its statistics in kLanes running accumulators (a fixed order: the same bits for
// any thread count, and loops the compiler vectorises without reassociating), exp through
// libmvec's SIMD versions (vector_math.h), then one pass that writes the result.
#include "cpu/vector_math.h"
// (vector_math.h first: its declarations must precede <cmath>'s uses.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/host/thread_pool.h"
#include "cpu/kernels.h"
#include "xpuruntime/half.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#ifndef XRT_ISA_NS
#define XRT_ISA_NS baseline
#endif

namespace xrt::cpu::XRT_ISA_NS {
namespace {

constexpr int kLanes = 16;

template <class T> T row_max(const T* x, int64_t n) {
  T m[kLanes];
  for (int j = 0; j < kLanes; ++j) m[j] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
  for (; i < n; ++i) m[0] = x[i] > m[0] ? x[i] : m[0];
  T r = m[0];
  for (int j = 1; j < kLanes; ++j) r = m[j] > r ? m[j] : r;
  return r;
}

/// The sum of f(x[i]) in kLanes accumulators, combined in order.
template <class T, class F> T row_sum(const T* x, int64_t n, F f) {
  T s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) s[j] += f(x[i + j]);
  for (; i < n; ++i) s[0] += f(x[i]);
  T r = 0;
  for (int j = 0; j < kLanes; ++j) r += s[j];
  return r;
}

/// The range of x where libmvec's vector exp stays on its fast path (about +-87 for float,
/// +-708 for double: beyond it, its result may overflow or underflow and it calls the scalar
/// function lane by lane), and where exp(x) is exactly 0 in T.
template <class T> constexpr T exp_fast_low() { return sizeof(T) == 4 ? T(-87) : T(-708); }
template <class T> constexpr T exp_zero() { return sizeof(T) == 4 ? T(-104) : T(-746); }

template <class T> void softmax_row(const T* x, T* y, int64_t n, bool log) {
  // A row holding NaN gives NaN everywhere (its exp does); an all -inf row gives NaN, as
  // exp(x - max) / sum does when composed.
  // Note: masked scores (-inf, as attention masks write them) would send each vector of
  // them down libmvec's scalar path: a causal 4x64x64 softmax took 78 us where a dense one
  // takes 7. x - max is at most 0, so the vector loop takes exp of max(x - max, low),
  // inside the fast range; then elements below low become 0 (-inf among them) in a second
  // vector loop, and the rare ones whose exp is a subnormal (between exp_zero and low) get
  // the scalar exp. NaN stays NaN.
  const T m = row_max(x, n);
  const T low = exp_fast_low<T>(), zero = exp_zero<T>();
  int below = 0, subnormal = 0;  // ints: an or of bools would keep the loop scalar
  for (int64_t i = 0; i < n; ++i) {
    const T d = x[i] - m;
    below |= int(d < low);
    subnormal |= int(d < low) & int(d >= zero);
    y[i] = d < low ? low : d;
  }
  // Note: the exp in a loop of its own. With the clamp in the same loop, scores far below
  // the max (-1000) still reached libmvec's scalar underflow path (perf: xflowf and the
  // scalar expf): a causal 4x64x64 softmax took 38 us (-inf 21) where a dense one takes 9;
  // now 9.5 for both.
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(y[i]);
  if (below)
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m < low ? T(0) : y[i];
  if (subnormal)
    for (int64_t i = 0; i < n; ++i) {
      const T d = x[i] - m;
      if (d < low && d >= zero) y[i] = std::exp(d);
    }
  const T s = row_sum(y, n, [](T v) { return v; });
  if (log) {
    const T ls = std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - ls;
  } else {
    const T inv = T(1) / s;
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

template <class T>
void norm_row(const T* x, T* y, int64_t n, const T* w, const T* b, T eps, bool rms) {
  T mean = 0;
  T inv;
  if (rms) {
    inv = T(1) / std::sqrt(row_sum(x, n, [](T v) { return v * v; }) / T(n) + eps);
  } else {
    mean = row_sum(x, n, [](T v) { return v; }) / T(n);
    // The variance from the deviations (two passes: no cancellation).
    T var = row_sum(x, n, [mean](T v) { return (v - mean) * (v - mean); }) / T(n);
    inv = T(1) / std::sqrt(var + eps);
  }
  if (w && b)
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * w[i] + b[i];
  else if (w)
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * w[i];
  else if (b)
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv + b[i];
  else
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv;
}

/// Rows per task: about `elements`, at least one row. A softmax's exp costs more per
/// element than a norm's arithmetic, so its tasks are smaller.
int64_t grain(int64_t cols, int64_t elements) {
  return std::max<int64_t>(1, elements / std::max<int64_t>(cols, 1));
}

enum class RowOp { Softmax, LogSoftmax, LayerNorm, RmsNorm };

template <RowOp OP, class T> void run_row(const T* x, T* y, int64_t n, const T* w, const T* b,
                                          T eps) {
  if constexpr (OP == RowOp::Softmax || OP == RowOp::LogSoftmax)
    softmax_row(x, y, n, OP == RowOp::LogSoftmax);
  else
    norm_row(x, y, n, w, b, eps, OP == RowOp::RmsNorm);
}

/// S: the stored type; C: the computing one (float for float16 and bfloat16, whose rows go
/// through float buffers).
template <RowOp OP, class S, class C> void run_typed(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  const S* in = reinterpret_cast<const S*>(x.data());
  S* out = reinterpret_cast<S*>(call.out().data());
  const int64_t flags = call.attrs->step.i;
  const S* rs = nullptr;  // add_norm: the residual, and x + residual out
  S* sum = nullptr;
  const S* ws = nullptr;
  const S* bs = nullptr;
  int next = 1;
  if (flags & 4) {
    rs = reinterpret_cast<const S*>(call.in(next++).data());
    sum = reinterpret_cast<S*>(call.out(1).data());
  }
  if (flags & 1) ws = reinterpret_cast<const S*>(call.in(next++).data());
  if (flags & 2) bs = reinterpret_cast<const S*>(call.in(next++).data());
  const C eps = static_cast<C>(call.attrs->value.c.real());
  constexpr bool kSoftmax = OP == RowOp::Softmax || OP == RowOp::LogSoftmax;
  const int64_t per_task = kSoftmax ? int64_t(1) << 12 : int64_t(1) << 15;
  if constexpr (std::is_same_v<S, C>) {
    host::parallel_for(rows, grain(cols, per_task), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const S* xr = in + r * cols;
        if (rs) {  // the sum first, as the Add would write it; then its norm
          S* sr = sum + r * cols;
          const S* rr = rs + r * cols;
          for (int64_t i = 0; i < cols; ++i) sr[i] = xr[i] + rr[i];
          xr = sr;
        }
        run_row<OP>(xr, out + r * cols, cols, ws, bs, eps);
      }
    });
  } else {
    std::vector<C> wc(ws ? cols : 0), bc(bs ? cols : 0);
    for (int64_t i = 0; i < int64_t(wc.size()); ++i) wc[i] = C(ws[i]);
    for (int64_t i = 0; i < int64_t(bc.size()); ++i) bc[i] = C(bs[i]);
    host::parallel_for(rows, grain(cols, per_task), [&](int64_t begin, int64_t end) {
      std::vector<C> xr(cols), yr(cols);
      for (int64_t r = begin; r < end; ++r) {
        if (rs) {
          for (int64_t i = 0; i < cols; ++i) {
            S v = S(C(in[r * cols + i]) + C(rs[r * cols + i]));
            sum[r * cols + i] = v;
            xr[i] = C(v);
          }
        } else {
          for (int64_t i = 0; i < cols; ++i) xr[i] = C(in[r * cols + i]);
        }
        run_row<OP>(xr.data(), yr.data(), cols, ws ? wc.data() : nullptr,
                    bs ? bc.data() : nullptr, eps);
        for (int64_t i = 0; i < cols; ++i) out[r * cols + i] = S(yr[i]);
      }
    });
  }
}

template <RowOp OP> void row_kernel(const KernelCall& call) {
  switch (call.in(0).dtype()) {
    case DType::Float64: return run_typed<OP, double, double>(call);
    case DType::Float16: return run_typed<OP, Float16, float>(call);
    case DType::BFloat16: return run_typed<OP, BFloat16, float>(call);
    default: return run_typed<OP, float, float>(call);
  }
}

// ---- attention (Note [CPU attention] in core/norm_ops.cpp) -------------------------------

constexpr int kQueryRows = 8;  // query rows per register tile

/// Columns per register tile: two 64-byte vectors of T (8 x 2 accumulators of AVX-512).
template <class T> constexpr int tile_cols() { return 128 / int(sizeof(T)); }

template <class T> inline T multiply_add(T a, T b, T c) {
#ifdef __FMA__
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

/// c[r][0..W) = sum over p < depth of a[r * lda + p] * b[p * ldb + 0..W), r < kQueryRows:
/// a kQueryRows x W tile kept in registers while the depth streams through.
template <class T>
inline void tile_product(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t depth,
                         T* c, int64_t ldc) {
  constexpr int W = tile_cols<T>();
  T acc[kQueryRows][W] = {};
  for (int64_t p = 0; p < depth; ++p) {
    const T* bp = b + p * ldb;
    for (int r = 0; r < kQueryRows; ++r) {
      const T x = a[r * lda + p];
      for (int j = 0; j < W; ++j) acc[r][j] = multiply_add(x, bp[j], acc[r][j]);
    }
  }
  for (int r = 0; r < kQueryRows; ++r)
    for (int j = 0; j < W; ++j) c[r * ldc + j] = acc[r][j];
}

/// A 4-D operand's element strides and first element.
template <class T> struct Operand4 {
  const T* data;
  int64_t s[4];
  explicit Operand4(const Tensor& t) : data(reinterpret_cast<const T*>(t.data())) {
    for (int d = 0; d < 4; ++d) s[d] = t.strides()[d];
  }
  const T* at(int64_t b, int64_t h, int64_t i) const {
    return data + b * s[0] + h * s[1] + i * s[2];
  }
};

#if defined(__AVX512F__)
/// dst[p * ldd + j] = src[j * lds + p] for p, j < 16: a 16 x 16 block of floats transposed
/// in registers (pairs of rows interleaved by 4 and 8 bytes, then 16-byte lanes gathered).
inline void transpose_block16(const float* src, int64_t lds, float* dst, int64_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; ++i) {  // per 16-byte lane L: rows 2i, 2i+1 at columns 4L.., 4L+2..
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  auto lo = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  auto hi = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  for (int g = 0; g < 4; ++g) {  // r[4g + c], lane L: column 4L + c of rows 4g..4g+3
    r[4 * g] = lo(t[4 * g], t[4 * g + 2]);
    r[4 * g + 1] = hi(t[4 * g], t[4 * g + 2]);
    r[4 * g + 2] = lo(t[4 * g + 1], t[4 * g + 3]);
    r[4 * g + 3] = hi(t[4 * g + 1], t[4 * g + 3]);
  }
  for (int c = 0; c < 4; ++c) {  // column 4L + c: lane L of r[c], r[4 + c], r[8 + c], r[12 + c]
    const __m512 u0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44);
    const __m512 u1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
    const __m512 v0 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
    const __m512 v1 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
    _mm512_storeu_ps(dst + (0 + c) * ldd, _mm512_shuffle_f32x4(u0, v0, 0x88));
    _mm512_storeu_ps(dst + (4 + c) * ldd, _mm512_shuffle_f32x4(u0, v0, 0xDD));
    _mm512_storeu_ps(dst + (8 + c) * ldd, _mm512_shuffle_f32x4(u1, v1, 0x88));
    _mm512_storeu_ps(dst + (12 + c) * ldd, _mm512_shuffle_f32x4(u1, v1, 0xDD));
  }
}
#endif

/// Kᵀ's blocks of 16 keys by 16 dimensions laid out in registers where the ISA allows it
/// (float keys of unit stride): returns the keys and dimensions so covered (0, 0 if none);
/// the caller lays out the rest. Scalar stores cost 2.8 of the `rows` kernel's 22 us on 4
/// heads of 64 x 64.
template <class T>
std::pair<int64_t, int64_t> lay_out_key_blocks(const T* k0, int64_t key_stride,
                                               int64_t dim_stride, int64_t skv, int64_t d,
                                               T* kt, int64_t ldk) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    const int64_t keys = skv / 16 * 16, dims = d / 16 * 16;
    if (dim_stride != 1 || keys == 0 || dims == 0) return {0, 0};
    for (int64_t j = 0; j < keys; j += 16)
      for (int64_t p = 0; p < dims; p += 16)
        transpose_block16(k0 + j * key_stride + p, key_stride, kt + p * ldk + j, ldk);
    return {keys, dims};
  }
#endif
  (void)k0, (void)key_stride, (void)dim_stride, (void)skv, (void)d, (void)kt, (void)ldk;
  return {0, 0};
}

template <class T> void attention_typed(const KernelCall& call) {
  const Tensor& qt = call.in(0);
  const Operand4<T> q(qt), k(call.in(1)), v(call.in(2));
  const bool masked = call.num_inputs > 3;
  const Operand4<T> mask(call.in(masked ? 3 : 0));
  T* out = reinterpret_cast<T*>(call.out().data());
  const Dims& os = call.out().strides();  // dense in some order, the last axis last
  const int64_t batch = qt.shape()[0], heads = qt.shape()[1], sq = qt.shape()[2];
  const int64_t d = qt.shape()[3], skv = call.in(1).shape()[2], dv = call.in(2).shape()[3];
  const T scale = static_cast<T>(call.attrs->value.c.real());
  const bool causal = call.attrs->step.i != 0;
  constexpr int W = tile_cols<T>();
  const int64_t skv_padded = (skv + W - 1) / W * W, dv_padded = (dv + W - 1) / W * W;
  // Tasks: (batch, head, a stretch of query rows); a head splits only when there are too
  // few heads to go round the threads (each of its tasks lays out K and V again).
  const int64_t pairs = batch * heads;
  const int64_t want = 2 * int64_t(host::num_threads());
  int64_t stretch = sq;
  if (pairs < want)
    stretch = std::max<int64_t>(4 * kQueryRows, (sq * pairs + want - 1) / want);
  stretch = (stretch + kQueryRows - 1) / kQueryRows * kQueryRows;
  const int64_t per_pair = (sq + stretch - 1) / stretch;
  host::parallel_for(pairs * per_pair, 1, [&](int64_t begin, int64_t end) {
    // Kᵀ and V laid out, a tile of query rows, their scores, probabilities and outputs:
    // one scratch kept per thread up to 1 MB (no allocation per call), a larger one (long
    // sequences) for this call only.
    thread_local std::vector<T> kept;
    std::vector<T> own;
    const int64_t need = d * skv_padded + skv * dv_padded + kQueryRows * (d + 2 * skv_padded +
                                                                          dv_padded);
    std::vector<T>& scratch = need * int64_t(sizeof(T)) <= (int64_t(1) << 20) ? kept : own;
    if (int64_t(scratch.size()) < need) scratch.resize(need);
    T* kt = scratch.data();
    T* vp = kt + d * skv_padded;
    T* qb = vp + skv * dv_padded;
    T* scores = qb + kQueryRows * d;
    T* probs = scores + kQueryRows * skv_padded;
    T* ob = probs + kQueryRows * skv_padded;
    int64_t laid_out = -1;  // the pair whose K and V are in kt and vp
    for (int64_t task = begin; task < end; ++task) {
      const int64_t pair = task / per_pair, b = pair / heads, h = pair % heads;
      if (pair != laid_out) {  // Kᵀ (d, skv) and V (skv, dv) dense, zero past the edges
        const auto [keys, dims] =
            lay_out_key_blocks(k.at(b, h, 0), k.s[2], k.s[3], skv, d, kt, skv_padded);
        for (int64_t j = 0; j < skv; ++j) {
          const T* kr = k.at(b, h, j);
          for (int64_t p = j < keys ? dims : 0; p < d; ++p) kt[p * skv_padded + j] = kr[p * k.s[3]];
          const T* vr = v.at(b, h, j);
          T* vo = vp + j * dv_padded;
          if (v.s[3] == 1)
            std::copy(vr, vr + dv, vo);
          else
            for (int64_t c = 0; c < dv; ++c) vo[c] = vr[c * v.s[3]];
          std::fill(vo + dv, vo + dv_padded, T(0));
        }
        for (int64_t p = 0; p < d; ++p)
          std::fill(kt + p * skv_padded + skv, kt + (p + 1) * skv_padded, T(0));
        laid_out = pair;
      }
      const int64_t first = task % per_pair * stretch, last = std::min(sq, first + stretch);
      for (int64_t i0 = first; i0 < last; i0 += kQueryRows) {
        const int rows = int(std::min<int64_t>(kQueryRows, last - i0));
        // A whole tile of rows of unit stride is read in place; others are copied, rows
        // past the last as zeros (their results are not used).
        const T* a = q.at(b, h, i0);
        int64_t lda = q.s[2];
        if (rows < kQueryRows || q.s[3] != 1) {
          for (int r = 0; r < kQueryRows; ++r) {
            const T* qr = r < rows ? q.at(b, h, i0 + r) : nullptr;
            for (int64_t p = 0; p < d; ++p) qb[r * d + p] = qr ? qr[p * q.s[3]] : T(0);
          }
          a = qb;
          lda = d;
        }
        for (int64_t j0 = 0; j0 < skv_padded; j0 += W)
          tile_product(a, lda, kt + j0, skv_padded, d, scores + j0, skv_padded);
        for (int r = 0; r < kQueryRows; ++r) {
          const int64_t i = i0 + r;
          T* s = scores + r * skv_padded;
          T* pr = probs + r * skv_padded;
          if (r >= rows) {  // the products below read every row
            std::fill(pr, pr + skv, T(0));
            continue;
          }
          // A causal query sees keys 0..i: the softmax of that prefix, zeros after it (what
          // -inf scores give), with no exp spent on the masked keys.
          const int64_t seen = causal ? std::min(skv, i + 1) : skv;
          for (int64_t j = 0; j < seen; ++j) s[j] *= scale;  // (q·kᵀ)·scale, as composed
          if (masked) {
            const T* m = mask.at(b, h, i);
            for (int64_t j = 0; j < seen; ++j) s[j] += m[j * mask.s[3]];
          }
          softmax_row(s, pr, seen, false);
          std::fill(pr + seen, pr + skv, T(0));
        }
        for (int64_t c0 = 0; c0 < dv_padded; c0 += W)
          tile_product(probs, skv_padded, vp + c0, dv_padded, skv, ob + c0, dv_padded);
        for (int r = 0; r < rows; ++r)
          std::copy(ob + r * dv_padded, ob + r * dv_padded + dv,
                    out + b * os[0] + h * os[1] + (i0 + r) * os[2]);
      }
    }
  });
}

void attention_kernel(const KernelCall& call) {
  if (call.in(0).dtype() == DType::Float64) return attention_typed<double>(call);
  attention_typed<float>(call);
}

}  // namespace

const KernelFnPtr kRowKernels[] = {row_kernel<RowOp::Softmax>, row_kernel<RowOp::LogSoftmax>,
                                   row_kernel<RowOp::LayerNorm>, row_kernel<RowOp::RmsNorm>,
                                   attention_kernel};

}  // namespace xrt::cpu::XRT_ISA_NS
