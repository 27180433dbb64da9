// cpp/src/cuda/norm_kernels.cpp: the row ops on CUDA (softmax, log_softmax, layer_norm,
// rms_norm; Note [Row ops] in cpp/src/core/norm_ops.cpp). Device code:
// cpp/kernels/xrt/norm.cuh. One source per dtype holds twenty kernels: for each op, a warp
// per row held in registers for rows of up to 128, 256, 512 and 1024 elements, and a block
// per longer row.
#include <string>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

constexpr int kBlock = 256;  // kBlock of norm.cuh
const char* const kOps[] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};
const int kWarpElements[] = {4, 8, 16, 32};  // V of warp_rows: rows of up to 32 V elements

/// V of the warp kernel for rows of cols, 0 for the block kernel.
int warp_elements(int64_t cols) {
  for (int v : kWarpElements)
    if (cols <= 32 * v) return v;
  return 0;
}

std::string kernel_name(int op, int v) {
  return "xrt_rows_" + std::to_string(op) + (v ? "_w" + std::to_string(v) : "_b");
}

KernelSource rows_source(DType dtype) {
  const std::string t = device_type(dtype);
  const std::string params = "(const " + t + "* x, " + t + "* y, const " + t + "* w, const " +
                             t + "* b, xrt::index_t rows, xrt::index_t cols, double eps)";
  std::string s = "#include \"xrt/norm.cuh\"\n";
  for (int op = 0; op < 4; ++op) {
    const std::string o = std::to_string(op);
    for (int v : kWarpElements)
      s += "extern \"C\" __global__ void __launch_bounds__(256) " + kernel_name(op, v) +
           params + " {\n  xrt::norm::warp_rows<" + t + ", " + o + ", " + std::to_string(v) +
           ">(x, y, w, b, rows, cols, eps);\n}\n";
    s += "extern \"C\" __global__ void __launch_bounds__(256) " + kernel_name(op, 0) + params +
         " {\n  xrt::norm::rows<" + t + ", " + o + ", 256>(x, y, w, b, rows, cols, eps);\n}\n";
  }
  return {s, {}};
}

// in(0): x (rows, cols) contiguous, a real floating dtype; then the weight and bias attrs.step
// says are there (bit 0, bit 1), each cols contiguous; attrs.value: eps. out: (rows, cols).
template <int OP> void rows_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  if (rows == 0 || cols == 0) return;
  const int64_t flags = OP >= 2 ? call.attrs->step.i : 0;
  const void* w = nullptr;
  const void* b = nullptr;
  int next = 1;
  if (flags & 1) w = call.in(next++).data();
  if (flags & 2) b = call.in(next++).data();
  double eps = call.attrs->value.c.real();
  const int device = x.device().index;
  activate(device);
  const DType dtype = x.dtype();
  const int v = warp_elements(cols);
  const std::string key = std::string("rows/") + device_type(dtype);
  CUfunction fn = jit_function(device, key, [&] { return rows_source(dtype); },
                               kernel_name(OP, v));
  const void* in = x.data();
  void* out = call.out().data();
  int64_t n = rows, c = cols;
  void* params[] = {&in, &out, &w, &b, &n, &c, &eps};
  launch(fn, {grid_blocks(rows, v ? kBlock / 32 : 1)}, {kBlock}, 0, current_stream(device),
         params);
}

std::vector<KernelSample> rows_samples() {
  std::vector<KernelSample> samples;
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    samples.push_back({std::string("rows/") + device_type(d), rows_source(d)});
  return samples;
}

}  // namespace

void register_norm_kernels(KernelRegistry& registry) {
  auto float_rows = [](const DTypeSignature& s) { return is_floating(s.dtypes[0]); };
  const KernelFn fns[] = {rows_kernel<0>, rows_kernel<1>, rows_kernel<2>, rows_kernel<3>};
  for (int op = 0; op < 4; ++op)
    registry.add(kernel_info(kOps[op], "nvrtc", fns[op],
                             "a warp per row held in registers (a block per row past 1024 "
                             "elements): in-order walks, shuffle trees", float_rows));
  register_kernel_samples("norm", rows_samples);
}

}  // namespace xrt::cuda
