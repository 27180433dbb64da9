// cpp/src/cuda/sort_kernels.cpp: sort, argsort and searchsorted on CUDA. Device code:
// cpp/kernels/xrt/sort.cuh and radix_sort.cuh (order-preserving keys as the CPU's, so
// results match it bit for bit).
//
// sort/argsort view the tensors with the sort axis last; a non-contiguous input is copied
// contiguous first, and a result whose view is not contiguous is sorted into a buffer and
// copied into place. Rows of up to kShortRow elements are sorted a block each (bitonic, in
// shared memory); longer rows by the onesweep LSD radix sort (onesweep.cpp, radix_sort.cuh: 8-bit
// digits, all rows at once, passes that move nothing skipped on the device), which also
// sorts the pre-encoded (key, payload) pairs of radix_sort_pairs (unique, isin). Rows of
// 2^30 elements and more take the first radix sort (4-bit digits, sort.cuh), which
// XPURUNTIME_CUDA_SORT=lsd4 also selects for comparisons; XPURUNTIME_CUDA_SORT=onesweep:N:B
// sets the onesweep pass's items per thread and its launch bound of B blocks per
// multiprocessor (benchmarks sweep them).
#include <algorithm>
#include <string>
#include <tuple>

#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/onesweep.h"
#include "cuda/radix_sort.h"
#include "cuda/reduce_common.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/registry.h"
#include "xpuruntime/sorting.h"

namespace xrt::cuda {
namespace {

bool sortable(DType d) { return is_numeric(d) && !is_complex(d); }

constexpr int64_t kShortRow = 2048;  // rows this short are sorted in shared memory
constexpr int kBlock = 256;           // kBlock of sort.cuh
constexpr int64_t kTile = 1024;       // kTile of sort.cuh
constexpr int kBuckets = 16;          // kBuckets of sort.cuh
constexpr int kScanBlock = 1024;


/// The kernels of one (dtype, sort or argsort) around the radix passes, in one source.
std::string sort_source(DType dtype, bool arg) {
  std::string t = device_type(dtype);
  std::string a = arg ? "true" : "false";
  return "#include \"xrt/sort.cuh\"\n"
         "namespace xrt_sort_types { typedef " + t + " T; typedef xrt::sort::Key<T>::K K; }\n"
         "using xrt_sort_types::T;\nusing xrt_sort_types::K;\n"
         "extern \"C\" __global__ void xrt_sort_bitonic(const T* in, void* out, xrt::index_t rows,"
         " xrt::index_t n, int p, int descending) {\n"
         "  xrt::sort::bitonic_rows<T, " + a + ">(in, out, rows, n, p, descending != 0);\n}\n"
         "extern \"C\" __global__ void __launch_bounds__(256) xrt_sort_encode(const T* in, K* keys,"
         " xrt::uint32_t* index, xrt::index_t rows, xrt::index_t n, int descending) {\n"
         "  xrt::sort::encode<T>(in, keys, index, rows, n, descending != 0);\n}\n"
         "extern \"C\" __global__ void __launch_bounds__(256) xrt_sort_gather(const T* in, void* out,"
         " const xrt::uint32_t* index, xrt::index_t rows, xrt::index_t n) {\n"
         "  xrt::sort::gather<T, " + a + ">(in, out, index, rows, n);\n}\n";
}

/// The radix passes (histogram, scan of the counts, scatter) for 32- or 64-bit keys.
std::string radix_source(bool wide) {
  return std::string("#include \"xrt/sort.cuh\"\n") +
         "typedef " + (wide ? "xrt::uint64_t" : "xrt::uint32_t") + " K;\n"
         "extern \"C\" __global__ void __launch_bounds__(256) xrt_sort_histogram(const K* keys,"
         " xrt::uint32_t* counts, xrt::index_t n, xrt::index_t tiles, int shift) {\n"
         "  xrt::sort::histogram<K>(keys, counts, n, tiles, shift);\n}\n"
         "extern \"C\" __global__ void __launch_bounds__(1024) xrt_sort_scan(xrt::uint32_t* counts,"
         " xrt::index_t tiles) {\n  xrt::sort::scan_counts(counts, tiles);\n}\n"
         "extern \"C\" __global__ void __launch_bounds__(256) xrt_sort_scatter(const K* keys,"
         " const xrt::uint32_t* index, K* keys_out, xrt::uint32_t* index_out,"
         " const xrt::uint32_t* counts, xrt::index_t n, xrt::index_t tiles, int shift) {\n"
         "  xrt::sort::scatter<K>(keys, index, keys_out, index_out, counts, n, tiles, shift);\n}\n";
}

std::string search_source(DType dtype) {
  return std::string("#include \"xrt/sort.cuh\"\n") +
         "extern \"C\" __global__ void __launch_bounds__(256) xrt_searchsorted(const char* a,"
         " xrt::index_t a_step, xrt::index_t n, const char* sorter, xrt::index_t sorter_step,"
         " const char* needles, xrt::index_t needle_step, xrt::index_t m, xrt::int64_t* out,"
         " int right, unsigned long long* error) {\n  xrt::sort::search<" +
         device_type(dtype) +
         ">(a, a_step, n, sorter, sorter_step, needles, needle_step, m, out, right != 0, error);\n}\n";
}

int64_t key_bytes(DType d) { return itemsize(d) > 4 ? 8 : 4; }

/// What the sort of contiguous rows needs to know.
struct SortJob {
  DType dtype;
  bool arg, descending;
  const char* in;
  char* out;
  int64_t rows, n;
  Device device;
  CUstream stream;
};

/// The 4-bit LSD radix sort of (key, index) pairs (radix_sort_pairs), then a gather.
template <class Fn> void lsd4_sort(const SortJob& job, Fn&& fn) {
  const int64_t rows = job.rows, n = job.n, total = rows * n;
  const int64_t kb = key_bytes(job.dtype);
  int64_t keys_bytes = round_up(total * kb, 256), index_bytes = round_up(total * 4, 256);
  Tensor work = device_scratch(2 * (keys_bytes + index_bytes), job.device);
  char* w = work.data();
  char* keys[2] = {w, w + keys_bytes};
  char* index[2] = {w + 2 * keys_bytes, w + 2 * keys_bytes + index_bytes};
  const char* in_ptr = job.in;
  char* out_ptr = job.out;
  int descending = job.descending ? 1 : 0;
  int64_t rows_arg = rows, n_arg = n;
  unsigned stream_blocks = grid_blocks(total, kBlock, 1u << 16);
  {
    void* params[] = {&in_ptr, &keys[0], &index[0], &rows_arg, &n_arg, &descending};
    launch(fn("xrt_sort_encode"), {stream_blocks}, {kBlock}, 0, job.stream, params);
  }
  int from = radix_sort_pairs(job.device.index, {{keys[0], keys[1]}, {index[0], index[1]}},
                              rows, n, kb == 8, 8 * static_cast<int>(itemsize(job.dtype)));
  void* gp[] = {&in_ptr, &out_ptr, &index[from], &rows_arg, &n_arg};
  launch(fn("xrt_sort_gather"), {stream_blocks}, {kBlock}, 0, job.stream, gp);
}

template <bool Arg> void sort_kernel(const KernelCall& call) {
  const auto& attrs = static_cast<const SortingAttrs&>(*call.attrs);
  const Tensor& x = call.in(0);
  const Tensor& out = call.out();
  DType dtype = x.dtype();
  if (!sortable(dtype)) throw TypeError("sort is not defined for complex dtypes");
  if (out.numel() == 0) return;
  int axis = static_cast<int>(attrs.axes[0]);
  const int64_t n = x.shape()[axis];
  const int64_t rows = x.numel() / n;
  if (n > int64_t(0xffffffffLL))
    throw UnsupportedOperationError("sort on CUDA: rows longer than 2^32 - 1 elements");
  Dims perm;
  for (int d = 0; d < x.ndim(); ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  Tensor xc = contiguous(x.permute(perm));
  Tensor ov = out.permute(perm);
  const bool direct = ov.is_contiguous();
  Tensor oc = direct ? ov : empty(ov.shape(), out.dtype(), out.device());

  int device = out.device().index;
  activate(device);
  SortJob job{dtype, Arg, attrs.descending, xc.data(), oc.data(), rows, n, out.device(),
              current_stream(device)};
  std::string key = std::string("sort/") + std::string(dtype_info(dtype).name) + (Arg ? "/a" : "/s");
  auto fn = [&](const char* name) {
    return jit_function(device, key, [&] { return KernelSource{sort_source(dtype, Arg)}; },
                        name);
  };
  if (n <= kShortRow) {
    int p = 1;
    while (p < n) p <<= 1;
    unsigned threads = static_cast<unsigned>(std::clamp<int64_t>(p / 2, 32, 1024));
    unsigned blocks = static_cast<unsigned>(std::min<int64_t>(rows, int64_t(1) << 30));
    int64_t kb = key_bytes(dtype);
    int descending = job.descending ? 1 : 0;
    const char* in_ptr = job.in;
    char* out_ptr = job.out;
    int64_t rows_arg = rows, n_arg = n;
    void* params[] = {&in_ptr, &out_ptr, &rows_arg, &n_arg, &p, &descending};
    launch(fn("xrt_sort_bitonic"), {blocks}, {threads}, size_t(p) * size_t(kb + 4), job.stream,
           params);
  } else if (Onesweep shape = onesweep_shape(dtype, Arg); shape.items > 0 && n < kOnesweepRow) {
    OnesweepRows sorted{job.in, job.out, nullptr, nullptr, nullptr, nullptr, job.descending,
                        rows, n, job.device, job.stream};
    onesweep_sort(sort_kind(dtype, Arg), sorted, shape);
  } else {
    lsd4_sort(job, fn);
  }
  if (!direct) copy_into(ov, oc);
}

void searchsorted_kernel(const KernelCall& call) {
  const auto& attrs = static_cast<const SortingAttrs&>(*call.attrs);
  const Tensor& a = call.in(0);
  DType dtype = a.dtype();
  if (!sortable(dtype)) throw TypeError("searchsorted is not defined for complex dtypes");
  const Tensor& out = call.out();
  if (!out.is_contiguous())
    throw ValueError("searchsorted on CUDA: the result must be contiguous");
  int64_t m = out.numel();
  if (m == 0) return;
  Tensor needles = contiguous(call.in(1));
  const bool with_sorter = call.num_inputs == 3;
  int64_t n = a.shape()[0];
  int64_t a_step = a.strides()[0] * static_cast<int64_t>(a.itemsize());
  int64_t needle_step = static_cast<int64_t>(needles.itemsize());
  const char* a_ptr = a.data();
  const char* sorter = with_sorter ? call.in(2).data() : nullptr;
  int64_t sorter_step = with_sorter ? call.in(2).strides()[0] * 8 : 0;
  const char* needle_ptr = needles.data();
  char* out_ptr = out.data();
  int right = attrs.right ? 1 : 0;
  int device = out.device().index;
  activate(device);
  CUstream stream = current_stream(device);
  Tensor error;
  char* error_ptr = nullptr;
  if (with_sorter) {
    error = full(Dims{}, Scalar::from_int(0), DType::Int64, out.device());
    error_ptr = error.data();
  }
  std::string key = std::string("searchsorted/") + std::string(dtype_info(dtype).name);
  CUfunction fn = jit_function(device, key, [&] { return KernelSource{search_source(dtype)}; },
                               "xrt_searchsorted");
  void* params[] = {&a_ptr, &a_step, &n, &sorter, &sorter_step, &needle_ptr, &needle_step,
                    &m, &out_ptr, &right, &error_ptr};
  launch(fn, {grid_blocks(m, kBlock, 1u << 16)}, {kBlock}, 0, stream, params);
  if (with_sorter && item(error).i != 0)
    throw IndexError("searchsorted: sorter holds an index out of bounds for x1 of size " +
                     std::to_string(n));
}

/// For the compile check: sort of every real dtype, argsort of a few, searchsorted of a few,
/// the onesweep kernels of a few.
std::vector<KernelSample> sort_samples() {
  std::vector<KernelSample> samples;
  for (int d = 0; d < kNumDTypes; ++d) {
    DType dtype = DType(d);
    if (!sortable(dtype)) continue;
    samples.push_back({std::string("sort/") + std::string(dtype_info(dtype).name),
                       {sort_source(dtype, false)}});
  }
  for (DType dtype : {DType::Float32, DType::Int64, DType::Int8, DType::BFloat16})
    samples.push_back({std::string("argsort/") + std::string(dtype_info(dtype).name),
                       {sort_source(dtype, true)}});
  for (bool wide : {false, true})
    samples.push_back({wide ? "radix/64" : "radix/32", {radix_source(wide)}});
  for (DType dtype : {DType::Float64, DType::Float16, DType::Int8, DType::UInt64})
    samples.push_back({std::string("searchsorted/") + std::string(dtype_info(dtype).name),
                       {search_source(dtype)}});
  // The onesweep radix sort: every key width, float sorts (with the fix-up) and argsorts.
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::Int64,
                      DType::BFloat16, DType::UInt8})
    samples.push_back({std::string("radix/") + std::string(dtype_info(dtype).name),
                       {onesweep_source(sort_kind(dtype, false), onesweep_shape(dtype, false))}});
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int16, DType::Int8})
    samples.push_back({std::string("radix_arg/") + std::string(dtype_info(dtype).name),
                       {onesweep_source(sort_kind(dtype, true), onesweep_shape(dtype, true))}});
  // radix_sort_encoded: keys (and positions) of values.
  for (DType dtype : {DType::Int32, DType::Float64})
    for (bool positions : {false, true})
      samples.push_back({"radix_encoded/" + std::string(dtype_info(dtype).name) +
                             (positions ? "/p" : ""),
                         {onesweep_source(encoded_kind(dtype, positions),
                                          onesweep_shape(dtype, positions))}});
  // radix_sort_pairs: keys alone and with a payload, of both widths, a few pass counts.
  for (auto [wide, payload, bits] : {std::tuple{false, false, 32}, std::tuple{false, true, 8},
                                     std::tuple{true, true, 64}, std::tuple{true, true, 4},
                                     std::tuple{true, false, 40}})
    samples.push_back({"radix_pairs/" + std::to_string(wide) + std::to_string(payload) +
                           std::to_string(bits),
                       {onesweep_source(pairs_kind(wide, payload, bits),
                                        onesweep_shape(wide ? DType::UInt64 : DType::UInt32,
                                                       payload))}});
  return samples;
}

KernelInfo kernel(const char* op, KernelFn run, const char* description) {
  return kernel_info(op, "nvrtc", std::move(run), description);
}

}  // namespace

int radix_sort_pairs(int device, const RadixBuffers& b, int64_t rows, int64_t n, bool wide,
                     int bits) {
  if (rows * n == 0 || bits <= 0) return 0;
  const bool payload = b.index[0] != nullptr;
  const OnesweepKind kind = pairs_kind(wide, payload, bits);
  if (Onesweep shape = onesweep_shape(kind.dtype, payload); shape.items > 0 && n < kOnesweepRow) {
    auto* index_in = reinterpret_cast<uint32_t*>(b.index[0]);
    // The input buffers serve as the sort's second intermediate buffers.
    OnesweepRows pairs{b.keys[0], b.keys[1], index_in, reinterpret_cast<uint32_t*>(b.index[1]),
                       b.keys[0], index_in, false, rows, n,
                       Device::cuda(device),
                       current_stream(device)};
    onesweep_sort(kind, pairs, shape);
    return 1;
  }
  // Rows of 2^30 and more (or XPURUNTIME_CUDA_SORT=lsd4): the 4-bit radix sort.
  int64_t tiles = (n + kTile - 1) / kTile;
  CUstream stream = current_stream(device);
  Tensor counts = device_scratch(rows * kBuckets * tiles * 4,
                                 Device::cuda(device));
  char* counts_ptr = counts.data();
  const char* key = wide ? "radix/64" : "radix/32";
  auto fn = [&](const char* name) {
    return jit_function(device, key, [&] { return KernelSource{radix_source(wide)}; }, name);
  };
  CUfunction histogram = fn("xrt_sort_histogram"), scan = fn("xrt_sort_scan"),
             scatter = fn("xrt_sort_scatter");
  const unsigned tile_blocks = grid_dim(rows * tiles, 'x', "radix sort");
  const unsigned row_blocks = grid_dim(rows, 'x', "radix sort");
  char* keys[2] = {b.keys[0], b.keys[1]};
  char* index[2] = {b.index[0], b.index[1]};
  int from = 0;
  for (int shift = 0; shift < bits; shift += 4, from ^= 1) {
    void* hp[] = {&keys[from], &counts_ptr, &n, &tiles, &shift};
    launch(histogram, {tile_blocks}, {kBlock}, 0, stream, hp);
    void* sp[] = {&counts_ptr, &tiles};
    launch(scan, {row_blocks}, {kScanBlock}, 0, stream, sp);
    void* xp[] = {&keys[from], &index[from], &keys[from ^ 1], &index[from ^ 1], &counts_ptr,
                  &n, &tiles, &shift};
    launch(scatter, {tile_blocks}, {kBlock}, 0, stream, xp);
  }
  return from;
}

void register_sort_kernels(KernelRegistry& registry) {
  registry.add(kernel("sort", sort_kernel<false>,
                      "bitonic (key, index) sort in shared memory for short rows; onesweep LSD "
                      "radix sort of keys (8-bit digits, all rows at once) for long ones, zeros "
                      "and NaNs restored from the input"));
  registry.add(kernel("argsort", sort_kernel<true>,
                      "bitonic (key, index) sort in shared memory for short rows; onesweep LSD "
                      "radix sort of (key, index) pairs (8-bit digits, all rows at once) for "
                      "long ones"));
  registry.add(kernel("searchsorted", searchsorted_kernel,
                      "a thread per needle, binary search over sort keys"));
  register_kernel_samples("sort", sort_samples);
}

}  // namespace xrt::cuda
