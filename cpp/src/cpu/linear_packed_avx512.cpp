// cpp/src/cpu/linear_packed_avx512.cpp: linear on a packed float32 weight with AVX-512
// (Note [Packed linear weights] in core/linear_ops.cpp). Compiled for x86-64-v4 and
// registered only where the CPU has it.
#include <immintrin.h>

#include <algorithm>

#include "core/host/thread_pool.h"
#include "core/linear_internal.h"
#include "cpu/kernels.h"

#ifdef XRT_HAVE_LIBMVEC
// glibc's libmvec, 16 lanes (the x86-64 vector function ABI's AVX-512 variant): what the
// elementwise gelu_tanh's loops vectorise to (cpu/vector_math.h).
extern "C" __m512 _ZGVeN16v_tanhf(__m512) noexcept;
#endif

namespace xrt::cpu::avx512 {

namespace {

// Note [GELU in the tile]: a product's GELU runs on each finished 8x32 tile in registers,
// before it is stored, instead of in a second pass over the output. The erf GELU, 0.5 x (1 + erf(x / sqrt 2))
// as in the elementwise op (cpu/scalar_math.h), takes its erf from a rational function
// fitted for this kernel: erf(x) ~ x P(x^2) / Q(x^2) on [-4, 4] (erf rounds to +-1 beyond
// 3.92), P of degree 6 and Q of degree 5 in x^2, fitted by reweighted least squares for the
// relative error (2e-9 in exact arithmetic, 5e-8 with float coefficients). Evaluated in
// float (Horner's rule, one division), it is within 6 ulp of the correctly rounded erf of
// every float in [0, 4.5] (1.3% of them 2 ulp or more), an absolute error of at most 4e-7:
// below the rounding of the float product it follows. 16 erfs cost about 9 cycles here
// against libmvec's 22 (65536 floats, one thread: 9.2 us against 22.0), which the elementwise
// op keeps. On the small transformer's 64x256 by 256x1024 feed-forward product (2 threads),
// the separate pass had taken 14 us of the product's 84. The tanh GELU runs on libmvec's
// tanh in the op's order (the op's bits), and stays a second pass without libmvec.
__m512 erf16(__m512 x) {
  const __m512 limit = _mm512_set1_ps(4.0f);
  x = _mm512_max_ps(_mm512_min_ps(x, limit), _mm512_sub_ps(_mm512_setzero_ps(), limit));
  const __m512 t = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(-1.3202283905000556e-08f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(4.684778562719094e-06f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(3.796094361802143e-04f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(3.8496382332323218e-03f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(5.4317002177872935e-02f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.852038712139285e-01f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.1283791693770389f));
  __m512 q = _mm512_set1_ps(6.31105886695826e-05f);
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.307576002057555e-03f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.5462146283862154e-02f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.1395868861120155e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(4.974660711847415e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.0f));
  return _mm512_div_ps(_mm512_mul_ps(x, p), q);
}

enum class Finish { None, Relu, Gelu, GeluTanh };

template <Finish F>
__m512 gelu16(__m512 x) {
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
  __m512 t;
  if constexpr (F == Finish::GeluTanh) {
#ifdef XRT_HAVE_LIBMVEC  // sqrt(2 / pi) (x + 0.044715 x^3), in the op's order
    const __m512 cx2 = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.044715f), x), x);
    t = _ZGVeN16v_tanhf(_mm512_mul_ps(_mm512_set1_ps(0.79788456080286535588f),
                                      _mm512_add_ps(x, _mm512_mul_ps(cx2, x))));
#else
    t = x;  // not reached: without libmvec the tanh GELU is a second pass
#endif
  } else {
    t = erf16(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752440f)));
  }
  return _mm512_mul_ps(_mm512_mul_ps(half, x), _mm512_add_ps(one, t));
}

#ifdef XRT_HAVE_LIBMVEC
constexpr bool kTileGeluTanh = true;
#else
constexpr bool kTileGeluTanh = false;
#endif

constexpr int kRows = 8;         // rows of x per micro-tile
constexpr int64_t kDepth = 512;  // k per pass over a tile (a panel's slice: 64 KB)

// c[r][0..cols) (+)= sum_p a[r * lda + p] * panel[p][0..32) for r < R, then (on the last
// pass) + bias, ReLU. The 2R accumulators stay in registers; a row of x is broadcast from
// memory into each multiply-add.

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
    } else if (finish == Finish::Gelu) {
      v0 = gelu16<Finish::Gelu>(v0);
      v1 = gelu16<Finish::Gelu>(v1);
    } else if (finish == Finish::GeluTanh) {  // a call: the compiler keeps the rest in memory
      v0 = gelu16<Finish::GeluTanh>(v0);
      v1 = gelu16<Finish::GeluTanh>(v1);
    }
    _mm512_mask_storeu_ps(row, m0, v0);
    _mm512_mask_storeu_ps(row + 16, m1, v1);
  }
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
                        : activation == Activation::Gelu ? Finish::Gelu
                        : activation == Activation::GeluTanh && kTileGeluTanh ? Finish::GeluTanh
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
