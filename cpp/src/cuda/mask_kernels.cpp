// cpp/src/cuda/mask_kernels.cpp: boolean masks on CUDA: nonzero_count, nonzero,
// masked_gather (x[mask]) and masked_scatter (x[mask] = values). Device code:
// cpp/kernels/xrt/mask.cuh, and index.cuh's gather and scatter.
//
// Note [Masks on CUDA]: the core counts the mask first where the result's shape needs it
// (nonzero_count, whose one int64 the host reads), so these kernels only place elements:
// - a mask over every axis of the view (x[mask], the common case): one compaction pass
//   reads the mask and the selected elements and writes them in order; x[mask] = values
//   reads the values in order and writes the selected elements;
// - a mask over some of the axes: the pass writes the byte offsets of the selected
//   positions, and index.cuh's gather or scatter moves the blocks of the other axes;
// - x[mask] = one value: an elementwise pass over x and the mask, with no count at all.
// The mask is read as contiguous bytes (a strided mask is copied first), the data
// through its strides.
#include <cstdio>
#include <string>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/compaction.h"
#include "cuda/index_common.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/reduce_common.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

using compaction::kBlock;
using compaction::TileWork;
using index_detail::all_strides_zero;
using index_detail::bytes_type;
using index_detail::one_layout;
using index_detail::OneLayout;

// index.cuh: its 16-byte unit (index_bytes16), and gather/scatter for masks over some axes.
const std::string kHead =
    "#include \"xrt/index.cuh\"\n#include \"xrt/mask.cuh\"\n"
    "extern \"C\" __global__ void __launch_bounds__(256) ";

/// Positions per thread of a compaction pass moving elements of `size` bytes.
int items_for(size_t size) { return size <= 4 ? 16 : 8; }

/// The type mask.cuh reads dtype's elements as (bool as bytes: any nonzero byte is True).
std::string element_type(DType dtype) {
  return dtype == DType::Bool ? "xrt::uint8_t" : device_type(dtype);
}

std::string layout_type(int nd, int nargs) {
  return "xrt::StridedLayout<" + std::to_string(nd) + ", " + std::to_string(nargs) + ">";
}

KernelSource compress_source(size_t size, int nd, int items) {
  std::string t = bytes_type(size), n = std::to_string(nd);
  return {kHead + "xrt_mask_compress(" + t + "* out, const char* v, " + layout_type(nd, 1) +
              " layout, const xrt::uint8_t* mask, xrt::index_t n, char* work, xrt::index_t "
              "tiles) {\n  xrt::mask::compress<" + t + ", " + std::to_string(items) +
              ">(out, xrt::mask::Strided<" + t + ", " + n +
              ">{v, layout}, mask, n, work, tiles);\n}\n",
          {}};
}

KernelSource offsets_source(int nd) {
  return {kHead + "xrt_mask_offsets(xrt::int64_t* out, " + layout_type(nd, 1) +
              " layout, const xrt::uint8_t* mask, xrt::index_t n, char* work, xrt::index_t "
              "tiles) {\n  xrt::mask::compress<xrt::int64_t, 16>(out, xrt::mask::Offset<" +
              std::to_string(nd) + ">{layout}, mask, n, work, tiles);\n}\n",
          {}};
}

KernelSource expand_source(size_t size, int nd, int items) {
  std::string t = bytes_type(size);
  return {kHead + "xrt_mask_expand(char* v, " + layout_type(nd, 1) + " layout, const " + t +
              "* values, const xrt::uint8_t* mask, xrt::index_t n, char* work, xrt::index_t "
              "tiles) {\n  xrt::mask::expand<" + t + ", " + std::to_string(items) + ", " +
              std::to_string(nd) + ">(v, layout, values, mask, n, work, tiles);\n}\n",
          {}};
}

KernelSource fill_source(size_t size, int nd) {
  std::string t = bytes_type(size);
  return {kHead + "xrt_mask_fill(char* v, const char* mask, " + layout_type(nd, 2) +
              " layout, const " + t + "* value, xrt::index_t n) {\n  xrt::mask::fill<" + t +
              ", " + std::to_string(nd) + ">(v, mask, layout, value, n);\n}\n",
          {}};
}

KernelSource count_source(DType dtype, int nd) {
  return {kHead + "xrt_mask_count(const char* x, " + layout_type(nd, 1) +
              " layout, xrt::index_t n, unsigned long long* total) {\n  xrt::mask::count<" +
              element_type(dtype) + ", " + std::to_string(nd) + ">(x, layout, n, total);\n}\n",
          {}};
}

KernelSource count_bytes_source() {
  return {kHead + "xrt_mask_count_bytes(const xrt::uint8_t* x, xrt::index_t n, "
                  "unsigned long long* total) {\n  xrt::mask::count_bytes(x, n, total);\n}\n",
          {}};
}

/// Positions a thread of nonzero's runs takes: mask.cuh's RunsOf<T> * kRun.
int run_positions(size_t itemsize) { return itemsize == 1 ? 2 * 16 : 16; }

/// nonzero's kernel: by ballot rows of `items` per thread, or by runs (items 0: Note
/// [Nonzero by runs], x 16-byte aligned).
KernelSource nonzero_source(DType dtype, int nd, int items = 24) {
  std::string t = element_type(dtype), n = std::to_string(nd);
  std::string call = items == 0 ? "xrt::mask::nonzero_runs<" + t + ", " + n + ">"
                                : "xrt::mask::nonzero<" + t + ", " + std::to_string(items) +
                                      ", " + n + ">";
  return {kHead + "xrt_nonzero(const " + t + "* x, xrt::index_t n, xrt::mask::Coordinates<" + n +
              "> c, char* work, xrt::index_t tiles) {\n  " + call +
              "(x, n, c, work, tiles);\n}\n",
          {}};
}

template <class... Args> std::string key_of(const char* format, Args... args) {
  char key[64];
  std::snprintf(key, sizeof key, format, args...);
  return key;
}

/// v's axes [first, last) as a view.
Tensor axes_of(const Tensor& v, int first, int last) {
  Dims shape(v.shape().begin() + first, v.shape().begin() + last);
  Dims strides(v.strides().begin() + first, v.strides().begin() + last);
  return v.as_strided(std::move(shape), std::move(strides), v.byte_offset());
}

/// The parts of v[..., mask, ...] with the mask over v's axes [axis, axis + mask.ndim):
/// the masked axes (seen with the mask's shape), the outer and the inner ones.
struct MaskedView {
  Tensor masked, outer, inner;
  int64_t pn, qn;
  MaskedView(const Tensor& v, int axis, const Tensor& mask)
      : outer(axes_of(v, 0, axis)), inner(axes_of(v, axis + mask.ndim(), v.ndim())) {
    Dims strides(v.strides().begin() + axis, v.strides().begin() + axis + mask.ndim());
    masked = v.as_strided(mask.shape(), std::move(strides), v.byte_offset());
    pn = outer.numel();
    qn = inner.numel();
  }
  bool whole() const { return pn == 1 && qn == 1; }
};

struct Launch {
  int device;
  CUstream stream;
  explicit Launch(const Tensor& t) : device(t.device().index) {
    activate(device);
    stream = current_stream(device);
  }
};

/// The byte offsets in `masked` of its `count` positions selected by mask (contiguous).
Tensor selected_offsets(const Tensor& masked, const Tensor& mask, int64_t count,
                        const Launch& l) {
  Tensor offsets = empty(Dims{count}, DType::Int64, masked.device());
  OneLayout layout = one_layout(masked);
  int64_t n = mask.numel();
  TileWork work(n, 16, masked.device(), l.stream);
  CUfunction fn = jit_function(l.device, key_of("mask/offsets/%d", layout.ndim),
                               [&] { return offsets_source(layout.ndim); }, "xrt_mask_offsets");
  void *out = offsets.data(), *m = mask.data(), *w = work.data();
  void* params[] = {&out, layout.data.data(), &m, &n, &w, &work.tiles};
  launch(fn, {work.blocks()}, {kBlock}, 0, l.stream, params);
  return offsets;
}

/// Unsigned kernel arguments of 32 or 64 bits, as index_type(index32) says.
struct Sizes {
  bool index32;
  uint32_t u32[3];
  uint64_t u64[3];
  Sizes(int64_t a, int64_t b, int64_t n)
      : index32(n <= INT32_MAX),
        u32{uint32_t(a), uint32_t(b), uint32_t(n)},
        u64{uint64_t(a), uint64_t(b), uint64_t(n)} {}
  void* arg(int j) { return index32 ? static_cast<void*>(&u32[j]) : static_cast<void*>(&u64[j]); }
};

// ---- kernels ------------------------------------------------------------------------------

void nonzero_count_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  Tensor& out = call.out();  // 0-d int64
  Launch l(out);
  XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(out.data()), 0, 8, l.stream);
  int64_t n = x.numel();
  if (n == 0) return;
  void* total = out.data();
  const void* data = x.data();
  unsigned max_blocks = static_cast<unsigned>(sm_count(l.device)) * 8;
  if (x.dtype() == DType::Bool && x.is_contiguous() &&
      reinterpret_cast<uintptr_t>(x.data()) % 16 == 0) {
    CUfunction fn = jit_function(l.device, "mask/count_bytes", [] { return count_bytes_source(); },
                                 "xrt_mask_count_bytes");
    void* params[] = {&data, &n, &total};
    launch(fn, {grid_blocks(n, int64_t(kBlock) * 64, max_blocks)}, {kBlock}, 0, l.stream,
           params);
    return;
  }
  StridedPlan plan = plan_strided({&x});
  DType dtype = x.dtype();
  CUfunction fn = jit_function(l.device, key_of("mask/count/%d/%d", int(dtype), plan.ndim),
                               [&] { return count_source(dtype, plan.ndim); }, "xrt_mask_count");
  void* params[] = {&data, plan.layout.data(), &n, &total};
  launch(fn, {grid_blocks(n, int64_t(kBlock) * 8, max_blocks)}, {kBlock}, 0, l.stream, params);
}

// x contiguous (the core's), one int64 output per dimension of the count's size.
void nonzero_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  int64_t n = x.numel();
  if (n == 0 || call.out(0).numel() == 0) return;
  Launch l(x);
  const int nd = x.ndim();
  std::vector<uint64_t> coordinates;  // mask.cuh's Coordinates<nd>: pointers, then sizes
  for (int d = 0; d < nd; ++d)
    coordinates.push_back(reinterpret_cast<uint64_t>(call.out(d).data()));
  for (int d = 0; d < nd; ++d) coordinates.push_back(uint64_t(x.shape()[d]));
  // Note: nonzero of 1e7 bool on an H200 by ballot rows: 65.5 us at 16 items per thread,
  // 63.3-63.7 from 20 to 28, 70.3 at 32 (tools/sweep_tile_items.py; torch 58.0). Aligned
  // data goes by runs (Note [Nonzero by runs]: 16 positions a run, two runs a thread for
  // bytes), unless XPURUNTIME_CUDA_TILE_ITEMS asks for ballot rows (to compare them).
  const int rows = tile_items(0);
  const bool runs = rows == 0 && reinterpret_cast<uintptr_t>(x.data()) % 16 == 0;
  const int items = runs ? 0 : rows ? rows : 24;
  TileWork work(n, runs ? run_positions(x.itemsize()) : items, x.device(), l.stream);
  DType dtype = x.dtype();
  CUfunction fn = jit_function(l.device, key_of("nonzero/%d/%d/%d", int(dtype), nd, items),
                               [&] { return nonzero_source(dtype, nd, items); }, "xrt_nonzero");
  const void* data = x.data();
  void* w = work.data();
  void* params[] = {&data, &n, coordinates.data(), &w, &work.tiles};
  launch(fn, {work.blocks()}, {kBlock}, 0, l.stream, params);
}

// out (contiguous: outer, count, inner) = v[..., mask, ...], the mask over v's axes
// [axis, axis + mask.ndim).
void masked_gather_kernel(const KernelCall& call) {
  const Tensor& v = call.in(0);
  Tensor mask = contiguous(call.in(1));
  Tensor& out = call.out();
  int axis = static_cast<int>(call.attrs->axes[0]);
  int64_t n = mask.numel();
  if (n == 0 || out.numel() == 0) return;
  Launch l(v);
  MaskedView view(v, axis, mask);
  size_t size = v.itemsize();
  void *o = out.data(), *vp = v.data(), *m = mask.data();
  if (view.whole()) {
    OneLayout layout = one_layout(view.masked);
    int items = items_for(size);
    TileWork work(n, items, v.device(), l.stream);
    CUfunction fn = jit_function(
        l.device, key_of("mask/compress/%zu/%d/%d", size, layout.ndim, items),
        [&] { return compress_source(size, layout.ndim, items); }, "xrt_mask_compress");
    void* w = work.data();
    void* params[] = {&o, &vp, layout.data.data(), &m, &n, &w, &work.tiles};
    launch(fn, {work.blocks()}, {kBlock}, 0, l.stream, params);
    return;
  }
  int64_t count = out.shape()[axis];
  Tensor offsets = selected_offsets(view.masked, mask, count, l);
  OneLayout outer = one_layout(view.outer), inner = one_layout(view.inner);
  Sizes sizes(count, view.qn, out.numel());
  CUfunction fn = jit_function(
      l.device, key_of("mask/gather/%zu/%d/%d/%d", size, outer.ndim, inner.ndim, sizes.index32),
      [&] { return index_detail::gather_source(size, outer.ndim, inner.ndim, sizes.index32); },
      "xrt_gather");
  void* off = offsets.data();
  index_detail::launch_n(fn, out.numel(), l.device,
                         {&o, &vp, &off, outer.data.data(), inner.data.data(), sizes.arg(0),
                          sizes.arg(1), sizes.arg(2)});
}

// v[..., mask, ...] = values: values contiguous (outer, count, inner), or one element.
void masked_scatter_kernel(const KernelCall& call) {
  const Tensor& values = call.in(0);
  Tensor mask = contiguous(call.in(1));
  Tensor& v = call.out();
  int axis = static_cast<int>(call.attrs->axes[0]);
  int64_t n = mask.numel();
  if (n == 0 || v.numel() == 0) return;
  Launch l(v);
  size_t size = v.itemsize();
  void *vp = v.data(), *m = mask.data();
  const void* src = values.data();
  if (all_strides_zero(values)) {  // one value: the mask broadcast over v, elementwise
    Dims strides(v.ndim(), int64_t{0});
    for (int d = 0; d < mask.ndim(); ++d) strides[axis + d] = mask.strides()[d];
    Tensor broadcast = mask.as_strided(v.shape(), std::move(strides), mask.byte_offset());
    StridedPlan plan = plan_strided({&v, &broadcast});
    CUfunction fn =
        jit_function(l.device, key_of("mask/fill/%zu/%d", size, plan.ndim),
                     [&] { return fill_source(size, plan.ndim); }, "xrt_mask_fill");
    int64_t count = plan.numel;
    void* params[] = {&vp, &m, plan.layout.data(), &src, &count};
    launch(fn, {grid_blocks(count, int64_t(kBlock) * 4)}, {kBlock}, 0, l.stream, params);
    return;
  }
  int64_t count = values.shape()[axis];
  if (count == 0) return;
  MaskedView view(v, axis, mask);
  if (view.whole()) {
    OneLayout layout = one_layout(view.masked);
    int items = items_for(size);
    TileWork work(n, items, v.device(), l.stream);
    CUfunction fn = jit_function(
        l.device, key_of("mask/expand/%zu/%d/%d", size, layout.ndim, items),
        [&] { return expand_source(size, layout.ndim, items); }, "xrt_mask_expand");
    void* w = work.data();
    void* params[] = {&vp, layout.data.data(), &src, &m, &n, &w, &work.tiles};
    launch(fn, {work.blocks()}, {kBlock}, 0, l.stream, params);
    return;
  }
  Tensor offsets = selected_offsets(view.masked, mask, count, l);
  OneLayout outer = one_layout(view.outer), inner = one_layout(view.inner);
  int64_t total = view.pn * count * view.qn;
  Sizes sizes(count, view.qn, total);
  CUfunction fn = jit_function(
      l.device,
      key_of("mask/scatter/%zu/%d/%d/%d", size, outer.ndim, inner.ndim, sizes.index32),
      [&] {
        return index_detail::scatter_source(size, false, 0, outer.ndim, inner.ndim,
                                            sizes.index32);
      },
      "xrt_scatter");
  void *off = offsets.data(), *none = nullptr;
  index_detail::launch_n(fn, total, l.device,
                         {&vp, &src, &off, &none, &none, outer.data.data(), inner.data.data(),
                          sizes.arg(0), sizes.arg(1), sizes.arg(2)});
}

// ---- samples for CI -----------------------------------------------------------------------

/// Several sources as one (kernel names made unique), so CI compiles the headers once.
struct Combined {
  std::string source;
  int count = 0;
  void add(const KernelSource& s, const std::string& name) {
    std::string text = s.source;
    std::string unique = name + "_" + std::to_string(count++);
    text.replace(text.find(name + "("), name.size(), unique);
    source += text;
  }
};

std::vector<KernelSample> mask_samples() {
  Combined moves, counts;
  for (size_t size : {1, 2, 4, 8, 16}) {
    moves.add(compress_source(size, 1, items_for(size)), "xrt_mask_compress");
    moves.add(expand_source(size, 2, items_for(size)), "xrt_mask_expand");
    moves.add(fill_source(size, 3), "xrt_mask_fill");
  }
  moves.add(offsets_source(1), "xrt_mask_offsets");
  moves.add(offsets_source(3), "xrt_mask_offsets");
  for (int d = 0; d < kNumDTypes; ++d) {
    counts.add(count_source(DType(d), 1 + d % 3), "xrt_mask_count");
    counts.add(nonzero_source(DType(d), 1 + d % 4), "xrt_nonzero");
    counts.add(nonzero_source(DType(d), 1 + (d + 1) % 4, 0), "xrt_nonzero");
  }
  counts.add(count_bytes_source(), "xrt_mask_count_bytes");
  return {{"mask: compress, expand, fill, offsets", {moves.source, {}}},
          {"mask: count, nonzero", {counts.source, {}}}};
}

KernelInfo kernel(const char* op, KernelFn run, const char* description) {
  return kernel_info(op, "nvrtc", std::move(run), description);
}

}  // namespace

void register_mask_kernels(KernelRegistry& registry) {
  registry.add(kernel("nonzero_count", nonzero_count_kernel,
                      "per-warp counts added atomically into the int64 result"));
  registry.add(kernel("nonzero", nonzero_kernel,
                      "one-pass compaction (warp ballots, carry-in from earlier tiles in a fixed "
                      "tree) writing the coordinates"));
  registry.add(kernel("masked_gather", masked_gather_kernel,
                      "one-pass compaction of the selected elements; a mask over some axes "
                      "compacts byte offsets, then gathers blocks"));
  registry.add(kernel("masked_scatter", masked_scatter_kernel,
                      "one value: elementwise under the mask; values: one-pass compaction "
                      "(offsets, then a block scatter, for a mask over some axes)"));
  register_kernel_samples("mask", mask_samples);
}

}  // namespace xrt::cuda
