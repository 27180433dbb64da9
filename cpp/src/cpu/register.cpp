// cpp/src/cpu/register.cpp: registers the built-in CPU kernels with the registry.
#include <vector>

#include "core/linear_internal.h"
#include "cpu/kernels.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/registry.h"

namespace xrt {
namespace {

DType output_dtype(const DTypeSignature& sig) { return sig.dtypes[sig.count - 1]; }


}  // namespace

KernelInfo cpu::kernel_info(std::string op, std::string name, KernelFn run,
                            std::string description, DTypePredicate supports, int priority) {
  KernelInfo k;
  k.op = std::move(op);
  k.name = std::move(name);
  k.device = DeviceType::CPU;
  k.run = std::move(run);
  k.description = std::move(description);
  k.supports = std::move(supports);
  k.priority = priority;
  return k;
}

void cpu::register_kernels(KernelRegistry& r) {
  r.add(cpu::kernel_info("copy", "native", cpu::copy_kernel, "strided copy with dtype conversion"));
  r.add(cpu::kernel_info("fill", "native", cpu::fill_kernel, "fill with a scalar"));
  r.add(cpu::kernel_info("arange", "native", cpu::arange_kernel, "start + i * step"));
  cpu::register_reduction_kernels(r);
  cpu::register_scan_kernels(r);
  // Elementwise: one kernel per row of the tables; the op definition has already checked
  // the dtype category, `supports` repeats it so that the registry can answer for users.
  // Ops that call libm also get per-ISA kernels (libmvec SIMD) where the CPU has the ISA.
  struct Variant {
    const char* name;
    const cpu::KernelFnPtr* unary;
    const cpu::KernelFnPtr* binary;
    const cpu::KernelFnPtr* rows;
    int priority;
  };
  std::vector<Variant> variants;
#ifdef XRT_X86_ISA_VARIANTS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
    variants.push_back({"avx512", cpu::avx512::kUnaryMath, cpu::avx512::kBinaryMath,
                        cpu::avx512::kRowKernels, 6});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    variants.push_back({"avx2", cpu::avx2::kUnaryMath, cpu::avx2::kBinaryMath,
                        cpu::avx2::kRowKernels, 5});
#endif
  // Note [Replayed calls] (core/replay.cpp): a CPU elementwise loop plans its own
  // layout on every call, so its replay is the loop itself, without the decision.
  auto replayed = [](cpu::KernelFnPtr fn) {
    return [fn](const KernelCall&, ReplayPlan& plan) {
      plan.as<cpu::KernelFnPtr>() = fn;
      plan.run = [](const ReplayPlan& p, const KernelCall& call) {
        p.as<cpu::KernelFnPtr>()(call);
        return true;
      };
      return true;
    };
  };
  auto add_elementwise = [&](const ElementwiseInfo& info, cpu::KernelFnPtr generic,
                             cpu::KernelFnPtr libm, auto pick) {
    auto supports = [accepts = info.accepts](const DTypeSignature& s) {
      return in_category(s.dtypes[0], accepts);
    };
    KernelInfo k = cpu::kernel_info(info.name, "native", generic ? generic : libm,
                                    "vectorised strided loop", supports);
    k.plan_replay = replayed(generic ? generic : libm);
    r.add(std::move(k));
    if (generic) return;
    for (const Variant& v : variants) {
      KernelInfo isa = cpu::kernel_info(info.name, v.name, pick(v),
                                        std::string("libmvec SIMD loop (") + v.name + ")",
                                        supports, v.priority);
      isa.plan_replay = replayed(pick(v));
      r.add(std::move(isa));
    }
  };
  for (int i = 0; i < num_unary_ops(); ++i)
    add_elementwise(unary_info(static_cast<UnaryOp>(i)), cpu::kUnaryKernels[i],
                    cpu::baseline::kUnaryMath[i], [i](const Variant& v) { return v.unary[i]; });
  for (int i = 0; i < num_binary_ops(); ++i)
    add_elementwise(binary_info(static_cast<BinaryOp>(i)), cpu::kBinaryKernels[i],
                    cpu::baseline::kBinaryMath[i], [i](const Variant& v) { return v.binary[i]; });
  // The row ops (Note [Row ops] in core/norm_ops.cpp): rows of a real floating dtype.
  const char* row_ops[] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};
  auto float_rows = [](const DTypeSignature& s) { return is_floating(s.dtypes[0]); };
  for (int i = 0; i < 4; ++i) {
    r.add(cpu::kernel_info(row_ops[i], "native", cpu::baseline::kRowKernels[i],
                           "a row per task, statistics in 16 running accumulators", float_rows));
    for (const Variant& v : variants)
      r.add(cpu::kernel_info(row_ops[i], v.name, v.rows[i],
                             std::string("a row per task, libmvec SIMD exp (") + v.name + ")",
                             float_rows, v.priority));
  }
  // attention_rows (Note [CPU attention] in core/norm_ops.cpp): float32 and float64.
  auto float_attention = [](const DTypeSignature& s) {
    return s.dtypes[0] == DType::Float32 || s.dtypes[0] == DType::Float64;
  };
  r.add(cpu::kernel_info("attention_rows", "native", cpu::baseline::kRowKernels[4],
                         "8 query rows x 2 vectors of keys per register tile, softmax rows",
                         float_attention));
  for (const Variant& v : variants)
    r.add(cpu::kernel_info("attention_rows", v.name, v.rows[4],
                           std::string("8 query rows x 2 vectors of keys per register tile, "
                                       "libmvec SIMD exp (") + v.name + ")",
                           float_attention, v.priority));
  r.add(cpu::kernel_info("where", "native", cpu::where_kernel, "select by a boolean mask"));
  r.add(cpu::kernel_info("matmul", "openblas", cpu::matmul_openblas,
                   "cblas ?gemm from scipy-openblas64",
                   [](const DTypeSignature& s) {
                     return cpu::matmul_openblas_supports(output_dtype(s));
                   },
                   /*priority=*/10));
  r.add(cpu::kernel_info("matmul", "native", cpu::matmul_native,
                   "blocked C++ (packed micro-kernel for float32/float64)",
                   [](const DTypeSignature& s) { return is_numeric(output_dtype(s)); }));
  r.add(cpu::kernel_info("linear", "composite", linear_composite_kernel,
                         "the matmul kernel into the output, then bias and activation in place",
                         [](const DTypeSignature& s) { return is_floating(output_dtype(s)); }));
  auto float32_out = [](const DTypeSignature& s) { return output_dtype(s) == DType::Float32; };
  r.add(cpu::kernel_info("linear_packed", "native", cpu::linear_packed_kernel,
                         "portable loops over the packed panels", float32_out));
#ifdef XRT_X86_ISA_VARIANTS
  if (__builtin_cpu_supports("avx512f"))
    r.add(cpu::kernel_info("linear_packed", "avx512", cpu::avx512::linear_packed_kernel,
                           "8 x 32 AVX-512 register tiles over the packed panels", float32_out,
                           6));
#endif
  cpu::register_sorting_kernels(r);
  cpu::register_index_kernels(r);
  cpu::register_creation_kernels(r);
  cpu::register_manipulation_kernels(r);
  cpu::register_fft_kernels(r);
  cpu::register_linalg_kernels(r);
}

}  // namespace xrt

XRT_REGISTER_KERNELS(xrt::cpu::register_kernels);
