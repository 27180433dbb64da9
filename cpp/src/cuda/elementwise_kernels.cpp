// cpp/src/cuda/elementwise_kernels.cpp: the CUDA kernels of every row of the elementwise
// tables (XRT_UNARY_OPS, XRT_BINARY_OPS) and of `where`: one ElementwiseKernel per op
// (elementwise_kernel.h), registered for the dtypes the table gives it, warmed up on
// request, and sampled for the compile check.
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuda/elementwise_kernel.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

using namespace elementwise;

// The ops whose functions are long (they call the math library for some input, and
// complex64 computes in double): one vector per thread, and one element per vector for
// complex (max_vector).
bool calls_math(const ElementwiseInfo& info) { return info.math_library != MathLibrary::No; }

// One kernel object per op, for the life of the process.
std::vector<ElementwiseKernel*>& all_kernels() {
  static std::vector<ElementwiseKernel*> kernels = [] {
    std::vector<ElementwiseKernel*> k;
    for (int i = 0; i < num_unary_ops(); ++i) {
      const ElementwiseInfo& info = unary_info(static_cast<UnaryOp>(i));
      k.push_back(new ElementwiseKernel({info.name, Family::Unary, &info, calls_math(info)}));
    }
    for (int i = 0; i < num_binary_ops(); ++i) {
      const ElementwiseInfo& info = binary_info(static_cast<BinaryOp>(i));
      k.push_back(new ElementwiseKernel({info.name, Family::Binary, &info, calls_math(info)}));
    }
    k.push_back(new ElementwiseKernel({"where", Family::Where, nullptr, false}));
    return k;
  }();
  return kernels;
}

// An op that computes integers in the default float (integer division) has no integer
// kernel: the op definition casts its inputs first.
bool has_kernel(const OpSpec& spec, DType dtype) {
  if (!spec.info) return true;
  if (!in_category(dtype, spec.info->accepts)) return false;
  return !(spec.info->computes_in == ComputesIn::FloatForIntegers && is_integer(dtype));
}

std::vector<KernelSample> elementwise_kernel_samples();

}  // namespace

void register_elementwise_kernels(KernelRegistry& registry) {
  register_kernel_samples("elementwise", elementwise_kernel_samples);
  for (ElementwiseKernel* kernel : all_kernels()) {
    DTypePredicate supports;
    if (kernel->spec().family != Family::Where) {
      OpSpec spec = kernel->spec();
      supports = [spec](const DTypeSignature& s) { return has_kernel(spec, s.dtypes[0]); };
    }
    KernelInfo info = kernel_info(
        kernel->spec().name, "nvrtc", [kernel](const KernelCall& call) { kernel->run(call); },
        "NVRTC kernel: 16-byte vector loads on dense operands, collapsed strides otherwise",
        std::move(supports));
    info.plan_replay = [kernel](const KernelCall& call, ReplayPlan& plan) {
      return kernel->plan_replay(call, plan);
    };
    registry.add(std::move(info));
  }
}

void warm_elementwise_kernels(int device, unsigned threads) {
  activate(device);
  std::vector<std::pair<ElementwiseKernel*, DType>> jobs;
  for (ElementwiseKernel* kernel : all_kernels())
    for (int d = 0; d < kNumDTypes; ++d)
      if (has_kernel(kernel->spec(), static_cast<DType>(d)))
        jobs.emplace_back(kernel, static_cast<DType>(d));
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      activate(device);
      for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
        Layout dense;
        dense.vector = jobs[i].first->max_vector(jobs[i].second);
        jobs[i].first->prepare(device, jobs[i].second, dense);
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(threads, 1u); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

namespace {

// Note: one sample per op, holding the sources of all its specialisations one after the
// other (each includes the same header once): NVRTC's fixed cost per program is most of a
// small kernel's compile time, and CI compiles them all.
std::vector<KernelSample> elementwise_kernel_samples() {
  std::vector<KernelSample> samples;
  for (ElementwiseKernel* kernel : all_kernels()) {
    KernelSample sample;
    sample.name = kernel->spec().name;
    auto add = [&](DType dtype, const Layout& layout) {
      std::string name;
      KernelSource s = kernel->source(dtype, layout, name);
      sample.source.source += s.source;
      sample.source.options = s.options;
    };
    bool first = true;
    for (int d = 0; d < kNumDTypes; ++d) {
      DType dtype = static_cast<DType>(d);
      if (kernel->spec().family == Family::Where) {
        if (dtype != DType::Bool && dtype != DType::Float16 && dtype != DType::Float32 &&
            dtype != DType::Float64 && dtype != DType::Complex128)
          continue;  // one per item size
      } else if (!has_kernel(kernel->spec(), dtype)) {
        continue;
      }
      // Every dtype in the common dense layout; the other layouts for the op's first dtype.
      Layout dense;
      dense.vector = kernel->max_vector(dtype);
      add(dtype, dense);
      if (!first) continue;
      first = false;
      Layout scalar = dense;
      scalar.scalars = kernel->spec().family == Family::Unary ? 1u : 2u;
      add(dtype, scalar);
      Layout unaligned = dense;
      unaligned.vector = 1;
      if (dense.vector > 1) add(dtype, unaligned);
      Layout strided;
      strided.dense = false;
      strided.ndim = 3;
      add(dtype, strided);
      strided.ndim = 2;
      strided.index32 = false;
      add(dtype, strided);
      if (dense.vector > 1) {  // Note [Rows layout]: vectors of rows, a per-row input
        Layout rows = strided;
        rows.rows = true;
        rows.vector = dense.vector;
        rows.scalars = kernel->spec().family == Family::Unary ? 0u : 2u;
        add(dtype, rows);
        rows.index32 = true;
        rows.scalars = 0;
        add(dtype, rows);
        rows.gathers = 1;  // a step slice
        add(dtype, rows);
      }
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace

}  // namespace xrt::cuda

