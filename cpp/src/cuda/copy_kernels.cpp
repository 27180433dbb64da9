// cpp/src/cuda/copy_kernels.cpp: copy (with conversion between any two dtypes, any strides;
// astype too) and fill on CUDA. Device code: cpp/kernels/xrt/copy.cuh.
//
// Specialisations: element types, contiguous or strided with its merged ndim, 32- or 64-bit
// indexing. A copy without conversion moves bytes of the element's size (bool and uint8
// share one kernel) or of a wider size (Note [Widened copies]), and contiguous ones are a
// cuMemcpy, as contiguous fills of zero bytes, 1-byte or 4-byte values are a cuMemset.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "core/host/dtype_dispatch.h"
#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace xrt::cuda {
namespace {

constexpr unsigned kBlock = 256;
constexpr int kUnroll = 4;  // kCopyUnroll in copy.cuh

/// How the kernel walks its operands: ndim 0 stands for contiguous.
struct Shape {
  int ndim = 0;
  bool index32 = true;
};

std::string shape_key(Shape s) {
  return (s.ndim == 0 ? std::string("c") : "s" + std::to_string(s.ndim)) +
         (s.index32 ? "/32" : "/64");
}

const char* index_type(Shape s) { return s.index32 ? "xrt::uint32_t" : "xrt::uint64_t"; }
const char* offset_type(Shape s) { return s.index32 ? "int" : "xrt::int64_t"; }

/// The device type that moves `size` bytes unchanged.
const char* bytes_type(size_t size) {
  switch (size) {
    case 1: return "xrt::uint8_t";
    case 2: return "xrt::uint16_t";
    case 4: return "xrt::uint32_t";
    case 8: return "xrt::uint64_t";
    default: return "xrt::bytes16";
  }
}

KernelSource copy_source(const std::string& to, const std::string& from, Shape s) {
  std::string head = "#include \"xrt/copy.cuh\"\nextern \"C\" __global__ void __launch_bounds__(" +
                     std::to_string(kBlock) + ") xrt_copy(";
  std::string u = index_type(s);
  if (s.ndim == 0)
    return {head + to + "* out, const " + from + "* in, " + u + " n) {\n  xrt::copy_contiguous<" +
            to + ", " + from + ", " + u + ">(out, in, n);\n}\n", {}};
  std::string nd = std::to_string(s.ndim);
  return {head + "char* out, const char* in, xrt::StridedLayout<" + nd + ", 2> layout, " + u +
          " n) {\n  xrt::copy_strided<" + to + ", " + from + ", " + nd + ", " + u + ", " +
          offset_type(s) + ">(out, in, layout, n);\n}\n", {}};
}

KernelSource fill_source(size_t size, Shape s) {
  std::string head = "#include \"xrt/copy.cuh\"\nextern \"C\" __global__ void __launch_bounds__(" +
                     std::to_string(kBlock) + ") xrt_fill(";
  std::string t = bytes_type(size), u = index_type(s);
  if (s.ndim == 0)
    return {head + t + "* out, " + t + " value, " + u + " n) {\n  xrt::fill_contiguous<" + t +
            ", " + u + ">(out, value, n);\n}\n", {}};
  std::string nd = std::to_string(s.ndim);
  return {head + "char* out, " + t + " value, xrt::StridedLayout<" + nd + ", 1> layout, " + u +
          " n) {\n  xrt::fill_strided<" + t + ", " + nd + ", " + u + ", " + offset_type(s) +
          ">(out, value, layout, n);\n}\n", {}};
}

/// Launches a copy or fill kernel over the plan: args are the leading arguments (pointers,
/// value), followed here by the layout when strided and the element count.
void launch_over(CUfunction fn, const StridedPlan& plan, Shape s, std::vector<void*> args,
                 int device) {
  uint32_t n32 = static_cast<uint32_t>(plan.numel);
  uint64_t n64 = static_cast<uint64_t>(plan.numel);
  if (s.ndim > 0) args.push_back(const_cast<int64_t*>(plan.layout.data()));
  args.push_back(s.index32 ? static_cast<void*>(&n32) : static_cast<void*>(&n64));
  unsigned blocks = grid_blocks(plan.numel, kBlock * kUnroll);
  launch(fn, {blocks}, {kBlock}, 0, current_stream(device), args.data());
}

/// A contiguous kernel indexes elements, a strided one bytes too (plan.index32).
Shape shape_of(const StridedPlan& plan) {
  if (plan.contiguous) return {0, plan.numel <= INT32_MAX};
  return {plan.ndim, plan.index32};
}

/// Note [Widened copies]: a copy without conversion whose innermost dimension is dense in
/// both operands moves runs of bytes; when every run, stride and start is a multiple of a
/// wider width (up to 16 bytes), it moves elements of that width instead: a transpose of
/// float16 heads (runs of 64 elements) then takes one 16-byte access where it took eight
/// 2-byte ones. Returns the width (size when nothing widens) and rewrites the plan.
size_t widen(StridedPlan& plan, size_t size, const void* out, const void* in) {
  const int inner = plan.ndim - 1;
  int64_t* sizes = plan.layout.data();
  int64_t* strides[2] = {sizes + plan.ndim, sizes + 2 * plan.ndim};
  if (strides[0][inner] != static_cast<int64_t>(size) ||
      strides[1][inner] != static_cast<int64_t>(size))
    return size;
  const int64_t run = sizes[inner] * static_cast<int64_t>(size);
  for (int64_t width = 16; width > static_cast<int64_t>(size); width /= 2) {
    bool fits = run % width == 0 && reinterpret_cast<uintptr_t>(out) % width == 0 &&
                reinterpret_cast<uintptr_t>(in) % width == 0;
    for (int d = 0; d < inner && fits; ++d)
      fits = strides[0][d] % width == 0 && strides[1][d] % width == 0;
    if (!fits) continue;
    sizes[inner] = run / width;
    strides[0][inner] = strides[1][inner] = width;
    plan.numel = plan.numel * static_cast<int64_t>(size) / width;
    return static_cast<size_t>(width);
  }
  return size;
}

void copy_kernel(const KernelCall& call) {
  const Tensor& out = call.out();
  const Tensor& in = call.in(0);
  StridedPlan plan = plan_strided({&out, &in}, /*in_memory_order=*/true);
  if (plan.numel == 0) return;
  int device = out.device().index;
  activate(device);
  bool same = out.dtype() == in.dtype();
  if (same && plan.contiguous) {
    XRT_CU(cuMemcpyDtoDAsync, reinterpret_cast<CUdeviceptr>(out.data()),
           reinterpret_cast<CUdeviceptr>(in.data()),
           static_cast<size_t>(plan.numel) * out.itemsize(), current_stream(device));
    return;
  }
  // A copy without conversion moves bytes: its key names the size (negative), not a dtype.
  size_t size = same ? widen(plan, out.itemsize(), out.data(), in.data()) : out.itemsize();
  int to = same ? -static_cast<int>(size) : static_cast<int>(out.dtype());
  int from = same ? to : static_cast<int>(in.dtype());
  Shape s = shape_of(plan);
  char key[48];
  std::snprintf(key, sizeof key, "copy/%d/%d/%d/%d", to, from, s.ndim, s.index32 ? 32 : 64);
  CUfunction fn = jit_function(device, key, [&] {
    auto type = [](int code) {
      return code < 0 ? bytes_type(static_cast<size_t>(-code)) : device_type(DType(code));
    };
    return copy_source(type(to), type(from), s);
  }, "xrt_copy");
  void* out_ptr = out.data();
  void* in_ptr = in.data();
  launch_over(fn, plan, s, {&out_ptr, &in_ptr}, device);
}

void fill_kernel(const KernelCall& call) {
  const Tensor& out = call.out();
  StridedPlan plan = plan_strided({&out}, /*in_memory_order=*/true);
  if (plan.numel == 0) return;
  alignas(16) unsigned char value[16] = {};
  host::visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = call.attrs->value.to<T>();
    std::memcpy(value, &v, sizeof v);
  });
  size_t size = out.itemsize();
  int device = out.device().index;
  activate(device);
  CUstream stream = current_stream(device);
  auto ptr = reinterpret_cast<CUdeviceptr>(out.data());
  if (plan.contiguous) {
    static const unsigned char zeros[16] = {};
    if (size == 1 || std::memcmp(value, zeros, size) == 0) {
      XRT_CU(cuMemsetD8Async, ptr, value[0], static_cast<size_t>(plan.numel) * size, stream);
      return;
    }
    if (size == 4) {
      unsigned word;
      std::memcpy(&word, value, 4);
      XRT_CU(cuMemsetD32Async, ptr, word, static_cast<size_t>(plan.numel), stream);
      return;
    }
  }
  Shape s = shape_of(plan);
  char key[48];
  std::snprintf(key, sizeof key, "fill/%zu/%d/%d", size, s.ndim, s.index32 ? 32 : 64);
  CUfunction fn = jit_function(device, key, [&] { return fill_source(size, s); }, "xrt_fill");
  void* out_ptr = out.data();
  launch_over(fn, plan, s, {&out_ptr, value}, device);
}

/// For CI: every conversion contiguous, byte moves and fills of each size in several
/// shapes, conversions strided from and to float32, and the largest ndim.
std::vector<KernelSample> copy_samples() {
  std::vector<KernelSample> samples;
  auto add_copy = [&](const std::string& to, const std::string& from, Shape s) {
    samples.push_back({"xrt_copy " + to + " <- " + from + " " + shape_key(s),
                       copy_source(to, from, s)});
  };
  for (int a = 0; a < kNumDTypes; ++a)
    for (int b = 0; b < kNumDTypes; ++b) {
      std::string to = device_type(DType(a)), from = device_type(DType(b));
      if (a != b) add_copy(to, from, {0, true});
      if (a != b && (DType(a) == DType::Float32 || DType(b) == DType::Float32))
        add_copy(to, from, {2, true});
    }
  add_copy("xrt::complex64", "xrt::float16", {0, false});
  add_copy("xrt::float16", "double", {3, false});
  for (size_t size : {1, 2, 4, 8, 16}) {
    for (Shape s : {Shape{1, true}, Shape{2, true}, Shape{3, true}, Shape{4, false}})
      add_copy(bytes_type(size), bytes_type(size), s);
    for (Shape s : {Shape{0, true}, Shape{0, false}, Shape{1, true}, Shape{3, true},
                    Shape{2, false}})
      samples.push_back({"xrt_fill " + std::to_string(size) + " bytes " + shape_key(s),
                         fill_source(size, s)});
  }
  add_copy("xrt::bytes16", "xrt::bytes16", {64, false});
  return samples;
}

KernelInfo kernel(std::string op, KernelFn run, std::string description) {
  return kernel_info(std::move(op), "nvrtc", std::move(run), std::move(description));
}

}  // namespace

void register_copy_kernels(KernelRegistry& registry) {
  registry.add(kernel("copy", copy_kernel, "strided copy with dtype conversion"));
  registry.add(kernel("fill", fill_kernel, "fill with a scalar"));
  register_kernel_samples("copy", copy_samples);
}

}  // namespace xrt::cuda
