// cpp/src/cuda/manipulation_kernels.cpp: repeat on CUDA (device code:
// cpp/kernels/xrt/repeat.cuh). The core knows the result's size (it reads array counts on
// the host to check them), so the kernel needs nothing from the host: a count per element
// becomes its running totals on the device (the scan's cumulative_sum), which each output
// element binary-searches for its source.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/index_common.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "xpuruntime/reductions.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

using index_detail::bytes_type;
using index_detail::index_type;

KernelSource repeat_source(size_t size, bool index32) {
  std::string t = bytes_type(size), u = index_type(index32);
  return {"#include \"xrt/index.cuh\"\n#include \"xrt/repeat.cuh\"\n"
          "extern \"C\" __global__ void __launch_bounds__(256) xrt_repeat(" + t + "* out, const " +
              t + "* x, const xrt::int64_t* ends, " + u + " n, " + u + " total, " + u +
              " inner, " + u + " repeats, " + u + " count) {\n  xrt::repeat::gather<" + t +
              ", " + u + ">(out, x, ends, n, total, inner, repeats, count);\n}\n"
              "extern \"C\" __global__ void __launch_bounds__(256) xrt_repeat_spread(" + t +
              "* out, const " + t + "* x, " + u + " repeats, " + u + " count) {\n"
              "  xrt::repeat::spread<" + t + ", " + u + ">(out, x, repeats, count);\n}\n",
          {}};
}

// in(0): x, contiguous; in(1), when given: int64 counts, one per element of the axis
// (attrs.axes[0]); else every count is attrs.value. out: contiguous (cpu's repeat_kernel).
void repeat_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  Tensor& out = call.out();
  int64_t count = out.numel();
  if (count == 0) return;
  const int axis = static_cast<int>(call.attrs->axes[0]);
  int64_t n = x.shape()[axis], total = out.shape()[axis], inner = 1;
  for (int d = axis + 1; d < x.ndim(); ++d) inner *= x.shape()[d];
  int64_t repeats = call.attrs->value.to<int64_t>();
  Tensor ends;
  if (call.num_inputs > 1) ends = cumulative_sum(call.in(1), 0, DType::Int64, false);
  int device = out.device().index;
  activate(device);
  size_t size = x.itemsize();
  bool index32 = count <= INT32_MAX && x.numel() <= INT32_MAX;
  char key[48];
  std::snprintf(key, sizeof key, "repeat/%zu/%d", size, index32);
  auto fn = [&](const char* name) {
    return jit_function(device, key, [&] { return repeat_source(size, index32); }, name);
  };
  void *o = out.data(), *e = ends.defined() ? ends.data() : nullptr;
  const void* src = x.data();
  // Note: one count for every element of a 1-D (or last-axis) repeat writes whole vectors
  // of outputs per thread: the gather's division per element cost it 20% against torch.
  if (!e && inner == 1 && reinterpret_cast<uintptr_t>(o) % 16 == 0) {
    const int64_t vector = size >= 16 ? 1 : int64_t(16 / size);
    int64_t wide[2] = {repeats, count};
    uint32_t narrow[2] = {static_cast<uint32_t>(repeats), static_cast<uint32_t>(count)};
    void* r = index32 ? static_cast<void*>(&narrow[0]) : static_cast<void*>(&wide[0]);
    void* c = index32 ? static_cast<void*>(&narrow[1]) : static_cast<void*>(&wide[1]);
    void* params[] = {&o, &src, r, c};
    launch(fn("xrt_repeat_spread"), {grid_blocks((count + vector - 1) / vector, 256)}, {256}, 0,
           current_stream(device), params);
    return;
  }
  int64_t words[5] = {n, total, inner, repeats, count};
  uint32_t narrow[5];
  std::vector<void*> args = {&o, &src, &e};
  for (int k = 0; k < 5; ++k) {
    narrow[k] = static_cast<uint32_t>(words[k]);
    args.push_back(index32 ? static_cast<void*>(&narrow[k]) : static_cast<void*>(&words[k]));
  }
  index_detail::launch_n(fn("xrt_repeat"), count, device, std::move(args));
}

std::vector<KernelSample> repeat_samples() {
  std::vector<KernelSample> samples;
  for (size_t size : {1, 2, 4, 8, 16})
    samples.push_back({"repeat/" + std::to_string(size), repeat_source(size, size != 8)});
  return samples;
}

}  // namespace

void register_manipulation_kernels(KernelRegistry& registry) {
  registry.add(kernel_info("repeat", "nvrtc", repeat_kernel,
                           "one count for all along the last axis: a thread per vector of "
                           "outputs; else a thread per output element: its source by division, "
                           "or by a binary search of the counts' running totals"));
  register_kernel_samples("manipulation", repeat_samples);
}

}  // namespace xrt::cuda
