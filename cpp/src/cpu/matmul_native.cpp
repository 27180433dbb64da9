// cpp/src/cpu/matmul_native.cpp: the project's own matmul, for every numeric dtype.
//
// float32/float64 use the classic packed, blocked scheme: B is packed into KC x NR panels,
// A into MC x KC blocks of MR-row panels (zero padded), and an MR x NR micro-kernel keeps
// its tile of C in registers. The micro-kernels are compiled for AVX-512, AVX2+FMA and
// baseline x86-64 and picked at load time (target_clones). Row blocks run in parallel.
// Other dtypes (integers, 16-bit floats, complex) use a cache-friendly i-k-j loop that
// accumulates in the compute type.
#include <cstring>
#include <vector>

#include "core/host/dtype_dispatch.h"
#include "core/host/thread_pool.h"
#include "cpu/kernels.h"
#include "cpu/matmul_common.h"

namespace xrt::cpu {

using host::visit_dtype;
using host::parallel_for;

namespace {

constexpr int64_t kKC = 256, kMC = 96, kNC = 2048;
template <class T> struct Tile;
template <> struct Tile<float> { static constexpr int MR = 6, NR = 16; };
template <> struct Tile<double> { static constexpr int MR = 6, NR = 8; };

#define XRT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

// The micro-kernel body, written with GCC vector types (V holds W elements of T) so that
// every target keeps the MR x NR tile of C in 2*MR registers: per step of p, two vectors of
// B and one broadcast of A per row, fused multiply-adds where the target has them.
template <class T, class V, int W>
__attribute__((always_inline)) inline void micro_body(int64_t kc, const T* __restrict a,
                                                      const T* __restrict b, T* __restrict c) {
  constexpr int MR = Tile<T>::MR;
  static_assert(Tile<T>::NR == 2 * W);
  V acc[MR][2] = {};
  for (int64_t p = 0; p < kc; ++p) {
    V b0, b1;
    __builtin_memcpy(&b0, b + p * 2 * W, sizeof(V));
    __builtin_memcpy(&b1, b + p * 2 * W + W, sizeof(V));
    for (int i = 0; i < MR; ++i) {
      V ai;
      for (int w = 0; w < W; ++w) ai[w] = a[p * MR + i];  // a broadcast load
      acc[i][0] += ai * b0;
      acc[i][1] += ai * b1;
    }
  }
  __builtin_memcpy(c, acc, sizeof acc);
}

typedef float Float8 __attribute__((vector_size(32)));
typedef double Double4 __attribute__((vector_size(32)));

// c[MR][NR] = sum_p a[p][0..MR) x b[p][0..NR)
XRT_CLONES void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                             float* __restrict c) {
  micro_body<float, Float8, 8>(kc, a, b, c);
}

XRT_CLONES void micro_kernel(int64_t kc, const double* __restrict a, const double* __restrict b,
                             double* __restrict c) {
  micro_body<double, Double4, 4>(kc, a, b, c);
}

template <class T> T load(const char* p) { T v; std::memcpy(&v, p, sizeof v); return v; }

template <class T> void gemm_blocked(const MatrixProduct& g) {
  constexpr int MR = Tile<T>::MR, NR = Tile<T>::NR;
  T* c = reinterpret_cast<T*>(g.c);
  std::fill(c, c + g.m * g.n, T(0));
  std::vector<T> bpack;
  for (int64_t jc = 0; jc < g.n; jc += kNC) {
    int64_t nc = std::min(kNC, g.n - jc);
    int64_t npanels = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < g.k; pc += kKC) {
      int64_t kc = std::min(kKC, g.k - pc);
      bpack.assign(static_cast<size_t>(npanels * kc * NR), T(0));
      parallel_for(npanels, 8, [&](int64_t b0, int64_t b1) {
        for (int64_t jp = b0; jp < b1; ++jp)
          for (int64_t p = 0; p < kc; ++p)
            for (int j = 0; j < NR && jp * NR + j < nc; ++j)
              bpack[static_cast<size_t>((jp * kc + p) * NR + j)] =
                  load<T>(g.b + (pc + p) * g.b_row + (jc + jp * NR + j) * g.b_col);
      });
      int64_t mblocks = (g.m + kMC - 1) / kMC;
      parallel_for(mblocks, 1, [&](int64_t i0, int64_t i1) {
        std::vector<T> apack(static_cast<size_t>(kMC * kc));
        T tile[MR * NR];
        for (int64_t ib = i0; ib < i1; ++ib) {
          int64_t ic = ib * kMC, mc = std::min(kMC, g.m - ic);
          int64_t mpanels = (mc + MR - 1) / MR;
          for (int64_t ip = 0; ip < mpanels; ++ip)
            for (int64_t p = 0; p < kc; ++p)
              for (int i = 0; i < MR; ++i) {
                int64_t row = ic + ip * MR + i;
                apack[static_cast<size_t>((ip * kc + p) * MR + i)] =
                    row < g.m ? load<T>(g.a + row * g.a_row + (pc + p) * g.a_col) : T(0);
              }
          for (int64_t jp = 0; jp < npanels; ++jp)
            for (int64_t ip = 0; ip < mpanels; ++ip) {
              micro_kernel(kc, &apack[static_cast<size_t>(ip * kc * MR)],
                           &bpack[static_cast<size_t>(jp * kc * NR)], tile);
              int64_t rows = std::min<int64_t>(MR, mc - ip * MR);
              int64_t cols = std::min<int64_t>(NR, nc - jp * NR);
              for (int64_t i = 0; i < rows; ++i) {
                T* crow = c + (ic + ip * MR + i) * g.n + jc + jp * NR;
                for (int64_t j = 0; j < cols; ++j) crow[j] += tile[i * NR + j];
              }
            }
        }
      });
    }
  }
}

template <class T> void gemm_simple(const MatrixProduct& g) {
  using C = detail::compute_t<T>;
  T* c = reinterpret_cast<T*>(g.c);
  parallel_for(g.m, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.n * g.k)),
               [&](int64_t r0, int64_t r1) {
    std::vector<C> acc(static_cast<size_t>(g.n));
    for (int64_t i = r0; i < r1; ++i) {
      std::fill(acc.begin(), acc.end(), C(0));
      for (int64_t p = 0; p < g.k; ++p) {
        C av = C(load<T>(g.a + i * g.a_row + p * g.a_col));
        const char* brow = g.b + p * g.b_row;
        for (int64_t j = 0; j < g.n; ++j) acc[static_cast<size_t>(j)] += av * C(load<T>(brow + j * g.b_col));
      }
      for (int64_t j = 0; j < g.n; ++j) c[i * g.n + j] = T(acc[static_cast<size_t>(j)]);
    }
  });
}

}  // namespace

void matmul_native(const KernelCall& call) {
  visit_dtype(call.out().dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("matmul is not defined for booleans");
    } else {
      for_each_matrix(call, [](const MatrixProduct& g) {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          if (g.m * g.n * g.k >= 32 * 32 * 32) return gemm_blocked<T>(g);
        }
        gemm_simple<T>(g);
      });
    }
  });
}

}  // namespace xrt::cpu
