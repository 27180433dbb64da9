// cpp/src/cuda/linalg_vector_kernels.cpp: cross and outer on CUDA, NVRTC kernels of
// cpp/kernels/xrt/linalg_vector.cuh with the CPU's arithmetic (bit-identical results).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/linalg_common.h"
#include "cuda/runtime.h"

namespace xrt::cuda {
namespace {

constexpr unsigned kBlock = 256;

// The stored type of each dtype in the elementwise device code (real_math.cuh), whose
// multiply and subtract these kernels use.
const char* element_type(DType d) {
  static const char* const names[kNumDTypes] = {
      "bool", "xrt::ew::i8", "xrt::ew::i16", "xrt::ew::i32", "xrt::ew::i64", "xrt::ew::u8",
      "xrt::ew::u16", "xrt::ew::u32", "xrt::ew::u64", "xrt::ew::Float16", "xrt::ew::BFloat16",
      "float", "double", "xrt::ew::Complex<float>", "xrt::ew::Complex<double>"};
  return names[static_cast<int>(d)];
}

const char* index_type(bool index32) { return index32 ? "xrt::uint32_t" : "xrt::uint64_t"; }

const std::string kHead = "#include \"xrt/linalg_vector.cuh\"\nextern \"C\" __global__ void "
                          "__launch_bounds__(256) ";

KernelSource cross_source(DType dtype, int ndim, bool index32) {
  std::string t = element_type(dtype), u = index_type(index32), nd = std::to_string(ndim);
  return {kHead + "xrt_cross(char* out, const char* a, const char* b, xrt::StridedLayout<" + nd +
              ", 3> layout, " + u + " n, xrt::int64_t axis_out, xrt::int64_t axis_a, "
              "xrt::int64_t axis_b) {\n  xrt::linalg::cross<" + t + ", " + nd + ", " + u +
              ">(out, a, b, layout, n, axis_out, axis_a, axis_b);\n}\n",
          {}};
}

KernelSource outer_source(DType dtype, bool index32) {
  std::string t = element_type(dtype), u = index_type(index32);
  return {kHead + "xrt_outer(" + t + "* out, const char* a, xrt::int64_t stride_a, const char* b, "
              "xrt::int64_t stride_b, " + u + " rows, " + u + " cols) {\n  xrt::linalg::outer<" +
              t + ", " + u + ">(out, a, stride_a, b, stride_b, rows, cols);\n}\n",
          {}};
}

// t without its axis `axis` (a view over the remaining ones).
Tensor drop_axis(const Tensor& t, int axis) {
  Dims shape = t.shape(), strides = t.strides();
  shape.erase(axis);
  strides.erase(axis);
  return t.as_strided(std::move(shape), std::move(strides), t.byte_offset());
}

int64_t byte_stride(const Tensor& t, int axis) {
  return t.strides()[axis] * static_cast<int64_t>(t.itemsize());
}

// Inputs broadcast to the output's shape; attrs.axes[0]: the axis of length 3.
void cross_kernel(const KernelCall& call) {
  const Tensor &a = call.in(0), &b = call.in(1);
  Tensor& out = call.out();
  if (out.numel() == 0) return;
  const int axis = static_cast<int>(call.attrs->axes[0]);
  Tensor o_rest = drop_axis(out, axis), a_rest = drop_axis(a, axis), b_rest = drop_axis(b, axis);
  StridedPlan plan = plan_strided({&o_rest, &a_rest, &b_rest});
  int device = out.device().index;
  activate(device);
  char key[48];
  std::snprintf(key, sizeof key, "cross/%d/%d/%d", static_cast<int>(out.dtype()), plan.ndim,
                plan.index32 ? 1 : 0);
  CUfunction fn = jit_function(device, key, [&] {
    return cross_source(out.dtype(), plan.ndim, plan.index32);
  }, "xrt_cross");
  void *o = out.data(), *x = a.data(), *y = b.data();
  uint32_t n32 = uint32_t(plan.numel);
  uint64_t n64 = uint64_t(plan.numel);
  int64_t strides[3] = {byte_stride(out, axis), byte_stride(a, axis), byte_stride(b, axis)};
  void* args[] = {&o, &x, &y, const_cast<int64_t*>(plan.layout.data()),
                  plan.index32 ? static_cast<void*>(&n32) : static_cast<void*>(&n64),
                  &strides[0], &strides[1], &strides[2]};
  launch(fn, {grid_blocks(plan.numel, kBlock)}, {kBlock}, 0, current_stream(device), args);
}

// out[i, j] = a[i] * b[j]; the op hands a and b over broadcast to (N, M), out contiguous.
void outer_kernel(const KernelCall& call) {
  const Tensor &a = call.in(0), &b = call.in(1);
  solver::Output result(call.out());
  const int64_t rows = result.buffer.shape()[0], cols = result.buffer.shape()[1];
  const int64_t n = rows * cols;
  if (n == 0) return;
  int device = result.buffer.device().index;
  activate(device);
  const bool index32 = n <= INT32_MAX;
  char key[48];
  std::snprintf(key, sizeof key, "outer/%d/%d", static_cast<int>(a.dtype()), index32 ? 1 : 0);
  CUfunction fn = jit_function(device, key, [&] { return outer_source(a.dtype(), index32); },
                               "xrt_outer");
  void *o = result.data(), *x = a.data(), *y = b.data();
  int64_t sa = byte_stride(a, 0), sb = byte_stride(b, 1);
  uint32_t r32 = uint32_t(rows), c32 = uint32_t(cols);
  uint64_t r64 = uint64_t(rows), c64 = uint64_t(cols);
  void* args[] = {&o, &x, &sa, &y, &sb, index32 ? static_cast<void*>(&r32) : &r64,
                  index32 ? static_cast<void*>(&c32) : &c64};
  launch(fn, {grid_blocks(n, kBlock)}, {kBlock}, 0, current_stream(device), args);
  result.finish();
}

std::vector<KernelSample> vector_samples() {
  std::vector<KernelSample> samples;
  for (int d = 1; d < kNumDTypes; ++d) {  // every numeric dtype (bool is refused by the ops)
    DType dtype = DType(d);
    std::string name(dtype_info(dtype).name);
    samples.push_back({"xrt_cross " + name, cross_source(dtype, 1, true)});
    samples.push_back({"xrt_outer " + name, outer_source(dtype, true)});
  }
  samples.push_back({"xrt_cross float64 3d 64-bit", cross_source(DType::Float64, 3, false)});
  samples.push_back({"xrt_outer complex128 64-bit", outer_source(DType::Complex128, false)});
  return samples;
}

bool numeric(const DTypeSignature& s) { return is_numeric(s.dtypes[0]); }

}  // namespace

void register_linalg_vector_kernels(KernelRegistry& registry) {
  registry.add(kernel_info("cross", "nvrtc", cross_kernel,
                           "3-vector cross products, strided (the CPU's arithmetic)", numeric));
  registry.add(kernel_info("outer", "nvrtc", outer_kernel,
                           "strided products (the CPU's arithmetic)", numeric));
  register_kernel_samples("linalg_vector", vector_samples);
}

}  // namespace xrt::cuda
