// cpp/src/cuda/reduce_launch.cpp: how a CUDA reduction runs: the walk, its kernel's source
// and arguments, and the split of a large walk into pieces that a second launch combines.
//
// A reduction is planned as on the CPU, from the host's boxes (core/host/reduce_plan.h: kept
// and reduced axes merged, reduced axes in memory order unless positions matter), and run by
// one of two walks, each specialised by reducer, box ranks and vector width:
// - outer, a thread per output (OVEC adjacent outputs read as one vector): for reductions
//   of at most kSequential elements (in order, as the CPU sums them: the same bits when
//   the CPU also runs them in order) and for columns (the reduced axis strided, outputs
//   contiguous, e.g. axis 0 of a C-ordered matrix).
// - inner, a warp per output when there are enough outputs to fill the device, else a
//   block, with 16-byte loads along contiguous runs: rows, full reductions, and the general
//   strided case (lanes stride through any layout; slow, but no copy).
// Note [Deterministic reductions]: a walk of at least kMinSplitWork elements that leaves
// too few threads to fill the device splits each output's elements into pieces by sizes,
// the device's multiprocessor count and the kernel's resident blocks alone (one wave of
// blocks); the pieces' partial accumulators go to a scratch buffer and are combined in
// order: by a second launch after an inner walk, by the last block of each column of
// blocks after an outer one (Note [Outer finish] in reduce.cuh). No float atomics
// anywhere, so the same input gives the same bits on the same device model and build
// every time (another SM count may split differently). Float sums differ from the CPU's
// in rounding (another order of additions), except where both add in order (short
// reductions; columns too small to split); integers, max/min, argmax/argmin and
// all/any/count_nonzero are exact.
#include "cuda/reduce_launch.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/host/reduce_plan.h"
#include "core/per_thread.h"
#include "cuda/codegen.h"
#include "cuda/driver.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"

namespace xrt::cuda::reduce {
namespace {

constexpr int kUnroll = 4;            // kUnroll of reduce.cuh
constexpr int64_t kSequential = 64;   // reductions this short run in order, a thread each
constexpr int64_t kThreadsPerSm = 2048;
constexpr int64_t kMinSplitWork = 1 << 20;  // elements in all below which nothing splits
constexpr int64_t kMaxOuterSplits = 512;
constexpr int64_t kMaxGrid = int64_t(1) << 30;  // blocks of one launch (walks loop beyond)

Box bytes_box(const host::reduce::Box& b, int64_t itemsize) {
  Box box;
  box.shape = b.shape;
  for (int64_t s : b.strides) box.strides.push_back(s * itemsize);
  box.numel = b.numel;
  return box;
}

KernelSource reduce_source(const Spec& spec, Shape s) {
  return {"#include \"xrt/reduce.cuh\"\n" + kernel_body("xrt_reduce", spec, s)};
}

std::string shape_key(Shape s) {
  return std::string(s.walk == Walk::Inner ? "i" : "o") + std::to_string(s.kept_ndim) + "." +
         std::to_string(s.reduced_ndim) + "." + std::to_string(s.vec) + "." +
         std::to_string(s.group);
}

// Note [Reduction kernels remembered]: the JIT's cache finds a kernel by a string key, and
// building that key ("reduce/" + reducer + shape) and hashing it cost about 700 of the
// 5,300 host instructions of a CUDA sum(a) of 16 floats (callgrind, fake driver). Each
// thread remembers its last few kernels by what the key is made of, compared as is. Like
// the elementwise kernels' slots, a remembered kernel outlives clear_jit_memory_cache
// (its module stays loaded).
struct RememberedKernels {
  struct Entry {
    int device = -1;
    Shape shape{};
    std::string reducer;
    CUfunction fn = nullptr;
  };
  Entry entries[8];
  unsigned next = 0;  // the entry replaced next (round robin)
};

bool operator==(const Shape& a, const Shape& b) {
  return a.walk == b.walk && a.kept_ndim == b.kept_ndim && a.reduced_ndim == b.reduced_ndim &&
         a.vec == b.vec && a.group == b.group;
}

CUfunction reduce_function(int device, const Spec& spec, Shape s) {
  RememberedKernels& memo = PerThread<RememberedKernels>::get();
  for (const auto& e : memo.entries)
    if (e.fn && e.device == device && e.shape == s && e.reducer == spec.reducer) return e.fn;
  std::string key = "reduce/" + spec.reducer + "/" + shape_key(s);
  CUfunction fn =
      jit_function(device, key, [&] { return reduce_source(spec, s); }, "xrt_reduce");
  auto& e = memo.entries[memo.next++ % std::size(memo.entries)];
  e = {device, s, spec.reducer, fn};
  return fn;
}

/// The kernel argument xrt::reduce::Layout<K, R>: 8-byte words in its field order.
std::vector<uint64_t> pack(const Problem& p, const Spec& spec, char* out, int64_t nout,
                           int64_t splits, int64_t piece, char* result = nullptr,
                           unsigned* tickets = nullptr) {
  std::vector<uint64_t> w;
  auto word = [&](auto v) {
    uint64_t u = 0;
    static_assert(sizeof(v) == 8);
    std::memcpy(&u, &v, 8);
    w.push_back(u);
  };
  word(p.in);
  word(out);
  word(nout);
  for (int64_t v : p.kept.shape) word(v);
  for (int64_t v : p.kept.strides) word(v);
  for (int64_t v : p.reduced.shape) word(v);
  for (int64_t v : p.reduced.strides) word(v);
  word(splits);
  word(piece);
  word(result);
  word(tickets);
  word(spec.scalar);
  word(spec.aux);
  word(spec.aux_out);
  word(spec.count);
  return w;
}

// Outputs per thread: as many adjacent outputs as one load of at most 16 bytes reads, when
// every address the thread reads is aligned to that load.
int outer_vector(const Problem& p, int64_t acc_size) {
  if (p.kept.strides.back() != p.in_size) return 1;
  for (int v = static_cast<int>(16 / p.in_size); v > 1; v /= 2) {
    int64_t bytes = v * p.in_size;
    bool ok = p.kept.shape.back() % v == 0 && v * acc_size <= 64 &&
              reinterpret_cast<uintptr_t>(p.in) % bytes == 0;
    for (int d = 0; ok && d + 1 < p.kept.shape.size(); ++d) ok = p.kept.strides[d] % bytes == 0;
    for (int64_t s : p.reduced.strides) ok = ok && s % bytes == 0;
    if (ok) return v;
  }
  return 1;
}

}  // namespace

std::string kernel_body(const std::string& name, const Spec& spec, Shape s) {
  std::string k = std::to_string(s.kept_ndim), r = std::to_string(s.reduced_ndim);
  std::string call = s.walk == Walk::Inner
                         ? "xrt::reduce::inner<Reducer, " + k + ", " + r + ", " +
                               std::to_string(s.vec) + ", " + std::to_string(s.group) + ">"
                         : "xrt::reduce::outer<Reducer, " + k + ", " + r + ", " +
                               std::to_string(s.vec) + ">";
  return "namespace " + name + "_types { typedef " + spec.reducer + " Reducer; }\n" +
         "static_assert(sizeof(" + name + "_types::Reducer::Acc) == " +
         std::to_string(spec.acc_size) + ", \"accumulator size\");\n" +
         "static_assert(sizeof(" + name + "_types::Reducer::In) == " +
         std::to_string(spec.in_size) + ", \"element size\");\n" +
         "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kReduceBlock) +
         ") " + name + "(xrt::reduce::Layout<" + k + ", " + r + "> layout) {\n  using " +
         name + "_types::Reducer;\n  " + call + "(layout);\n}\n";
}

void Launcher::run(const Spec& spec, const Problem& p, char* out, bool may_split) const {
  if (p.kept.numel == 0) return;
  int64_t count = p.reduced.numel;
  int64_t run = p.reduced.shape.back(), run_stride = p.reduced.strides.back();
  bool run_contiguous = run > 1 && run_stride == p.in_size;
  bool outputs_contiguous = p.kept.strides.back() == p.in_size && p.kept.shape.back() >= 8;
  if (count <= kSequential || (!run_contiguous && outputs_contiguous) || run < 16)
    outer(spec, p, out, may_split);
  else
    inner(spec, p, out, may_split);
}

void Launcher::outer(const Spec& spec, const Problem& p, char* out, bool may_split) const {
  int64_t nout = p.kept.numel, count = p.reduced.numel;
  int vec = outer_vector(p, spec.acc_size);
  Shape s{Walk::Outer, p.kept.shape.size(), p.reduced.shape.size(), vec, 1};
  CUfunction fn = reduce_function(device, spec, s);
  int64_t columns = std::min<int64_t>(ceil_div(nout / vec, kReduceBlock), kMaxGrid);
  int64_t splits = 1;
  if (may_split && count > kSequential && nout * count >= kMinSplitWork) {
    // As many pieces as keep one wave of resident blocks (registers decide how many fit):
    // a second, partly filled wave would cost as long as a full one.
    // More waves of shorter pieces measured slower (sum over axis 0 of 16384^2 float32
    // against torch: 0.979, 0.959, 0.936, 0.914 and 0.868x for 1, 2, 3, 4 and 6 waves on an
    // H100; 1.002 and 0.975x for 1 and 2 on an H200 after Note [Outer finish]'s change).
    int64_t wave = int64_t(sm_count(device)) * resident_blocks(fn);
    if (columns < wave)
      splits = std::clamp<int64_t>(wave / columns, 1,
                                   std::min<int64_t>(count / 32, kMaxOuterSplits));
  }
  int64_t piece = std::max<int64_t>(1, ceil_div(count, splits));
  splits = count == 0 ? 1 : ceil_div(count, piece);
  Tensor scratch;
  char* partials = out;
  unsigned* tickets = nullptr;
  if (splits > 1) {  // Note [Outer finish] in reduce.cuh: the last block of a column combines
    int64_t bytes = round_up(splits * nout * spec.acc_size, 256);
    scratch = device_scratch(bytes + columns * 4, where);
    partials = scratch.data();
    tickets = reinterpret_cast<unsigned*>(partials + bytes);
    XRT_CU(cuMemsetD32Async, reinterpret_cast<CUdeviceptr>(tickets), 0u,
           static_cast<size_t>(columns), stream);
  }
  std::vector<uint64_t> args = pack(p, spec, partials, nout, splits, piece, out, tickets);
  void* params[] = {args.data()};
  launch(fn, {static_cast<unsigned>(columns), static_cast<unsigned>(splits)}, {kReduceBlock}, 0,
         stream, params);
}

void Launcher::inner(const Spec& spec, const Problem& p, char* out, bool may_split) const {
  int64_t nout = p.kept.numel, count = p.reduced.numel;
  int rnd = p.reduced.shape.size();
  int64_t run = p.reduced.shape.back();
  bool contiguous = p.reduced.strides.back() == p.in_size && p.in_size <= 8;
  int vec = contiguous ? static_cast<int>(16 / p.in_size) : 1;
  int64_t target = sm_count(device) * kThreadsPerSm;
  bool warp = nout * 32 >= target || count <= 32 * vec * kUnroll * 4;
  Shape s{Walk::Inner, p.kept.shape.size(), rnd, vec, warp ? 32 : kReduceBlock};
  CUfunction fn = reduce_function(device, spec, s);
  // Pieces are of elements (one run) or of whole runs; a piece gives each thread a full
  // round of loads at least.
  int64_t units = rnd == 1 ? run : count / run;
  int64_t min_piece = rnd == 1 ? int64_t(kReduceBlock) * vec * kUnroll
                               : std::max<int64_t>(1, ceil_div(kReduceBlock * vec * kUnroll, run));
  int64_t splits = 1;
  if (may_split && !warp && nout * count >= kMinSplitWork) {
    int64_t wave = int64_t(sm_count(device)) * resident_blocks(fn);
    if (nout < wave)
      splits = std::clamp<int64_t>(ceil_div(wave, nout), 1,
                                   std::max<int64_t>(1, units / min_piece));
  }
  int64_t piece = ceil_div(units, std::max<int64_t>(splits, 1));
  if (rnd == 1) piece = ceil_div(piece, 16) * 16;  // pieces start at the same alignment
  splits = std::max<int64_t>(1, ceil_div(units, piece));
  Tensor partials;
  char* target_out = out;
  if (splits > 1) {
    partials = device_scratch(splits * nout * spec.acc_size, where);
    target_out = partials.data();
  }
  std::vector<uint64_t> args = pack(p, spec, target_out, nout, splits, piece);
  void* params[] = {args.data()};
  int64_t per_block = warp ? kReduceBlock / 32 : 1;
  auto blocks =
      static_cast<unsigned>(std::min<int64_t>(ceil_div(nout * splits, per_block), kMaxGrid));
  launch(fn, {blocks}, {kReduceBlock}, 0, stream, params);
  if (splits > 1) {
    Box kept{Dims{nout}, Dims{splits * spec.acc_size}, nout};
    Box reduced{Dims{splits}, Dims{spec.acc_size}, splits};
    finish(spec, partials, kept, reduced, out);
  }
}

// The second launch of a split reduction: partial accumulators, combined in piece order.
void Launcher::finish(const Spec& spec, const Tensor& partials, Box kept, Box reduced,
                      char* out) const {
  Problem p{partials.data(), spec.acc_size, std::move(kept), std::move(reduced)};
  run(spec.partials(), p, out, false);
}

Launcher launcher_for(const Tensor& t) {
  int device = t.device().index;
  activate(device);
  return {device, current_stream(device), t.device()};
}

Problem problem_of(const Tensor& x, const Dims& axes, bool positions) {
  int64_t base = 0;
  host::reduce::Box reduced(x, axes, !positions, base);
  host::reduce::Box kept(x, host::reduce::kept_axes(x, axes), false, base);
  int64_t item = static_cast<int64_t>(x.itemsize());
  return {x.data() + base * item, item, bytes_box(kept, item), bytes_box(reduced, item)};
}

}  // namespace xrt::cuda::reduce
