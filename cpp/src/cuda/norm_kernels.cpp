// cpp/src/cuda/norm_kernels.cpp: the row ops on CUDA (softmax, log_softmax, layer_norm,
// rms_norm; Note [Row ops] in cpp/src/core/norm_ops.cpp). Device code:
// cpp/kernels/xrt/norm.cuh. One source per dtype holds the eight kernels (four ops, a
// warp or a block per row); rows of up to 1024 elements take a warp each.
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

constexpr int kBlock = 256;              // kBlock of norm.cuh
constexpr int64_t kWarpRowLimit = 1024;  // longer rows take a block
const char* const kOps[] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};

std::string kernel_name(int op, int group, int vec) {
  return "xrt_rows_" + std::to_string(op) + "_" + std::to_string(group) + "_" +
         std::to_string(vec);
}

// Elements of dtype in 16 bytes: the widest access the kernels make.
int widest_vector(DType dtype) { return static_cast<int>(16 / itemsize(dtype)); }

KernelSource rows_source(DType dtype) {
  const std::string t = device_type(dtype);
  std::string s = "#include \"xrt/norm.cuh\"\n";
  for (int op = 0; op < 4; ++op)
    for (int group : {32, kBlock})
      for (int vec : {1, widest_vector(dtype)})
        s += "extern \"C\" __global__ void __launch_bounds__(256) " +
             kernel_name(op, group, vec) + "(const " + t + "* x, " + t + "* y, const " + t +
             "* w, const " + t + "* b, const " + t + "* r, " + t + "* s, xrt::index_t rows, " +
             "xrt::index_t cols, double eps) {\n  xrt::norm::rows<" + t + ", " +
             std::to_string(op) + ", " + std::to_string(group) + ", " + std::to_string(vec) +
             ">(x, y, w, b, r, s, rows, cols, eps);\n}\n";
  return {s, {}};
}

// in(0): x (rows, cols) contiguous, a real floating dtype; then what attrs.step says is
// there (Note [Row ops]): the residual (bit 2), the weight (bit 0) and the bias (bit 1).
// attrs.value: eps. out(0): (rows, cols); out(1), with a residual: x + residual.
template <int OP> void rows_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  if (rows == 0 || cols == 0) return;
  const int64_t flags = OP >= 2 ? call.attrs->step.i : 0;
  const void* w = nullptr;
  const void* b = nullptr;
  const void* r = nullptr;  // add_norm: the residual, and x + residual out
  void* s = nullptr;
  int next = 1;
  if (flags & 4) {
    r = call.in(next++).data();
    s = call.out(1).data();
  }
  if (flags & 1) w = call.in(next++).data();
  if (flags & 2) b = call.in(next++).data();
  double eps = call.attrs->value.c.real();
  const int device = x.device().index;
  activate(device);
  const DType dtype = x.dtype();
  const int group = cols <= kWarpRowLimit ? 32 : kBlock;
  const void* in = x.data();
  void* out = call.out().data();
  // 16-byte accesses where every row and operand starts on a 16-byte boundary.
  int vec = widest_vector(dtype);
  bool aligned = cols % vec == 0;
  for (const void* p : {in, static_cast<const void*>(out), w, b, r, static_cast<const void*>(s)})
    aligned = aligned && reinterpret_cast<uintptr_t>(p) % 16 == 0;
  if (!aligned) vec = 1;
  const std::string key = std::string("rows/") + device_type(dtype);
  CUfunction fn = jit_function(device, key, [&] { return rows_source(dtype); },
                               kernel_name(OP, group, vec));
  int64_t n = rows, c = cols;
  void* params[] = {&in, &out, &w, &b, &r, &s, &n, &c, &eps};
  launch(fn, {grid_blocks(rows, kBlock / group)}, {kBlock}, 0, current_stream(device), params);
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
                             "a warp per row (a block past 1024 elements): in-order walks, "
                             "shuffle trees", float_rows));
  register_kernel_samples("norm", rows_samples);
}

}  // namespace xrt::cuda
