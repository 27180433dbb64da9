// cpp/src/cuda/onesweep.cpp: the host side of the onesweep LSD radix sort (onesweep.h):
// kernel sources by kind, the pass shape, and the launches of one sort.
#include "cuda/onesweep.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/radix_sort.h"
#include "cuda/reduce_common.h"
#include "cuda/runtime.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

constexpr int kRadixThreads = 256;  // THREADS of the onesweep kernels
constexpr int kRadixUnroll = 8;     // kUnroll of radix_sort.cuh
constexpr int kRadixDigits = 256;   // kDigits of radix_sort.cuh

/// Carves one scratch allocation into 256-byte aligned pieces.
class Carver {
 public:
  explicit Carver(char* base) : at_(base) {}
  template <class P = char> P* take(int64_t bytes) {
    char* p = at_;
    at_ += round_up(bytes, 256);
    return reinterpret_cast<P*>(p);
  }
  char* at() const { return at_; }

 private:
  char* at_;
};

}  // namespace

OnesweepKind sort_kind(DType dtype, bool arg) {
  return {dtype, arg ? Payload::Position : Payload::None, static_cast<int>(itemsize(dtype)),
          !arg && is_floating(dtype)};
}

OnesweepKind pairs_kind(bool wide, bool payload, int bits) {
  return {wide ? DType::UInt64 : DType::UInt32, payload ? Payload::Carried : Payload::None,
          (bits + 7) / 8, false};
}

OnesweepKind encoded_kind(DType dtype, bool positions) {
  return {dtype, positions ? Payload::Position : Payload::None, static_cast<int>(itemsize(dtype)),
          false, true};
}

std::string onesweep_source(const OnesweepKind& kind, const Onesweep& shape) {
  const std::string t = device_type(kind.dtype);
  const std::string payload = std::to_string(static_cast<int>(kind.payload));
  const std::string passes = std::to_string(kind.passes);
  const std::string specials = kind.specials ? "true" : "false";
  const std::string threads = std::to_string(kRadixThreads);
  std::string s =
      "#include \"xrt/radix_sort.cuh\"\n"
      "namespace xrt_radix_types { typedef " + t + " T; typedef xrt::sort::Key<T>::S S; }\n"
      "using xrt_radix_types::T;\nusing xrt_radix_types::S;\nusing xrt::index_t;\n"
      "using xrt::uint32_t;\n"
      "extern \"C\" __global__ void __launch_bounds__(" + threads + ") xrt_radix_upsweep("
      "const T* in, uint32_t* hist, uint32_t* row_specials, uint32_t* chunk_specials, "
      "index_t n, index_t chunk, index_t chunks, int descending) {\n"
      "  xrt::radix::upsweep<T, " + threads + ", " + specials + ", " + passes +
      ">(in, hist, row_specials, chunk_specials, n, chunk, chunks, descending != 0);\n}\n"
      "extern \"C\" __global__ void __launch_bounds__(256) xrt_radix_plan(uint32_t* hist, "
      "uint32_t* masks, index_t n) {\n  xrt::radix::plan<" + passes + ">(hist, masks, n);\n}\n"
      "extern \"C\" __global__ void __launch_bounds__(" + threads +
      (shape.min_blocks > 0 ? ", " + std::to_string(shape.min_blocks) : std::string()) +
      ") xrt_radix_pass("
      "const T* in, void* out, const uint32_t* in_index, uint32_t* out_index, S* keys0, "
      "S* keys1, uint32_t* index0, uint32_t* index1, const uint32_t* bins, "
      "const uint32_t* masks, uint32_t* desc, index_t n, index_t tiles, "
      "int pass, int descending) {\n"
      "  xrt::radix::pass<T, " + payload + ", " + threads + ", " + std::to_string(shape.items) +
      ", " + passes + ", " + (kind.keys_out ? "true" : "false") +
      ">(in, out, in_index, out_index, keys0, keys1, index0, index1, bins, masks, desc, n, "
      "tiles, pass, descending != 0);\n}\n";
  if (kind.specials)
    s += "extern \"C\" __global__ void __launch_bounds__(" + threads + ") xrt_radix_fixup("
         "const T* in, T* out, const uint32_t* row_specials, const uint32_t* chunk_specials, "
         "index_t n, index_t chunk, index_t chunks, int descending) {\n"
         "  xrt::radix::fixup<T, " + threads + ">(in, out, row_specials, chunk_specials, n, "
         "chunk, chunks, descending != 0);\n}\n";
  return s;
}

/// The pass shape for keys of dtype. XPURUNTIME_CUDA_SORT (read per call so that a
/// benchmark can switch) may say "lsd4", or "onesweep:ITEMS[:MIN_BLOCKS]".
// Note: the pass needs 60 to 100 registers, so 3 or 4 blocks share a multiprocessor with
// no launch bound. On an H200, 16 items per thread were the fastest for 4-byte keys of 8,
// 12, 16 and 20 at 2^20 to 2^26 keys (bench_cuda_sort.py sweeps them). A value sort of
// keys up to 4 bytes fits 48 registers without spilling, so it asks for 5 blocks per
// multiprocessor: 108 against 114 us a pass of 2^24 int32 keys on an H200 (Note [Onesweep
// counting]); a payload or 8-byte keys would spill there.
// 8-byte keys, on an H100 (a block's tile its index):
// - value sorts of 2^24 keys, against CuPy in one run: 14 items 1.026 / 1.070x (float64 /
//   int64), 16 1.005 / 1.055, 12 0.972 / 1.014, 10 0.897 / 0.933;
// - argsorts of int64, ms for 256x65536 / 1024x16384 / 64x262144 / 16x2^20 / 2^24 (two
//   rounds, 2026-11-28): 16:2 1.75 / 1.68 / 1.76 / 1.77 / 1.76, 16:0 0.3-0.6% slower, 12:0
//   (the default before) 1.98 / 2.12 / 1.91 / 1.92 / 1.94, 16:3 1.78 / 1.85 / 1.75 / 1.74 /
//   1.77; 8 and 10 items slower still.
namespace {
constexpr Onesweep kShapes[2][2] = {  // [8-byte keys][argsort]: {items, min_blocks}
    {{16, 5}, {16, 0}},
    {{14, 0}, {16, 2}},
};
}  // namespace

Onesweep onesweep_shape(DType dtype, bool arg) {
  const int64_t key_size = itemsize(dtype);
  Onesweep shape = kShapes[key_size > 4][arg];
  if (const char* env = std::getenv("XPURUNTIME_CUDA_SORT"); env && *env) {
    if (std::strcmp(env, "lsd4") == 0) return {};
    if (std::strncmp(env, "onesweep:", 9) == 0) {
      // A tile of keys (or indices, exchanged after them) shares 48 KB of static shared
      // memory with 10.1 KB of counts; more than 24 items would spill registers.
      const int64_t slot = std::max<int64_t>(key_size, arg ? 4 : 0);
      const int64_t most = std::min<int64_t>(24, (48 * 1024 - 10752) / (kRadixThreads * slot));
      char* rest = nullptr;
      long items = std::strtol(env + 9, &rest, 10);
      if (items >= 1 && items <= most) shape = {static_cast<int>(items), 0};
      if (rest && *rest == ':')
        shape.min_blocks = static_cast<int>(std::clamp(std::strtol(rest + 1, nullptr, 10), 0L, 8L));
    }
  }
  return shape;
}

// Note [Onesweep launches]: one scratch allocation holds, first, what must start at zero
// (digit counts, the float sort's row counts and the look-back descriptors of every pass:
// one memset), then the masks, the chunk counts and the
// ping-pong buffers of keys (and indices when a payload travels). Everything is enqueued
// on the current stream; which passes run and where keys are is decided on the device, so
// the host never waits. The first pass that moves a row reads the input, the last writes
// the output, so the result's place is known to the host whatever passes are skipped.
// Upsweep chunks are sized to give about 8 blocks per multiprocessor.
void onesweep_sort(const OnesweepKind& kind, const OnesweepRows& job, const Onesweep& shape) {
  const DType dtype = kind.dtype;
  const int device = job.device.index;
  const int64_t rows = job.rows, n = job.n, total = rows * n;
  const int passes = kind.passes;
  const bool specials = kind.specials, payload = kind.payload != Payload::None;
  const int64_t tile = int64_t(kRadixThreads) * shape.items;
  int64_t tiles = ceil_div(n, tile);
  const int64_t step = int64_t(kRadixThreads) * kRadixUnroll;
  int64_t chunk = round_up(std::max(step, ceil_div(total, int64_t(sm_count(device)) * 8)), step);
  int64_t chunks = ceil_div(n, chunk);
  if (rows * std::max(tiles, chunks) > (int64_t(1) << 31) - 1)
    throw UnsupportedOperationError("sort on CUDA: too many tiles for one launch");
  const int64_t descriptors = int64_t(passes) * rows * tiles * kRadixDigits;
  const int64_t zeroed = round_up(rows * passes * kRadixDigits * 4, 256) +
                         round_up(specials ? rows * 16 : 0, 256) + descriptors * 4;
  // A single pass reads the input and writes the output: no keys in between.
  const int64_t key_buffer = passes > 1 ? round_up(total * itemsize(dtype), 256) : 0;
  const int64_t index_buffer = passes > 1 && payload ? round_up(total * 4, 256) : 0;
  const int64_t bytes = zeroed + round_up(rows * 4, 256) +
                        round_up(specials ? rows * chunks * 8 : 0, 256) +
                        (job.spare_keys ? 1 : 2) * key_buffer +
                        (job.spare_index ? 1 : 2) * index_buffer;
  Tensor work = device_scratch(bytes, job.device);
  Carver carve(work.data());
  uint32_t* hist = carve.take<uint32_t>(rows * passes * kRadixDigits * 4);
  uint32_t* row_specials = carve.take<uint32_t>(specials ? rows * 16 : 0);
  uint32_t* desc = carve.take<uint32_t>(descriptors * 4);
  XRT_CU(cuMemsetD32Async, reinterpret_cast<CUdeviceptr>(work.data()), 0u,
         static_cast<size_t>(zeroed / 4), job.stream);
  uint32_t* masks = carve.take<uint32_t>(rows * 4);
  uint32_t* chunk_specials = carve.take<uint32_t>(specials ? rows * chunks * 8 : 0);
  // The k-th pass that moves a row (k from 0, not the last) writes keys[k % 2] there:
  // keys[1] is first written once the input was read, so the caller's input may be it.
  char* keys[2] = {carve.take(key_buffer),
                   job.spare_keys ? job.spare_keys : carve.take(key_buffer)};
  uint32_t* index[2] = {carve.take<uint32_t>(index_buffer),
                        job.spare_index ? job.spare_index : carve.take<uint32_t>(index_buffer)};

  std::string key = "radix/" + std::string(dtype_info(dtype).name) + "/" +
                    std::to_string(static_cast<int>(kind.payload)) + "/" +
                    std::to_string(passes) + (kind.keys_out ? "k/" : "/") +
                    std::to_string(shape.items) + "/" +
                    std::to_string(shape.min_blocks);
  auto fn = [&](const char* name) {
    return jit_function(device, key, [&] { return KernelSource{onesweep_source(kind, shape)}; },
                        name);
  };
  const char* in = job.in;
  char* out = job.out;
  const uint32_t* in_index = job.in_index;
  uint32_t* out_index = job.out_index;
  int descending = job.descending ? 1 : 0;
  int64_t n_arg = n;
  const CUstream stream = job.stream;
  const unsigned chunk_blocks = grid_dim(rows * chunks, 'x', "radix sort");
  const unsigned row_blocks = grid_dim(rows, 'x', "radix sort");
  const unsigned tile_blocks = grid_dim(rows * tiles, 'x', "radix sort");
  {
    void* params[] = {&in, &hist, &row_specials, &chunk_specials, &n_arg, &chunk, &chunks,
                      &descending};
    launch(fn("xrt_radix_upsweep"), {chunk_blocks}, {kRadixThreads}, 0, stream, params);
  }
  {
    void* params[] = {&hist, &masks, &n_arg};
    launch(fn("xrt_radix_plan"), {row_blocks}, {kRadixDigits}, 0, stream,
           params);
  }
  CUfunction pass_fn = fn("xrt_radix_pass");
  for (int pass = 0; pass < passes; ++pass) {
    uint32_t* pass_desc = desc + int64_t(pass) * rows * tiles * kRadixDigits;
    void* params[] = {&in, &out, &in_index, &out_index, &keys[0], &keys[1], &index[0],
                      &index[1], &hist, &masks, &pass_desc, &n_arg, &tiles, &pass,
                      &descending};
    launch(pass_fn, {tile_blocks}, {kRadixThreads}, 0, stream, params);
  }
  if (specials) {
    void* params[] = {&in, &out, &row_specials, &chunk_specials, &n_arg, &chunk, &chunks,
                      &descending};
    launch(fn("xrt_radix_fixup"), {chunk_blocks}, {kRadixThreads}, 0, stream, params);
  }
}

bool radix_sort_encoded(int device, DType dtype, const void* values, int64_t n, void* keys,
                        uint32_t* positions, void* spare_keys, uint32_t* spare_positions) {
  if (is_complex(dtype) || (itemsize(dtype) != 4 && itemsize(dtype) != 8)) return false;
  const Onesweep shape = onesweep_shape(dtype, positions != nullptr);
  if (shape.items == 0 || n >= kOnesweepRow) return false;
  if (n == 0) return true;
  OnesweepRows rows{static_cast<const char*>(values), static_cast<char*>(keys), nullptr,
                    positions, static_cast<char*>(spare_keys), spare_positions, false, 1, n,
                    Device::cuda(device),
                    current_stream(device)};
  onesweep_sort(encoded_kind(dtype, positions != nullptr), rows, shape);
  return true;
}

}  // namespace xrt::cuda
