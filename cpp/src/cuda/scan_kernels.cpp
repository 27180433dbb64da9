// cpp/src/cuda/scan_kernels.cpp: cumulative_sum and cumulative_prod on CUDA. Device code:
// cpp/kernels/xrt/scan.cuh, with the Sum/Prod reducers of reducers.cuh (64-bit integers,
// float32 for the 16-bit floats, each result rounded from the accumulator once).
//
// - lines (a thread per line, in order: the CPU's results bit for bit) for short lines
//   and for many lines side by side in memory (axis 0 of a C-ordered matrix);
// - tiles otherwise: blocks of kReduceBlock * items elements of one line each.
// Note [Deterministic scans]: a tile's carry-in is combined from the totals of the tiles
// before it in a tree fixed by the tile's index (whole groups of kGroup tiles, then its own
// group's earlier tiles), never from whatever a look-back happens to find published, so
// float results are the same every run. Each tile waits only for tiles of lower index,
// which have started, so the waits end (Note [Tiles in launch order] in scan.cuh). Float
// results differ from the CPU's sequential sums in rounding.
#include <algorithm>
#include <cstring>

#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/reduce_common.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

constexpr int64_t kShortLine = 64;  // lines this short are scanned a thread each
constexpr int64_t kGroup = 32;      // kGroup of scan.cuh

struct ScanShape {
  bool tiles;
  int ndim;
  int items = 1;      ///< tiles: elements per thread
  int vec = 1;        ///< tiles: adjacent elements per lane, read as one load
  bool vstore = false;  ///< tiles: and written as one store
};

std::string kernel_body(const std::string& name, const std::string& reducer, ScanShape s) {
  std::string nd = std::to_string(s.ndim);
  std::string call = s.tiles ? "xrt::scan::tiles<Reducer, " + nd + ", " +
                                   std::to_string(s.items) + ", " + std::to_string(s.vec) +
                                   ", " + (s.vstore ? "true" : "false") + ">"
                             : "xrt::scan::lines<Reducer, " + nd + ">";
  return "namespace " + name + "_types { typedef " + reducer + " Reducer; }\n" +
         "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kReduceBlock) +
         ") " + name + "(xrt::scan::Layout<" + nd + "> layout) {\n  using " + name +
         "_types::Reducer;\n  " + call + "(layout);\n}\n";
}

std::string shape_key(ScanShape s) {
  return std::string(s.tiles ? "t" : "l") + std::to_string(s.ndim) + "." +
         std::to_string(s.items) + "." + std::to_string(s.vec) + (s.vstore ? "v" : "");
}

/// Lines of a scan: every axis but `axis`, merged where both tensors allow (byte strides).
struct Lines {
  Dims shape, in_strides, out_strides;
  int64_t count = 1;
};

Lines lines_of(const Tensor& x, const Tensor& out, int axis) {
  Lines l;
  int64_t xi = static_cast<int64_t>(x.itemsize()), oi = static_cast<int64_t>(out.itemsize());
  for (int d = 0; d < x.ndim(); ++d) {
    int64_t size = x.shape()[d];
    if (d == axis) continue;
    l.count *= size;
    if (size == 1) continue;
    int64_t is = x.strides()[d] * xi, os = out.strides()[d] * oi;
    int n = l.shape.size();
    if (n > 0 && l.in_strides[n - 1] == is * size && l.out_strides[n - 1] == os * size) {
      l.shape[n - 1] *= size;
      l.in_strides[n - 1] = is;
      l.out_strides[n - 1] = os;
    } else {
      l.shape.push_back(size);
      l.in_strides.push_back(is);
      l.out_strides.push_back(os);
    }
  }
  if (l.shape.empty()) {
    l.shape.push_back(1);
    l.in_strides.push_back(0);
    l.out_strides.push_back(0);
  }
  return l;
}

// Note: a float32 cumulative_sum of 2^24 on an H200 took 82.7, 62.6 and 54.7 us at 8, 16
// and 32 items per thread (torch 58.0; tools/sweep_tile_items.py): larger tiles, fewer
// carries to publish and wait for. 8-byte accumulators keep 16 (registers), wider ones 8.
int items_for(int64_t acc_size) { return acc_size > 8 ? 8 : acc_size > 4 ? 16 : 32; }

/// Whether every line starts at a multiple of `bytes` and steps by one element.
bool aligned_lines(const char* base, const Dims& strides, int64_t step, int64_t item,
                   int64_t bytes) {
  bool ok = step == item && reinterpret_cast<uintptr_t>(base) % bytes == 0;
  for (int64_t s : strides) ok = ok && s % bytes == 0;
  return ok;
}

template <bool Product> void scan_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out();
  DType out_dtype = out.dtype();
  if (!accumulates_directly(x.dtype(), out_dtype, false)) {
    Tensor cast = cast_on_device(x, out_dtype);
    const Tensor* inputs[] = {&cast};
    return scan_kernel<Product>(KernelCall{inputs, 1, call.outputs, 1, call.attrs});
  }
  if (x.numel() == 0) return;
  int axis = static_cast<int>(call.attrs->axes[0]);
  std::string reducer = std::string("xrt::reduce::") + (Product ? "Prod<" : "Sum<") +
                        device_type(x.dtype()) + ", " + device_type(out_dtype) + ">";
  Lines lines = lines_of(x, out, axis);
  int64_t length = x.shape()[axis];
  int64_t in_item = static_cast<int64_t>(x.itemsize());
  int64_t in_step = x.strides()[axis] * in_item;
  int64_t out_step = out.strides()[axis] * static_cast<int64_t>(out.itemsize());
  int device = out.device().index;
  activate(device);
  CUstream stream = current_stream(device);
  int64_t target = int64_t(sm_count(device)) * 2048;
  bool side_by_side = in_step != in_item && lines.in_strides.back() == in_item &&
                      lines.count * 4 >= target;
  int64_t acc_size = sum_accumulator_size(out_dtype);
  ScanShape s{!(length <= kShortLine || side_by_side), lines.shape.size()};
  if (s.tiles) {
    const int widest = static_cast<int>(16 / in_item);
    s.items = tile_items(items_for(acc_size), std::min<int>(items_for(acc_size), widest));
    int vec = std::min<int>(s.items, widest);
    if (vec > 1 && aligned_lines(x.data(), lines.in_strides, in_step, in_item, 16)) {
      s.vec = vec;
      int64_t out_item = static_cast<int64_t>(out.itemsize());
      s.vstore = vec * out_item <= 16 &&
                 aligned_lines(out.data(), lines.out_strides, out_step, out_item, vec * out_item);
    }
  }
  std::string key = "scan/" + reducer + "/" + shape_key(s);
  CUfunction fn = jit_function(device, key, [&] {
    return KernelSource{"#include \"xrt/scan.cuh\"\n" + kernel_body("xrt_scan", reducer, s)};
  }, "xrt_scan");

  int64_t tile = int64_t(kReduceBlock) * s.items;
  int64_t per_line = s.tiles ? (length + tile - 1) / tile : 1;
  int64_t total = lines.count * per_line;
  int64_t groups = lines.count * ((per_line + kGroup - 1) / kGroup);
  Tensor work;
  if (s.tiles) {
    int64_t flag_bytes = (16 + 4 * (total + groups) + 15) / 16 * 16;
    work = device_scratch(flag_bytes + acc_size * (total + groups), out.device());
    XRT_CU(cuMemsetD32Async, reinterpret_cast<CUdeviceptr>(work.data()), 0u,
           static_cast<size_t>(flag_bytes / 4), stream);
  }
  std::vector<uint64_t> w;
  auto word = [&](auto v) {
    uint64_t u = 0;
    static_assert(sizeof(v) == 8);
    std::memcpy(&u, &v, 8);
    w.push_back(u);
  };
  word(x.data());
  word(out.data());
  word(lines.count);
  for (int64_t v : lines.shape) word(v);
  for (int64_t v : lines.in_strides) word(v);
  for (int64_t v : lines.out_strides) word(v);
  word(length);
  word(in_step);
  word(out_step);
  word(per_line);
  word(s.tiles ? work.data() : nullptr);
  void* params[] = {w.data()};
  int64_t blocks = s.tiles ? total : (lines.count + kReduceBlock - 1) / kReduceBlock;
  launch(fn, {grid_dim(blocks, 'x', "cumulative scan")}, {kReduceBlock}, 0, stream, params);
}

/// For the compile check: the cumulative sum of every direct dtype pair in tiles, products
/// of a few types, lines, and a tile walk of three dimensions, in one source.
std::vector<KernelSample> scan_samples() {
  std::string source = "#include \"xrt/scan.cuh\"\n";
  int n = 0;
  auto add = [&](const std::string& reducer, ScanShape s) {
    source += kernel_body("xrt_scan_" + std::to_string(n++), reducer, s);
  };
  for (int a = 0; a < kNumDTypes; ++a)
    for (int b = 0; b < kNumDTypes; ++b) {
      DType in = DType(a), out = DType(b);
      if (!accumulates_directly(in, out, false)) continue;
      int items = items_for(sum_accumulator_size(out));
      int vec = std::min<int>(items, static_cast<int>(16 / itemsize(in)));
      bool vstore = vec * itemsize(out) <= 16;
      add(std::string("xrt::reduce::Sum<") + device_type(in) + ", " + device_type(out) + ">",
          {true, 1, items, vec, vstore});
    }
  for (const char* t : {"xrt::int32_t, xrt::int64_t", "xrt::bfloat16, xrt::bfloat16",
                        "xrt::complex64, xrt::complex64", "xrt::complex128, xrt::complex128"})
    add(std::string("xrt::reduce::Prod<") + t + ">", {true, 1, 8});
  add("xrt::reduce::Sum<float, float>", {false, 2});
  add("xrt::reduce::Prod<xrt::uint8_t, xrt::uint64_t>", {false, 1});
  add("xrt::reduce::Sum<float, float>", {true, 3, 16});
  add("xrt::reduce::Sum<float, double>", {true, 2, 16, 4, false});
  return {{"scan: cumulative_sum/cumulative_prod", {source}}};
}

KernelInfo kernel(const char* op, KernelFn run) {
  return kernel_info(op, "nvrtc", std::move(run),
                     "tiles with a carry-in from earlier tiles in a fixed tree; short or "
                     "side-by-side lines in order");
}

}  // namespace

void register_scan_kernels(KernelRegistry& registry) {
  registry.add(kernel("cumulative_sum", scan_kernel<false>));
  registry.add(kernel("cumulative_prod", scan_kernel<true>));
  register_kernel_samples("scan", scan_samples);
}

}  // namespace xrt::cuda
