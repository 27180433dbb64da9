// cpp/src/cuda/matmul_native.cpp: integer matrix products with the tiled kernel of
// cpp/kernels/xrt/matmul.cuh, compiled by NVRTC on first use.
#include <algorithm>
#include <atomic>
#include <string>

#include "cuda/codegen.h"
#include "cuda/gemm.h"
#include "cuda/jit.h"
#include "cuda/runtime.h"

namespace xrt::cuda {

namespace {

constexpr unsigned kTile = 16;                  // as in matmul.cuh
constexpr int64_t kMaxGridY = 65535, kMaxGridZ = 65535;

// The kernel for dtype on device, looked up once per (device, dtype).
CUfunction integer_kernel(int device, DType dtype) {
  static std::atomic<CUfunction> kernels[kMaxDevices][kNumDTypes];  // zeroed: static
  std::atomic<CUfunction>& slot = kernels[device][static_cast<int>(dtype)];
  if (CUfunction fn = slot.load(std::memory_order_acquire)) return fn;
  KernelSource source{"#include \"xrt/matmul.cuh\"\n", {}};
  CUfunction fn =
      jit_function(device, source, "xrt_matmul_" + std::string(dtype_info(dtype).name));
  slot.store(fn, std::memory_order_release);
  return fn;
}

}  // namespace

void gemm_native(const GemmRun& run, DType dtype, int device, CUstream stream) {
  CUfunction fn = integer_kernel(device, dtype);
  const int64_t item = static_cast<int64_t>(itemsize(dtype));
  const int64_t rows_per_launch = kMaxGridY * kTile;
  for (int64_t z0 = 0; z0 < run.count; z0 += kMaxGridZ) {
    for (int64_t r0 = 0; r0 < run.m; r0 += rows_per_launch) {
      const char* a = run.a + (z0 * run.a_batch + r0 * run.a_row) * item;
      const char* b = run.b + z0 * run.b_batch * item;
      char* c = run.c + (z0 * run.c_batch + r0 * run.n) * item;
      long long m = std::min(rows_per_launch, run.m - r0), n = run.n, k = run.k;
      long long a_row = run.a_row, a_col = run.a_col, a_batch = run.a_batch;
      long long b_row = run.b_row, b_col = run.b_col, b_batch = run.b_batch;
      long long c_batch = run.c_batch;
      void* args[] = {&a, &b, &c, &m, &n, &k, &a_row, &a_col, &a_batch,
                      &b_row, &b_col, &b_batch, &c_batch};
      Dim3 grid{grid_dim((n + kTile - 1) / kTile, 'x', "integer matmul"),
                grid_dim((m + kTile - 1) / kTile, 'y', "integer matmul"),
                static_cast<unsigned>(std::min(kMaxGridZ, run.count - z0))};
      launch(fn, grid, Dim3{kTile, kTile, 1}, 0, stream, args);
    }
  }
}

}  // namespace xrt::cuda
