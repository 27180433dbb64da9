// cpp/src/cuda/set_kernels.cpp: unique and isin on CUDA, with the CPU's results (values
// ascending, -0.0 == +0.0, each NaN its own value and never found). Device code:
// cpp/kernels/xrt/set.cuh, on sort.cuh's keys and sort_kernels.cpp's radix sort.
//
// - unique: (key, index) pairs sorted stably (complex: by the (real, imaginary) keys, then
//   by NaN class, NumPy's order), then one compaction pass over the sorted positions (a
//   group starts where the key changes, and at every NaN) writes the values, first
//   indices, inverse and group starts; the counts follow from the starts. Integers without
//   index outputs sort their keys alone. The number of groups is written on the device:
//   the core's read of it is the one transfer to the host.
// - isin: x2's keys sorted the same way, binary-searched for each element of x1 (from
//   shared memory when they fit); nothing crosses to the host.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/compaction.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/radix_sort.h"
#include "cuda/reduce_common.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/registry.h"
#include "xpuruntime/sorting.h"

namespace xrt::cuda {
namespace {

using compaction::kBlock;
using compaction::TileWork;

// Positions per thread of unique's groups pass. On an H200 (unique_counts of 1e7 int32) 8 to
// 32 measured within 3% of each other (XPURUNTIME_CUDA_TILE_ITEMS sweeps it).
constexpr int kGroupItems = 8;
constexpr int64_t kSharedKeys = 48 * 1024;     // isin searches shared memory up to this

const std::string kHead =
    "#include \"xrt/set.cuh\"\nextern \"C\" __global__ void __launch_bounds__(256) ";

/// Bytes of a key of dtype (set.cuh's SetKey<T>::K).
int64_t key_bytes(DType d) { return is_complex(d) || itemsize(d) == 8 ? 8 : 4; }

/// Bits a sort pass of dtype's keys orders by.
int key_bits(DType d) {
  if (d == DType::Bool) return 4;
  if (is_complex(d)) return 64;
  return 8 * static_cast<int>(itemsize(d));
}

std::string key_type(DType d) { return "xrt::set::SetKey<" + std::string(device_type(d)) + ">::K"; }

/// encode and rekey of dtype's keys: of the values, of complex128's imaginary parts, of
/// complex NaN classes (set.cuh's pass_key).
KernelSource sort_source(DType d) {
  std::string t = device_type(d), k = key_type(d), s;
  auto add = [&](const std::string& suffix, int part) {
    std::string p = std::to_string(part);
    s += kHead + "xrt_set_encode" + suffix + "(const " + t + "* x, " + k +
         "* keys, xrt::uint32_t* index, xrt::index_t n) {\n  xrt::set::encode<" + t + ", " +
         p + ">(x, keys, index, n);\n}\n";
    s += kHead + "xrt_set_rekey" + suffix + "(const " + t + "* x, " + k +
         "* keys, const xrt::uint32_t* index, xrt::index_t n) {\n  xrt::set::rekey<" + t +
         ", " + p + ">(x, keys, index, n);\n}\n";
  };
  add("", 0);
  if (d == DType::Complex128) add("_imag", 1);
  if (is_complex(d)) add("_class", 2);
  return {s, {}};
}

KernelSource unique_source(DType d, int items = kGroupItems) {
  std::string t = device_type(d), k = key_type(d);
  return {kHead + "xrt_unique_groups(const " + t + "* x, const " + k +
              "* keys, const xrt::uint32_t* order, xrt::index_t n, " + t +
              "* values, xrt::int64_t* indices, xrt::int64_t* inverse, xrt::uint32_t* starts, "
              "char* work, xrt::index_t tiles, xrt::int64_t* groups) {\n  xrt::set::groups<" +
              t + ", " + std::to_string(items) +
              ">(x, keys, order, n, values, indices, inverse, starts, work, tiles, groups);\n}\n" +
              kHead +
              "xrt_unique_counts(xrt::int64_t* counts, const xrt::uint32_t* starts, const "
              "xrt::int64_t* groups, xrt::index_t n) {\n  xrt::set::counts(counts, starts, "
              "groups, n);\n}\n",
          {}};
}

KernelSource isin_source(DType d, int nd, bool shared) {
  std::string t = device_type(d), k = key_type(d), n = std::to_string(nd);
  return {kHead + "xrt_isin(char* out, const char* x1, xrt::StridedLayout<" + n +
              ", 2> layout, xrt::index_t n, const " + k + "* keys, const " + k +
              "* imags, xrt::index_t m, int invert) {\n  xrt::set::isin<" + t + ", " + n + ", " +
              (shared ? "true" : "false") +
              ">(out, x1, layout, n, keys, imags, m, invert != 0);\n}\n",
          {}};
}

template <class... Args> std::string key_of(const char* format, Args... args) {
  char key[64];
  std::snprintf(key, sizeof key, format, args...);
  return key;
}


struct Launch {
  int device;
  CUstream stream;
  explicit Launch(const Tensor& t) : device(t.device().index) {
    activate(device);
    stream = current_stream(device);
  }
};

/// x's keys sorted stably, and the positions they came from (null when not wanted).
struct SortedKeys {
  Tensor buffer;
  char* keys = nullptr;
  char* order = nullptr;
};

/// Sorts the keys of a contiguous x of n elements (0 < n < 2^32), with the positions they
/// came from unless keys_only (not for complex128, whose passes need them). Complex
/// values sort by (real, imaginary) keys, from the least significant pass up, then, when
/// classes (unique's order: NumPy's), by NaN class; a search needs no classes.
SortedKeys sort_keys(const Tensor& x, int64_t n, const Launch& l, bool keys_only,
                     bool classes) {
  DType d = x.dtype();
  int64_t kb = key_bytes(d);
  int64_t keys_bytes = round_up(n * kb, 256), index_bytes = keys_only ? 0 : round_up(n * 4, 256);
  SortedKeys s;
  s.buffer = device_scratch(2 * (keys_bytes + index_bytes), x.device());
  char* w = s.buffer.data();
  char* index = keys_only ? nullptr : w + 2 * keys_bytes;
  RadixBuffers b{{w, w + keys_bytes}, {index, index ? index + index_bytes : nullptr}};
  const void* data = x.data();
  // Keys as wide as the values: the sort encodes them itself (no pass of encode).
  if (!is_complex(d) &&
      radix_sort_encoded(l.device, d, data, n, b.keys[1], reinterpret_cast<uint32_t*>(b.index[1]),
                         b.keys[0], reinterpret_cast<uint32_t*>(b.index[0]))) {
    s.keys = b.keys[1];
    s.order = b.index[1];
    return s;
  }
  std::string key = key_of("set/sort/%d", int(d));
  auto fn = [&](const char* name) {
    return jit_function(l.device, key, [&] { return sort_source(d); }, name);
  };
  unsigned blocks = grid_blocks(n, kBlock, 1u << 16);
  {
    void* params[] = {&data, &b.keys[0], &b.index[0], &n};
    launch(fn(d == DType::Complex128 ? "xrt_set_encode_imag" : "xrt_set_encode"), {blocks},
           {kBlock}, 0, l.stream, params);
  }
  int from = radix_sort_pairs(l.device, b, 1, n, kb == 8, key_bits(d));
  // A further pass, stably by the keys rekey writes for the pairs in their current order.
  auto pass = [&](const char* rekey, int bits) {
    RadixBuffers next{{b.keys[from], b.keys[from ^ 1]}, {b.index[from], b.index[from ^ 1]}};
    void* params[] = {&data, &next.keys[0], &next.index[0], &n};
    launch(fn(rekey), {blocks}, {kBlock}, 0, l.stream, params);
    from ^= radix_sort_pairs(l.device, next, 1, n, true, bits);
  };
  if (d == DType::Complex128) pass("xrt_set_rekey", 64);
  if (classes && is_complex(d)) pass("xrt_set_rekey_class", 4);
  s.keys = b.keys[from];
  s.order = b.index[from];
  return s;
}

void check_length(int64_t n, const char* op) {
  if (n > int64_t(UINT32_MAX))
    throw UnsupportedOperationError(std::string(op) +
                                    " on CUDA: more than 2^32 - 1 elements to sort");
}

// in: 1-D contiguous x; out: values, indices, inverse_indices, counts (x's size, or empty
// when not wanted), and the 0-d int64 number of groups (cpu/set_kernels.h).
void unique_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  int64_t n = x.shape()[0];
  Launch l(call.out(4));
  void* groups = call.out(4).data();
  if (n == 0) {
    XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(groups), 0, 8, l.stream);
    return;
  }
  check_length(n, "unique");
  DType d = x.dtype();
  Tensor flat = x.is_contiguous() ? x : contiguous(x);
  auto wanted = [&](int i) { return call.out(i).numel() ? call.out(i).data() : nullptr; };
  void *values = call.out(0).data(), *indices = wanted(1), *inverse = wanted(2);
  void* counts = wanted(3);
  // Integers need no positions unless an index output asks for them: a key is its value.
  bool keys_only = !indices && !inverse && !is_floating(d) && !is_complex(d);
  SortedKeys sorted = sort_keys(flat, n, l, keys_only, true);
  Tensor starts_buffer;
  void* starts = nullptr;
  if (counts) {
    starts_buffer = device_scratch(n * 4, x.device());
    starts = starts_buffer.data();
  }
  const int items = tile_items(kGroupItems);
  TileWork work(n, items, x.device(), l.stream);
  std::string key = key_of("set/unique/%d/%d", int(d), items);
  auto fn = [&](const char* name) {
    return jit_function(l.device, key, [&] { return unique_source(d, items); }, name);
  };
  const void* data = flat.data();
  void *keys = sorted.keys, *order = sorted.order, *w = work.data();
  void* params[] = {&data, &keys, &order, &n, &values, &indices, &inverse, &starts,
                    &w, &work.tiles, &groups};
  launch(fn("xrt_unique_groups"), {work.blocks()}, {kBlock}, 0, l.stream, params);
  if (counts) {
    void* cp[] = {&counts, &starts, &groups, &n};
    unsigned blocks = grid_blocks(n, kBlock, static_cast<unsigned>(sm_count(l.device)) * 16);
    launch(fn("xrt_unique_counts"), {blocks}, {kBlock}, 0, l.stream, cp);
  }
}

// in: x1, x2 (1-D contiguous) of one dtype; out: bool of x1's shape.
void isin_kernel(const KernelCall& call) {
  const Tensor& x1 = call.in(0);
  Tensor x2 = contiguous(call.in(1));
  Tensor& out = call.out();
  int invert = static_cast<const SortingAttrs&>(*call.attrs).invert ? 1 : 0;
  int64_t n = out.numel(), m = x2.numel();
  if (n == 0) return;
  check_length(m, "isin");
  Launch l(out);
  DType d = x1.dtype();
  SortedKeys sorted;
  Tensor imag_buffer;
  void *keys = nullptr, *imags = nullptr;
  if (m > 0) {
    // Only complex128 needs the order (to look up imaginary parts).
    sorted = sort_keys(x2, m, l, d != DType::Complex128, false);
    keys = sorted.keys;
    if (d == DType::Complex128) {  // the imaginary parts' keys, in the same order
      imag_buffer = device_scratch(m * 8, x2.device());
      imags = imag_buffer.data();
      CUfunction fn = jit_function(l.device, key_of("set/sort/%d", int(d)),
                                   [&] { return sort_source(d); }, "xrt_set_rekey_imag");
      const void* data = x2.data();
      void* params[] = {&data, &imags, &sorted.order, &m};
      launch(fn, {grid_blocks(m, kBlock, 1u << 16)}, {kBlock}, 0, l.stream, params);
    }
  }
  int64_t shared_bytes = m * key_bytes(d) * (d == DType::Complex128 ? 2 : 1);
  bool shared = m > 0 && shared_bytes <= kSharedKeys;
  StridedPlan plan = plan_strided({&out, &x1});
  CUfunction fn = jit_function(l.device, key_of("set/isin/%d/%d/%d", int(d), plan.ndim, shared),
                               [&] { return isin_source(d, plan.ndim, shared); }, "xrt_isin");
  // Shared keys are loaded once per block: as many blocks as stay resident, looping.
  unsigned max_blocks = 1u << 20;
  if (shared) {
    int resident = 0;
    XRT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &resident, fn, int(kBlock),
           static_cast<size_t>(shared_bytes));
    max_blocks = static_cast<unsigned>(sm_count(l.device) * std::max(resident, 1));
  }
  void* o = out.data();
  const void* a = x1.data();
  void* params[] = {&o, &a, plan.layout.data(), &n, &keys, &imags, &m, &invert};
  launch(fn, {grid_blocks(n, int64_t(kBlock) * 4, max_blocks)}, {kBlock},
         shared ? static_cast<size_t>(shared_bytes) : 0, l.stream, params);
}

// ---- samples for CI -----------------------------------------------------------------------

std::vector<KernelSample> set_samples() {
  std::vector<KernelSample> samples;
  for (int i = 0; i < kNumDTypes; ++i) {
    DType d = DType(i);
    std::string name(dtype_info(d).name);
    // One source per dtype: the sort passes, unique's groups and a search.
    KernelSource s = sort_source(d);
    s.source += unique_source(d).source + isin_source(d, 1 + i % 3, i % 2 == 0).source;
    samples.push_back({"set/" + name, s});
  }
  return samples;
}

KernelInfo kernel(const char* op, KernelFn run, const char* description) {
  return kernel_info(op, "nvrtc", std::move(run), description);
}

}  // namespace

void register_set_kernels(KernelRegistry& registry) {
  registry.add(kernel("unique", unique_kernel,
                      "stable radix sort of (key, index) pairs, then one compaction pass over "
                      "the group starts; the group count stays on the device"));
  registry.add(kernel("isin", isin_kernel,
                      "x2's keys radix-sorted, binary search per element of x1 (shared memory "
                      "when they fit)"));
  register_kernel_samples("set", set_samples);
}

}  // namespace xrt::cuda
