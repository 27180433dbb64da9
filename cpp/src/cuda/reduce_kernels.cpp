// cpp/src/cuda/reduce_kernels.cpp: sum, prod, mean, var, std, max, min, argmax, argmin,
// all, any, count_nonzero and vector_norm on CUDA: the reducer and its parameters for each
// op and dtype, and the kernels' compile-check samples. Device code:
// cpp/kernels/xrt/reduce.cuh (walks) and reducers.cuh (what each op computes, as the CPU's
// reducers); planning and launching: reduce_launch.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "cuda/codegen.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/reduce_common.h"
#include "cuda/reduce_launch.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

using namespace reduce;

void reduce_into(Spec spec, const Tensor& x, const KernelCall& call, bool positions) {
  Problem p = problem_of(x, call.attrs->axes, positions);
  spec.count = p.reduced.numel;
  launcher_for(call.out()).run(spec, p, call.out().data(), true);
}

std::string type_of(DType d) { return device_type(d); }

// A reducer's name for its dtypes, made once per call site for every dtype (each lambda is
// its own type, so its own table): building it per call was a tenth of a tiny reduction's
// host instructions (Note [Reduction kernels remembered] in reduce_launch.cpp). make
// takes the input dtype, or the input and output dtypes.
template <class Make> const std::string& named_once(DType in, Make make) {
  static const auto names = [&] {
    std::array<std::string, kNumDTypes> n;
    for (int i = 0; i < kNumDTypes; ++i) n[i] = make(static_cast<DType>(i));
    return n;
  }();
  return names[static_cast<int>(in)];
}

template <class Make> const std::string& named_once(DType in, DType out, Make make) {
  static const auto names = [&] {
    std::array<std::string, kNumDTypes * kNumDTypes> n;
    for (int i = 0; i < kNumDTypes; ++i)
      for (int o = 0; o < kNumDTypes; ++o)
        n[i * kNumDTypes + o] = make(static_cast<DType>(i), static_cast<DType>(o));
    return n;
  }();
  return names[static_cast<int>(in) * kNumDTypes + static_cast<int>(out)];
}

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
  spec.reducer = named_once(x.dtype(), out, [](DType i, DType o) {
    return std::string("xrt::reduce::") + Family + "<" + type_of(i) + ", " + type_of(o) + ">";
  });
  spec.in_size = static_cast<int64_t>(x.itemsize());
  spec.acc_size = sum_accumulator_size(out);
  reduce_into(std::move(spec), x, call, false);
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
  spec.reducer = named_once(x.dtype(), [](DType d) {
    return "xrt::reduce::Extremum<" + ordered_type(d) + ", " + (Max ? "true" : "false") + ">";
  });
  spec.in_size = static_cast<int64_t>(x.itemsize());
  spec.acc_size = compute_size(x.dtype());
  reduce_into(std::move(spec), x, call, false);
}

template <bool Max> void arg_extremum_kernel(const KernelCall& call) {
  const Tensor& x = call.in(0);
  if (is_complex(x.dtype())) throw TypeError("complex numbers have no order");
  Spec spec;
  spec.reducer = named_once(x.dtype(), [](DType d) {
    return "xrt::reduce::ArgExtremum<" + ordered_type(d) + ", " + (Max ? "true" : "false") +
           ">";
  });
  spec.in_size = static_cast<int64_t>(x.itemsize());
  spec.acc_size = 16;
  reduce_into(std::move(spec), x, call, true);
}

template <int Op> void truth_kernel(const KernelCall& call) {
  static const char* const ops[] = {"xrt::reduce::kAll", "xrt::reduce::kAny",
                                    "xrt::reduce::kCount"};
  const Tensor& x = call.in(0);
  Spec spec;
  spec.reducer = named_once(x.dtype(), [](DType d) {
    return "xrt::reduce::Truth<" + type_of(d) + ", " + ops[Op] + ">";
  });
  spec.in_size = static_cast<int64_t>(x.itemsize());
  spec.acc_size = Op == 2 ? 8 : 4;
  reduce_into(std::move(spec), x, call, false);
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
