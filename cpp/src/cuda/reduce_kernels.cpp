// cpp/src/cuda/reduce_kernels.cpp: sum, prod, mean, var, std, max, min, argmax, argmin,
// all, any, count_nonzero and vector_norm on CUDA. Device code: cpp/kernels/xrt/reduce.cuh
// (walks) and reducers.cuh (what each op computes, as the CPU's reducers).
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
// too few threads to fill the device splits each output's elements into pieces by sizes
// and the device's multiprocessor count alone (a full reduction: one piece per resident
// block, one wave); the pieces' partial accumulators go to a scratch buffer and a second
// launch combines them in order. No float atomics anywhere, so the same input gives the
// same bits on the same device model every time (another SM count may split differently).
// Float sums differ from the CPU's in rounding (another order of additions), except where
// both add in order (short reductions; columns too small to split); integers, max/min,
// argmax/argmin and all/any/count_nonzero are exact.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/host/reduce_plan.h"
#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/reduce_common.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

constexpr int kUnroll = 4;            // kUnroll of reduce.cuh
constexpr int64_t kSequential = 64;   // reductions this short run in order, a thread each
constexpr int64_t kThreadsPerSm = 2048;
constexpr int64_t kMinSplitWork = 1 << 20;  // elements in all below which nothing splits
constexpr int64_t kMaxOuterSplits = 512;
constexpr int64_t kMaxGrid = int64_t(1) << 30;  // blocks of one launch (walks loop beyond)

/// Merged dimensions with byte strides (at least one dimension).
struct Box {
  Dims shape, strides;
  int64_t numel = 1;
};

Box bytes_box(const host::reduce::Box& b, int64_t itemsize) {
  Box box;
  box.shape = b.shape;
  for (int64_t s : b.strides) box.strides.push_back(s * itemsize);
  box.numel = b.numel;
  return box;
}

/// One launch's input: the outputs (kept, row-major) and the elements behind each.
struct Problem {
  const char* in;
  int64_t in_size;  ///< bytes per element
  Box kept, reduced;
};

/// What to compute: a reducer of reducers.cuh and its parameters.
struct Spec {
  std::string reducer;   ///< device type, e.g. "xrt::reduce::Sum<float, float>"
  int64_t in_size = 0;   ///< sizeof(In)
  int64_t acc_size = 0;  ///< sizeof(Acc) (checked by the kernel at compile time)
  double scalar = 0;
  const void* aux = nullptr;
  void* aux_out = nullptr;
  int64_t count = 0;     ///< elements behind each output

  Spec partials() const {
    Spec p = *this;
    p.reducer = "xrt::reduce::Partials<" + reducer + " >";
    p.in_size = acc_size;
    return p;
  }
};

enum class Walk { Inner, Outer };

struct Shape {
  Walk walk;
  int kept_ndim, reduced_ndim;
  int vec;    ///< inner: elements per 16-byte load; outer: adjacent outputs per thread
  int group;  ///< inner: 32 or kReduceBlock
};

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

KernelSource reduce_source(const Spec& spec, Shape s) {
  return {"#include \"xrt/reduce.cuh\"\n" + kernel_body("xrt_reduce", spec, s)};
}

std::string shape_key(Shape s) {
  return std::string(s.walk == Walk::Inner ? "i" : "o") + std::to_string(s.kept_ndim) + "." +
         std::to_string(s.reduced_ndim) + "." + std::to_string(s.vec) + "." +
         std::to_string(s.group);
}

CUfunction reduce_function(int device, const Spec& spec, Shape s) {
  std::string key = "reduce/" + spec.reducer + "/" + shape_key(s);
  return jit_function(device, key, [&] { return reduce_source(spec, s); }, "xrt_reduce");
}

/// The kernel argument xrt::reduce::Layout<K, R>: 8-byte words in its field order.
std::vector<uint64_t> pack(const Problem& p, const Spec& spec, char* out, int64_t nout,
                           int64_t splits, int64_t piece) {
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
  word(spec.scalar);
  word(spec.aux);
  word(spec.aux_out);
  word(spec.count);
  return w;
}

struct Launcher {
  int device;
  CUstream stream;
  Device where;

  void run(const Spec& spec, const Problem& p, char* out, bool may_split) const;

 private:
  void outer(const Spec& spec, const Problem& p, char* out, bool may_split) const;
  void inner(const Spec& spec, const Problem& p, char* out, bool may_split) const;
  void finish(const Spec& spec, const Tensor& partials, Box kept, Box reduced, char* out) const;
};

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

void Launcher::outer(const Spec& spec, const Problem& p, char* out, bool may_split) const {
  int64_t nout = p.kept.numel, count = p.reduced.numel;
  int vec = outer_vector(p, spec.acc_size);
  int64_t threads = nout / vec;
  int64_t splits = 1;
  int64_t target = sm_count(device) * kThreadsPerSm;
  if (may_split && threads < target && count > kSequential && nout * count >= kMinSplitWork)
    splits = std::clamp<int64_t>(ceil_div(target, threads), 1,
                                 std::min<int64_t>(count / 32, kMaxOuterSplits));
  int64_t piece = std::max<int64_t>(1, ceil_div(count, splits));
  splits = count == 0 ? 1 : ceil_div(count, piece);
  Shape s{Walk::Outer, p.kept.shape.size(), p.reduced.shape.size(), vec, 1};
  CUfunction fn = reduce_function(device, spec, s);
  Tensor partials;
  char* target_out = out;
  if (splits > 1) {
    partials = device_scratch(splits * nout * spec.acc_size, where);
    target_out = partials.data();
  }
  std::vector<uint64_t> args = pack(p, spec, target_out, nout, splits, piece);
  void* params[] = {args.data()};
  auto blocks = static_cast<unsigned>(std::min<int64_t>(ceil_div(threads, kReduceBlock), kMaxGrid));
  launch(fn, {blocks, static_cast<unsigned>(splits)}, {kReduceBlock}, 0, stream, params);
  if (splits > 1) {
    Box kept{Dims{nout}, Dims{spec.acc_size}, nout};
    Box reduced{Dims{splits}, Dims{nout * spec.acc_size}, splits};
    finish(spec, partials, kept, reduced, out);
  }
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

// ---- The ops ---------------------------------------------------------------------------

Launcher launcher_for(const Tensor& t) {
  int device = t.device().index;
  activate(device);
  return {device, current_stream(device), t.device()};
}

/// x's reduction over the call's axes: boxes in memory order unless the reducer needs
/// positions (argmax, argmin), which follow the logical order.
Problem problem_of(const Tensor& x, const Dims& axes, bool positions) {
  int64_t base = 0;
  host::reduce::Box reduced(x, axes, !positions, base);
  host::reduce::Box kept(x, host::reduce::kept_axes(x, axes), false, base);
  int64_t item = static_cast<int64_t>(x.itemsize());
  return {x.data() + base * item, item, bytes_box(kept, item), bytes_box(reduced, item)};
}

void reduce_into(const Spec& spec, const Tensor& x, const KernelCall& call, bool positions) {
  Problem p = problem_of(x, call.attrs->axes, positions);
  Spec s = spec;
  s.count = p.reduced.numel;
  launcher_for(call.out()).run(s, p, call.out().data(), true);
}

std::string type_of(DType d) { return device_type(d); }

template <const char* Family> void accumulate_kernel(const KernelCall& call) {
  constexpr bool mean = Family[0] == 'M';
  const Tensor& x = call.in(0);
  DType out = call.out().dtype();
  if (!accumulates_directly(x.dtype(), out, mean)) {
    Tensor cast = cast_on_device(x, out);
    const Tensor* inputs[] = {&cast};
    return accumulate_kernel<Family>(KernelCall{inputs, 1, call.outputs, 1, call.attrs});
  }
  Spec spec;
  spec.reducer = std::string("xrt::reduce::") + Family + "<" + type_of(x.dtype()) + ", " +
                 type_of(out) + ">";
  spec.in_size = static_cast<int64_t>(x.itemsize());
  spec.acc_size = sum_accumulator_size(out);
  reduce_into(spec, x, call, false);
}

constexpr char kSum[] = "Sum", kProd[] = "Prod", kMean[] = "Mean";

// bool is compared as uint8.
std::string ordered_type(DType d) { return d == DType::Bool ? "xrt::uint8_t" : type_of(d); }

int64_t compute_size(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 ? 4 : static_cast<int64_t>(itemsize(d));
}

template <bool Max> void extremum_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  if (is_complex(x.dtype())) throw TypeError("complex numbers have no order");
  Spec spec;
  spec.reducer = "xrt::reduce::Extremum<" + ordered_type(x.dtype()) + ", " +
                 (Max ? "true" : "false") + ">";
  spec.in_size = static_cast<int64_t>(x.itemsize());
  spec.acc_size = compute_size(x.dtype());
  reduce_into(spec, x, call, false);
}

template <bool Max> void arg_extremum_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  if (is_complex(x.dtype())) throw TypeError("complex numbers have no order");
  Spec spec;
  spec.reducer = "xrt::reduce::ArgExtremum<" + ordered_type(x.dtype()) + ", " +
                 (Max ? "true" : "false") + ">";
  spec.in_size = static_cast<int64_t>(x.itemsize());
  spec.acc_size = 16;
  reduce_into(spec, x, call, true);
}

template <int Op> void truth_kernel(const KernelCall& call) {
  static const char* const ops[] = {"xrt::reduce::kAll", "xrt::reduce::kAny",
                                    "xrt::reduce::kCount"};
  const Tensor& x = call.in(0);
  Spec spec;
  spec.reducer = "xrt::reduce::Truth<" + type_of(x.dtype()) + ", " + ops[Op] + ">";
  spec.in_size = static_cast<int64_t>(x.itemsize());
  spec.acc_size = Op == 2 ? 8 : 4;
  reduce_into(spec, x, call, false);
}

// var (Root false) and std: each output's mean (in the compute type M; float64 for
// integers, as the CPU casts them), then the squared deviations from it.
template <bool Root> void moment_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  DType m = is_integer(x.dtype()) ? DType::Float64
            : x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16 ? DType::Float32
                                                                           : x.dtype();
  if (x.dtype() == DType::Bool) throw TypeError("var/std need a numeric input");
  Problem p = problem_of(x, call.attrs->axes, false);
  Launcher launcher = launcher_for(call.out());
  int64_t nout = p.kept.numel;
  Tensor means =
      device_scratch(std::max<int64_t>(1, nout) * int64_t(itemsize(m)), call.out().device());
  Spec mean;
  mean.reducer = "xrt::reduce::Mean<" + type_of(x.dtype()) + ", " + type_of(m) + ">";
  mean.in_size = static_cast<int64_t>(x.itemsize());
  mean.acc_size = static_cast<int64_t>(itemsize(m));
  mean.count = p.reduced.numel;
  launcher.run(mean, p, means.data(), true);
  Spec deviation = mean;
  deviation.reducer = "xrt::reduce::Deviation<" + type_of(x.dtype()) + ", " + type_of(m) +
                      ", " + type_of(call.out().dtype()) + ", " + (Root ? "true" : "false") + ">";
  deviation.acc_size = static_cast<int64_t>(itemsize(real_dtype(m)));
  deviation.scalar = call.attrs->value.template to<double>();
  deviation.aux = means.data();
  launcher.run(deviation, p, call.out().data(), true);
}

// vector_norm (attrs.value: the order): one pass, and for finite orders other than 0 a
// second over the outputs whose sum left the normal range, scaled by their extreme.
void vector_norm_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  if (!is_floating(x.dtype()) && !is_complex(x.dtype()))
    throw TypeError("vector_norm needs a floating-point dtype");
  double order = call.attrs->value.to<double>();
  bool rescale = std::isfinite(order) && order != 0;
  Problem p = problem_of(x, call.attrs->axes, false);
  Launcher launcher = launcher_for(call.out());
  int64_t nout = p.kept.numel;
  std::string types = type_of(x.dtype()) + ", " + type_of(call.out().dtype()) + ">";
  Tensor stats;
  if (rescale) stats = device_scratch(std::max<int64_t>(1, nout) * 16, call.out().device());
  Spec norm;
  norm.reducer = "xrt::reduce::Norm<" + types;
  norm.in_size = static_cast<int64_t>(x.itemsize());
  norm.acc_size = 16;
  norm.scalar = order;
  norm.aux_out = rescale ? stats.data() : nullptr;
  norm.count = p.reduced.numel;
  launcher.run(norm, p, call.out().data(), true);
  if (!rescale || p.reduced.numel == 0) return;
  Spec scaled = norm;
  scaled.reducer = "xrt::reduce::NormRescale<" + types;
  scaled.acc_size = 8;
  scaled.aux = stats.data();
  scaled.aux_out = nullptr;
  launcher.run(scaled, p, call.out().data(), true);
}

struct ReductionEntry {
  const char* name;
  void (*run)(const KernelCall&);
  const char* description;
};

const ReductionEntry kReductions[] = {
    {"sum", accumulate_kernel<kSum>, "warp/block per row or thread per column, fixed order"},
    {"prod", accumulate_kernel<kProd>, "warp/block per row or thread per column, fixed order"},
    {"mean", accumulate_kernel<kMean>, "sum in a fixed order, divided once"},
    {"max", extremum_kernel<true>, "NaN-propagating, any layout"},
    {"min", extremum_kernel<false>, "NaN-propagating, any layout"},
    {"argmax", arg_extremum_kernel<true>, "first index of the maximum (or NaN)"},
    {"argmin", arg_extremum_kernel<false>, "first index of the minimum (or NaN)"},
    {"all", truth_kernel<0>, "logical and of nonzero"},
    {"any", truth_kernel<1>, "logical or of nonzero"},
    {"count_nonzero", truth_kernel<2>, "count of nonzero"},
    {"var", moment_kernel<false>, "two passes: means, squared deviations"},
    {"std", moment_kernel<true>, "two passes: means, squared deviations"},
    {"vector_norm", vector_norm_kernel, "sum of |x|^p in float64, rescaled where it leaves range"},
};

// ---- Samples for the compile check -----------------------------------------------------

/// For the compile check (NVRTC takes about a third of a second per kernel here, so the
/// samples are chosen, not exhaustive): every reducer the ops instantiate for each dtype
/// (Sum and Mean for each direct dtype pair; the others for each input dtype, and one of
/// two variants that differ only in a flag) in the contiguous inner walk, the partials of
/// each accumulator type, and every walk shape for a float and an indexed reducer. One
/// source per reducer family (one NVRTC call each).
std::vector<KernelSample> reduce_samples() {
  using Kernels = std::vector<std::pair<Spec, Shape>>;
  auto contiguous = [](const Spec& spec) {
    int vec = spec.in_size <= 8 ? static_cast<int>(16 / spec.in_size) : 1;
    return std::pair<Spec, Shape>{spec, {Walk::Inner, 1, 1, vec, kReduceBlock}};
  };
  auto spec_of = [](std::string reducer, DType in, int64_t acc) {
    return Spec{std::move(reducer), int64_t(itemsize(in)), acc};
  };
  Kernels sums, others, walks;
  for (const char* family : {kSum, kProd, kMean})
    for (int a = 0; a < kNumDTypes; ++a)
      for (int b = 0; b < kNumDTypes; ++b) {
        DType in = DType(a), out = DType(b);
        bool mean = family == kMean;
        if (!accumulates_directly(in, out, mean)) continue;
        if (mean && !is_floating(out) && !is_complex(out)) continue;
        if (family == kProd && !(in == out && (in == DType::Int32 || in == DType::Float16 ||
                                               is_complex(in))))
          continue;
        sums.push_back(contiguous(spec_of(std::string("xrt::reduce::") + family + "<" +
                                              type_of(in) + ", " + type_of(out) + ">",
                                          in, sum_accumulator_size(out))));
      }
  for (int a = 0; a < kNumDTypes; ++a) {
    DType d = DType(a);
    bool flags = d == DType::Bool || d == DType::Float32;  // both variants of the flag
    for (const char* op : {"kCount", "kAll", "kAny"}) {
      if (std::string(op) != "kCount" && !flags) continue;
      others.push_back(contiguous(spec_of("xrt::reduce::Truth<" + type_of(d) + ", xrt::reduce::" +
                                              op + ">", d, std::string(op) == "kCount" ? 8 : 4)));
    }
    if (!is_complex(d))
      for (const char* max : {"true", "false"}) {
        if (std::string(max) == "false" && !flags) continue;
        std::string t = ordered_type(d) + ", " + max + ">";
        others.push_back(contiguous(spec_of("xrt::reduce::Extremum<" + t, d, compute_size(d))));
        others.push_back(contiguous(spec_of("xrt::reduce::ArgExtremum<" + t, d, 16)));
      }
    if (d == DType::Bool) continue;
    DType m = is_integer(d) ? DType::Float64
              : d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d;
    DType out = is_integer(d) ? DType::Float64 : real_dtype(d);
    others.push_back(contiguous(spec_of("xrt::reduce::Deviation<" + type_of(d) + ", " +
                                            type_of(m) + ", " + type_of(out) + ", " +
                                            (flags ? "false" : "true") + ">",
                                        d, int64_t(itemsize(real_dtype(m))))));
    if (is_integer(d)) continue;
    std::string types = type_of(d) + ", " + type_of(real_dtype(d)) + ">";
    others.push_back(contiguous(spec_of("xrt::reduce::Norm<" + types, d, 16)));
    others.push_back(contiguous(spec_of("xrt::reduce::NormRescale<" + types, d, 8)));
  }
  for (const Spec& spec : {spec_of("xrt::reduce::Sum<float, float>", DType::Float32, 4),
                           spec_of("xrt::reduce::ArgExtremum<double, true>", DType::Float64, 16)}) {
    walks.push_back({spec, {Walk::Inner, 2, 3, 16 / int(spec.in_size), 32}});
    walks.push_back({spec, {Walk::Inner, 1, 2, 1, kReduceBlock}});
    walks.push_back({spec, {Walk::Outer, 1, 1, 16 / int(spec.in_size), 1}});
    walks.push_back({spec, {Walk::Outer, 3, 2, 1, 1}});
  }
  for (const Spec& spec : {spec_of("xrt::reduce::Sum<float, float>", DType::Float32, 4),
                           spec_of("xrt::reduce::Sum<xrt::int8_t, xrt::int64_t>", DType::Int8, 8),
                           spec_of("xrt::reduce::Prod<xrt::complex128, xrt::complex128>",
                                   DType::Complex128, 16),
                           spec_of("xrt::reduce::Extremum<xrt::uint8_t, true>", DType::Bool, 1),
                           spec_of("xrt::reduce::ArgExtremum<xrt::float16, false>",
                                   DType::Float16, 16),
                           spec_of("xrt::reduce::Truth<bool, xrt::reduce::kAll>", DType::Bool, 4),
                           spec_of("xrt::reduce::Norm<double, double>", DType::Float64, 16)}) {
    Spec partials = spec.partials();
    walks.push_back({partials, {Walk::Outer, 1, 1, 1, 1}});
    walks.push_back(contiguous(partials));
  }
  std::vector<KernelSample> samples;
  auto add = [&](const std::string& what, const Kernels& kernels) {
    std::string source = "#include \"xrt/reduce.cuh\"\n";
    int n = 0;
    for (const auto& [spec, shape] : kernels)
      source += kernel_body("xrt_reduce_" + std::to_string(n++), spec, shape);
    samples.push_back({"reduce: " + what, {source}});
  };
  add("sum/prod/mean", sums);
  add("max/min/argmax/argmin/all/any/count_nonzero/var/std/vector_norm", others);
  add("walks and partials", walks);
  return samples;
}

KernelInfo kernel(const ReductionEntry& e) {
  return kernel_info(e.name, "nvrtc", e.run, e.description);
}

}  // namespace

void register_reduction_kernels(KernelRegistry& registry) {
  for (const ReductionEntry& e : kReductions) registry.add(kernel(e));
  register_kernel_samples("reduce", reduce_samples);
}

}  // namespace xrt::cuda
