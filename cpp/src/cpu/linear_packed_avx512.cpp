// cpp/src/cpu/linear_packed_avx512.cpp: linear on a packed float32 weight with AVX-512
// (Note [Packed linear weights] in core/linear_ops.cpp). Compiled for x86-64-v4 and
// registered only where the CPU has it.
#include <immintrin.h>

#include <algorithm>

#include "core/host/thread_pool.h"
#include "core/linear_internal.h"
#include "cpu/kernels.h"

#ifdef XRT_HAVE_LIBMVEC
// glibc's libmvec, 16 lanes (the x86-64 vector function ABI's AVX-512 variant): the same
// functions the elementwise gelu's loops vectorise to (cpu/vector_math.h).
extern "C" __m512 _ZGVeN16v_erff(__m512) noexcept;
extern "C" __m512 _ZGVeN16v_tanhf(__m512) noexcept;
#endif

namespace xrt::cpu::avx512 {

namespace {

// Note [GELU in the tile]: the erf and tanh GELUs run on each finished 8x32 tile while it
// is in L1, with the elementwise op's formula (cpu/scalar_math.h) on libmvec's 16-lane
// functions, instead of in a second pass over the output after the product: on the small
// transformer's 64x256 by 256x1024 feed-forward product (2 threads) that pass took
// 14 us of the product's 86, its erf about 10. Without libmvec the pass stays.
#ifdef XRT_HAVE_LIBMVEC
constexpr bool kTileGelu = true;

template <bool Tanh>
__m512 gelu16(__m512 x) {
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
  __m512 t;
  if constexpr (Tanh) {  // sqrt(2 / pi) (x + 0.044715 x^3), in the op's order
    const __m512 cx2 = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.044715f), x), x);
    t = _ZGVeN16v_tanhf(_mm512_mul_ps(_mm512_set1_ps(0.79788456080286535588f),
                                      _mm512_add_ps(x, _mm512_mul_ps(cx2, x))));
  } else {
    t = _ZGVeN16v_erff(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752440f)));
  }
  return _mm512_mul_ps(_mm512_mul_ps(half, x), _mm512_add_ps(one, t));
}

// The GELU of rows [0, R) of a finished tile, columns [0, cols), in place.
template <bool Tanh>
void gelu_tile(int rows, float* c, int64_t ldc, __mmask16 m0, __mmask16 m1) {
  for (int r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    _mm512_mask_storeu_ps(row, m0, gelu16<Tanh>(_mm512_maskz_loadu_ps(m0, row)));
    if (m1) _mm512_mask_storeu_ps(row + 16, m1, gelu16<Tanh>(_mm512_maskz_loadu_ps(m1, row + 16)));
  }
}
#else
constexpr bool kTileGelu = false;
#endif

constexpr int kRows = 8;         // rows of x per micro-tile
constexpr int64_t kDepth = 512;  // k per pass over a tile (a panel's slice: 64 KB)

// c[r][0..cols) (+)= sum_p a[r * lda + p] * panel[p][0..32) for r < R, then (on the last
// pass) + bias, ReLU. The 2R accumulators stay in registers; a row of x is broadcast from
// memory into each multiply-add.
enum class Finish { None, Relu, Gelu, GeluTanh };

template <int R>
void tile(int64_t depth, const float* a, int64_t lda, const float* panel, float* c,
          int64_t ldc, int cols, bool accumulate, const float* bias, Finish finish) {
  const bool relu = finish == Finish::Relu;
  __m512 lo[R], hi[R];
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int64_t p = 0; p < depth; ++p) {
    const __m512 b0 = _mm512_loadu_ps(panel + p * 32);
    const __m512 b1 = _mm512_loadu_ps(panel + p * 32 + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + p]);
      lo[r] = _mm512_fmadd_ps(x, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(x, b1, hi[r]);
    }
  }
  const __mmask16 m0 = cols >= 16 ? 0xffff : static_cast<__mmask16>((1u << cols) - 1);
  const __mmask16 m1 =
      cols >= 32 ? 0xffff : cols <= 16 ? 0 : static_cast<__mmask16>((1u << (cols - 16)) - 1);
  __m512 bias0 = _mm512_setzero_ps(), bias1 = _mm512_setzero_ps();
  if (bias) {
    bias0 = _mm512_maskz_loadu_ps(m0, bias);
    bias1 = _mm512_maskz_loadu_ps(m1, bias + 16);
  }
  const __m512 zero = _mm512_setzero_ps();
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc;
    __m512 v0 = lo[r], v1 = hi[r];
    if (accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, row));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, row + 16));
    }
    if (bias) {
      v0 = _mm512_add_ps(v0, bias0);
      v1 = _mm512_add_ps(v1, bias1);
    }
    if (relu) {
      v0 = _mm512_max_ps(v0, zero);
      v1 = _mm512_max_ps(v1, zero);
    }
    _mm512_mask_storeu_ps(row, m0, v0);
    _mm512_mask_storeu_ps(row + 16, m1, v1);
  }
#ifdef XRT_HAVE_LIBMVEC
  if (finish == Finish::Gelu) gelu_tile<false>(R, c, ldc, m0, m1);
  if (finish == Finish::GeluTanh) gelu_tile<true>(R, c, ldc, m0, m1);
#endif
}

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, int,
                        bool, const float*, Finish);
constexpr TileFn kTiles[kRows + 1] = {nullptr,  tile<1>, tile<2>, tile<3>, tile<4>,
                                      tile<5>, tile<6>, tile<7>, tile<8>};

}  // namespace

void linear_packed_kernel(const KernelCall& call) {
  const PackedLinearOperands o(call);
  const int64_t m = o.m, n = o.n, k = o.k;
  const float *a = o.x, *panels = o.panels, *bias = o.bias;
  float* c = o.out;
  const Activation activation = activation_of(call);
  const Finish finish = activation == Activation::Relu ? Finish::Relu
                        : !kTileGelu                  ? Finish::None
                        : activation == Activation::Gelu     ? Finish::Gelu
                        : activation == Activation::GeluTanh ? Finish::GeluTanh
                                                             : Finish::None;
  const int64_t npanels = (n + kLinearPanel - 1) / kLinearPanel;
  // Tasks: 64 rows of x by one panel, panel-major within a row block, so that a thread's
  // consecutive tasks share the rows they read.
  const int64_t row_blocks = (m + 63) / 64, tasks = row_blocks * npanels;
  const int64_t grain = 1;  // one task a chunk: a late worker leaves the caller fewer
  if (m > 0 && n > 0) {
    host::parallel_for(tasks, grain, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t rb = t / npanels, jp = t % npanels;
        const int64_t r_end = std::min(m, (rb + 1) * 64);
        const int cols = static_cast<int>(std::min<int64_t>(kLinearPanel, n - jp * kLinearPanel));
        for (int64_t p0 = 0; p0 < std::max<int64_t>(k, 1); p0 += kDepth) {
          const int64_t depth = std::min(kDepth, k - p0);
          const bool last = p0 + kDepth >= k;
          const float* panel = panels + (jp * k + p0) * kLinearPanel;
          for (int64_t r = rb * 64; r < r_end; r += kRows) {
            const int rows = static_cast<int>(std::min<int64_t>(kRows, r_end - r));
            kTiles[rows](depth, a + r * k + p0, k, panel, c + r * n + jp * kLinearPanel, n,
                         cols, p0 > 0, last && bias ? bias + jp * kLinearPanel : nullptr,
                         last ? finish : Finish::None);
          }
        }
      }
    });
  }
  if (activation != Activation::None && finish == Finish::None)
    apply_activation(activation, call.out());
}

}  // namespace xrt::cpu::avx512
