// cpp/src/cuda/creation_kernels.cpp: arange, linspace, tril and triu on CUDA, with the same
// formulas as the CPU's creation_kernels.cpp, so results are bit-identical. Device code:
// cpp/kernels/xrt/index.cuh.

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/index_common.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"
#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/indexing.h"
#include "xpuruntime/ops.h"

namespace xrt::cuda {
namespace {

using namespace index_detail;

// ---- arange, linspace ------------------------------------------------------------------

KernelSource arange_source(const std::string& t, bool integer, bool index32) {
  std::string u = index_type(index32);
  if (integer)
    return {kHead + "xrt_arange(" + t + "* out, xrt::uint64_t first, xrt::uint64_t delta, " + u +
            " n) {\n  xrt::arange_integer<" + t + ", " + u + ">(out, first, delta, n);\n}\n", {}};
  return {kHead + "xrt_arange(" + t + "* out, double first, double delta, " + u +
          " n) {\n  xrt::arange_double<" + t + ", " + u + ">(out, first, delta, n);\n}\n", {}};
}

bool int_scalar(const Scalar& v) { return v.kind == Scalar::Kind::Int || v.kind == Scalar::Kind::UInt; }

// As cpu/fill_kernels.cpp: exact wrapping integers for integer dtypes and integer scalars,
// else double.
void arange_kernel(const KernelCall& call) {
  const Tensor& out = call.out();
  int64_t n = out.numel();
  if (n == 0) return;
  const Scalar &start = call.attrs->value, &step = call.attrs->step;
  bool integer = is_integer(out.dtype()) && int_scalar(start) && int_scalar(step);
  bool index32 = n <= INT32_MAX;
  int device = out.device().index;
  activate(device);
  char key[48];
  std::snprintf(key, sizeof key, "arange/%d/%d/%d", int(out.dtype()), integer, index32);
  CUfunction fn = jit_function(device, key, [&] {
    return arange_source(device_type(out.dtype()), integer, index32);
  }, "xrt_arange");
  void* o = out.data();
  uint32_t n32 = uint32_t(n);
  uint64_t n64 = uint64_t(n);
  void* np = index32 ? static_cast<void*>(&n32) : static_cast<void*>(&n64);
  if (integer) {
    uint64_t first = start.kind == Scalar::Kind::UInt ? start.u : uint64_t(start.i);
    uint64_t delta = step.kind == Scalar::Kind::UInt ? step.u : uint64_t(step.i);
    launch_n(fn, n, device, {&o, &first, &delta, np});
  } else {
    double first = start.to<double>(), delta = step.to<double>();
    launch_n(fn, n, device, {&o, &first, &delta, np});
  }
}

KernelSource linspace_source(DType dtype, bool index32) {
  std::string t = device_type(dtype), u = index_type(index32);
  if (is_complex(dtype))
    return {kHead + "xrt_linspace(" + t + "* out, double a, double b, double c, double d, " + u +
            " n) {\n  xrt::linspace_complex<" + t + ", " + u + ">(out, a, b, c, d, n);\n}\n", {}};
  return {kHead + "xrt_linspace(" + t + "* out, double start, double step, " + u +
          " n) {\n  xrt::linspace_real<" + t + ", " + (is_integer(dtype) ? "true" : "false") +
          ", " + u + ">(out, start, step, n);\n}\n", {}};
}

// As cpu/creation_kernels.cpp: start + i * step in double (complex double); the core
// writes the endpoint itself.
void linspace_kernel(const KernelCall& call) {
  const Tensor& out = call.out();
  int64_t n = out.numel();
  if (n == 0) return;
  bool index32 = n <= INT32_MAX;
  int device = out.device().index;
  activate(device);
  char key[48];
  std::snprintf(key, sizeof key, "linspace/%d/%d", int(out.dtype()), index32);
  CUfunction fn = jit_function(device, key, [&] { return linspace_source(out.dtype(), index32); },
                               "xrt_linspace");
  void* o = out.data();
  uint32_t n32 = uint32_t(n);
  uint64_t n64 = uint64_t(n);
  void* np = index32 ? static_cast<void*>(&n32) : static_cast<void*>(&n64);
  if (is_complex(out.dtype())) {
    auto a = call.attrs->value.to<std::complex<double>>();
    auto s = call.attrs->step.to<std::complex<double>>();
    double ar = a.real(), ai = a.imag(), sr = s.real(), si = s.imag();
    launch_n(fn, n, device, {&o, &ar, &ai, &sr, &si, np});
  } else {
    double a = call.attrs->value.to<double>(), s = call.attrs->step.to<double>();
    launch_n(fn, n, device, {&o, &a, &s, np});
  }
}

// ---- tril, triu ------------------------------------------------------------------------

KernelSource triangle_source(size_t size, bool lower, int ndim, bool index32) {
  std::string t = bytes_type(size), u = index_type(index32), nd = std::to_string(ndim);
  return {kHead + "xrt_triangle(char* out, const char* in, xrt::StridedLayout<" + nd +
          ", 2> layout, " + u + " n, " + u + " rows, " + u + " cols, xrt::int64_t k) {\n" +
          "  xrt::triangle<" + t + ", " + (lower ? "true" : "false") + ", " + nd + ", " + u +
          ">(out, in, layout, n, rows, cols, k);\n}\n", {}};
}

template <bool Lower> void triangle_kernel(const KernelCall& call) {
  const Tensor& in = call.in(0);
  const Tensor& out = call.out();  // contiguous, in's shape
  int nd = in.ndim();
  int64_t rows = in.shape()[nd - 2], cols = in.shape()[nd - 1];
  int64_t k = std::clamp<int64_t>(call.attrs->value.to<int64_t>(), -rows - 1, cols + 1);
  StridedPlan plan = plan_strided({&out, &in});
  if (plan.numel == 0) return;
  int device = out.device().index;
  activate(device);
  bool index32 = plan.index32;
  char key[48];
  std::snprintf(key, sizeof key, "triangle/%zu/%d/%d/%d", out.itemsize(), Lower, plan.ndim,
                index32);
  CUfunction fn = jit_function(device, key, [&] {
    return triangle_source(out.itemsize(), Lower, plan.ndim, index32);
  }, "xrt_triangle");
  void *o = out.data(), *i = in.data();
  uint32_t u32[3] = {uint32_t(plan.numel), uint32_t(rows), uint32_t(cols)};
  uint64_t u64[3] = {uint64_t(plan.numel), uint64_t(rows), uint64_t(cols)};
  auto arg = [&](int j) { return index32 ? static_cast<void*>(&u32[j]) : static_cast<void*>(&u64[j]); };
  launch_n(fn, plan.numel, device,
           {&o, &i, const_cast<int64_t*>(plan.layout.data()), arg(0), arg(1), arg(2), &k});
}


std::vector<KernelSample> creation_samples() {
  std::vector<KernelSample> s;
  for (int d = 0; d < kNumDTypes; ++d) {
    DType dt = DType(d);
    std::string t = device_type(dt);
    if (dt == DType::Bool) continue;
    s.push_back({"xrt_arange " + t, arange_source(t, false, true)});
    if (is_integer(dt)) s.push_back({"xrt_arange int " + t, arange_source(t, true, false)});
    s.push_back({"xrt_linspace " + t, linspace_source(dt, true)});
  }
  s.push_back({"xrt_linspace complex128/64", linspace_source(DType::Complex128, false)});
  for (size_t size : {1, 2, 4, 8, 16}) {
    std::string b = std::to_string(size) + " bytes";
    s.push_back({"xrt_triangle lower " + b, triangle_source(size, true, 3, true)});
    s.push_back({"xrt_triangle upper " + b, triangle_source(size, false, 2, false)});
  }
  return s;
}

}  // namespace

void register_creation_kernels(KernelRegistry& registry) {
  auto add = [&](const char* op, KernelFn run, const char* description) {
    registry.add(kernel_info(op, "nvrtc", std::move(run), description));
  };
  add("arange", arange_kernel, "start + i * step");
  add("linspace", linspace_kernel, "start + i * step, in double precision");
  add("tril", triangle_kernel<true>, "strided copy with zeros (bytes)");
  add("triu", triangle_kernel<false>, "strided copy with zeros (bytes)");
  register_kernel_samples("creation", creation_samples);
}

}  // namespace xrt::cuda
