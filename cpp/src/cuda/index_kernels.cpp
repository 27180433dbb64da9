// cpp/src/cuda/index_kernels.cpp: integer-array indexing (gather, scatter, take_along_axis)
// on CUDA. Device code: cpp/kernels/xrt/index.cuh; arange, linspace, tril and triu, which
// share it, are in creation_kernels.cpp.
//
// Note [Index checks on CUDA]: every index is checked on the device; a bad one records its
// row-major position with atomicMin in a flag per index array, and the host reads the flags
// once, after the gather (whose output is discarded on error) or before the scatter writes
// (scatter, like the CPU's, leaves v untouched on error). Only on error is one index copied
// back, for IndexOutOfRange's message, which is then the CPU's.
//
// Note [Scatter duplicates on CUDA]: the CPU writes positions in order, so the last
// duplicate wins. Here a winners table over the indexed axes' elements takes, per element,
// the largest position naming it (atomicMax), and only that position writes: the same
// result on every run. A repeated value (x[i] = scalar) needs no table.

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/host/dtype_dispatch.h"
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

// ---- integer arrays --------------------------------------------------------------------

/// Index checks (Note [Index checks on CUDA]): one flag per array, all bits set = no error.
struct Flags {
  Tensor device_flags;
  int count;
  Flags(int count, Device device)
      : device_flags(empty(Dims{std::max(count, 1)}, DType::UInt64, device)), count(count) {
    XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(device_flags.data()), 0xff,
           static_cast<size_t>(std::max(count, 1)) * 8, current_stream(device.index));
  }
  uint64_t* slot(int j) const { return reinterpret_cast<uint64_t*>(device_flags.data()) + j; }
  /// Reads the flags (one synchronising copy); throws IndexOutOfRange for the first array
  /// with a bad index, as the CPU does. arrays[j] are the (device) index arrays.
  void check(const Tensor* const* arrays, const int64_t* sizes) const {
    if (count == 0) return;
    std::vector<uint64_t> host(static_cast<size_t>(count));
    backend(DeviceType::CUDA).copy_bytes(host.data(), kCPU, device_flags.data(),
                                         device_flags.device(), host.size() * 8);
    for (int j = 0; j < count; ++j)
      if (host[j] != UINT64_MAX) throw_bad(*arrays[j], static_cast<int64_t>(host[j]), sizes[j], j);
  }
  [[noreturn]] static void throw_bad(const Tensor& indices, int64_t position, int64_t size,
                                     int slot) {
    int64_t offset = 0;
    for (int d = indices.ndim() - 1; d >= 0; --d) {
      offset += (position % indices.shape()[d]) * indices.strides()[d];
      position /= indices.shape()[d];
    }
    offset *= static_cast<int64_t>(indices.itemsize());
    int64_t value = 0;
    host::visit_dtype(indices.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        I raw;
        backend(DeviceType::CUDA).copy_bytes(&raw, kCPU, indices.data() + offset,
                                             indices.device(), sizeof raw);
        value = std::is_unsigned_v<I> && static_cast<uint64_t>(raw) > INT64_MAX
                    ? INT64_MAX
                    : static_cast<int64_t>(raw);
      }
    });
    throw IndexOutOfRange(value, size, slot);
  }
};

void check_index_dtype(DType d) {
  if (!is_integer(d)) throw TypeError("index arrays must have an integer dtype");
}

KernelSource offsets_source(DType index, bool index32) {
  std::string i = device_type(index), u = index_type(index32);
  return {kHead + "xrt_index_offsets(xrt::int64_t* offset, xrt::int64_t* linear, const " + i +
          "* idx, " + u + " n, xrt::int64_t size, xrt::int64_t stride, xrt::int64_t scale, " +
          "int first, xrt::uint64_t* bad) {\n  xrt::index_offsets<" + i + ", " + u +
          ">(offset, linear, idx, n, size, stride, scale, first, bad);\n}\n", {}};
}

/// The indexed axes [a, a + k) of v and the k index arrays of shape B (as in
/// cpu/index_kernels.cpp): per position b, the byte offset of v[..., i_0[b], ..., ...]
/// (and, for scatter, its linear index over the indexed axes), on the device.
struct Selection {
  const Tensor& v;
  int axis, count;
  std::vector<Tensor> arrays;  // contiguous
  std::vector<int64_t> sizes;
  int64_t bn = 1, pn = 1, qn = 1, indexed = 1;  // positions, outer, inner, indexed elements
  Tensor offset, linear;
  Flags flags;

  Selection(const KernelCall& call, const Tensor& v, bool want_linear)
      : v(v),
        axis(static_cast<int>(call.attrs->axes[0])),
        count(call.num_inputs - 1),
        flags(count, v.device()) {
    int device = v.device().index;
    for (int j = 0; j < count; ++j) {
      check_index_dtype(call.in(1 + j).dtype());
      arrays.push_back(contiguous(call.in(1 + j)));
      sizes.push_back(v.shape()[axis + j]);
      indexed *= sizes.back();
    }
    if (count > 0) bn = arrays[0].numel();
    for (int d = 0; d < axis; ++d) pn *= v.shape()[d];
    for (int d = axis + count; d < v.ndim(); ++d) qn *= v.shape()[d];
    offset = empty(Dims{std::max<int64_t>(bn, 1)}, DType::Int64, v.device());
    if (want_linear) linear = empty(Dims{std::max<int64_t>(bn, 1)}, DType::Int64, v.device());
    if (count == 0 || bn == 0) {
      XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(offset.data()), 0,
             static_cast<size_t>(std::max<int64_t>(bn, 1)) * 8, current_stream(device));
      if (want_linear)
        XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(linear.data()), 0,
               static_cast<size_t>(std::max<int64_t>(bn, 1)) * 8, current_stream(device));
      return;
    }
    bool index32 = bn <= INT32_MAX;
    int64_t scale = indexed;
    for (int j = 0; j < count; ++j) {
      scale /= sizes[j] == 0 ? 1 : sizes[j];
      DType dt = arrays[j].dtype();
      char key[48];
      std::snprintf(key, sizeof key, "index_offsets/%d/%d", int(dt), index32);
      CUfunction fn = jit_function(device, key, [&] { return offsets_source(dt, index32); },
                                   "xrt_index_offsets");
      void *o = offset.data(), *l = want_linear ? linear.data() : nullptr;
      void* idx = arrays[j].data();
      uint32_t n32 = uint32_t(bn);
      uint64_t n64 = uint64_t(bn);
      int64_t size = sizes[j];
      int64_t stride = v.strides()[axis + j] * static_cast<int64_t>(v.itemsize());
      int first = j == 0;
      uint64_t* bad = flags.slot(j);
      launch_n(fn, bn, device,
               {&o, &l, &idx, index32 ? static_cast<void*>(&n32) : static_cast<void*>(&n64),
                &size, &stride, &scale, &first, &bad});
    }
  }

  void check() const {
    std::vector<const Tensor*> ptrs;
    for (const Tensor& a : arrays) ptrs.push_back(&a);
    flags.check(ptrs.data(), sizes.data());
  }

  Tensor outer() const { return axes(0, axis); }
  Tensor inner() const { return axes(axis + count, v.ndim()); }
  Tensor axes(int first, int last) const {
    Dims shape(v.shape().begin() + first, v.shape().begin() + last);
    Dims strides(v.strides().begin() + first, v.strides().begin() + last);
    return v.as_strided(std::move(shape), std::move(strides), v.byte_offset());
  }
};

void gather_kernel(const KernelCall& call) {
  const Tensor& v = call.in(0);
  Tensor& out = call.out();  // contiguous, shape P + B + Q
  int device = v.device().index;
  activate(device);
  Selection sel(call, v, false);
  int64_t n = sel.pn * sel.bn * sel.qn;
  if (n > 0) {
    OneLayout outer = one_layout(sel.outer()), inner = one_layout(sel.inner());
    bool index32 = n <= INT32_MAX;
    char key[64];
    std::snprintf(key, sizeof key, "gather/%zu/%d/%d/%d", v.itemsize(), outer.ndim, inner.ndim,
                  index32);
    CUfunction fn = jit_function(device, key, [&] {
      return gather_source(v.itemsize(), outer.ndim, inner.ndim, index32);
    }, "xrt_gather");
    void *o = out.data(), *vp = v.data(), *off = sel.offset.data();
    uint32_t u32[3] = {uint32_t(sel.bn), uint32_t(sel.qn), uint32_t(n)};
    uint64_t u64[3] = {uint64_t(sel.bn), uint64_t(sel.qn), uint64_t(n)};
    auto arg = [&](int j) { return index32 ? static_cast<void*>(&u32[j]) : static_cast<void*>(&u64[j]); };
    launch_n(fn, n, device, {&o, &vp, &off, outer.data.data(), inner.data.data(), arg(0), arg(1),
                             arg(2)});
  }
  sel.check();
}

KernelSource winners_source(bool wide, bool index32) {
  std::string w = wide ? "xrt::uint64_t" : "xrt::uint32_t", u = index_type(index32);
  return {kHead + "xrt_scatter_winners(" + w + "* winner, const xrt::int64_t* linear, " + u +
          " bn) {\n  xrt::scatter_winners<" + w + ", " + u + ">(winner, linear, bn);\n}\n", {}};
}

void scatter_kernel(const KernelCall& call) {
  const Tensor& values = call.in(0);  // contiguous, or one element repeated
  Tensor& v = call.out();
  int device = v.device().index;
  activate(device);
  bool repeated = all_strides_zero(values);
  // Duplicates matter only when positions differ in value and several share an element.
  bool dedupe = !repeated && call.num_inputs > 1 && call.in(1).numel() > 1;
  Selection sel(call, v, dedupe);
  int64_t n = sel.pn * sel.bn * sel.qn;
  Tensor winner;
  bool wide = sel.bn >= INT32_MAX;
  if (dedupe && n > 0 && sel.indexed > 0) {  // indexed == 0: every index is bad
    winner = empty(Dims{sel.indexed}, wide ? DType::UInt64 : DType::UInt32, v.device());
    XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(winner.data()), 0,
           static_cast<size_t>(sel.indexed) * winner.itemsize(), current_stream(device));
    bool index32 = sel.bn <= INT32_MAX;
    char key[48];
    std::snprintf(key, sizeof key, "scatter_winners/%d/%d", wide, index32);
    CUfunction fn = jit_function(device, key, [&] { return winners_source(wide, index32); },
                                 "xrt_scatter_winners");
    void *w = winner.data(), *l = sel.linear.data();
    uint32_t n32 = uint32_t(sel.bn);
    uint64_t n64 = uint64_t(sel.bn);
    launch_n(fn, sel.bn, device,
             {&w, &l, index32 ? static_cast<void*>(&n32) : static_cast<void*>(&n64)});
  }
  sel.check();  // before anything is written
  if (n == 0) return;
  OneLayout outer = one_layout(sel.outer()), inner = one_layout(sel.inner());
  bool index32 = n <= INT32_MAX;
  int winners = dedupe ? (wide ? 64 : 32) : 0;
  char key[64];
  std::snprintf(key, sizeof key, "scatter/%zu/%d/%d/%d/%d/%d", v.itemsize(), repeated, winners,
                outer.ndim, inner.ndim, index32);
  CUfunction fn = jit_function(device, key, [&] {
    return scatter_source(v.itemsize(), repeated, winners, outer.ndim, inner.ndim, index32);
  }, "xrt_scatter");
  void *vp = v.data(), *src = values.data(), *off = sel.offset.data();
  void* lin = dedupe ? sel.linear.data() : nullptr;
  void* win = dedupe ? winner.data() : nullptr;
  uint32_t u32[3] = {uint32_t(sel.bn), uint32_t(sel.qn), uint32_t(n)};
  uint64_t u64[3] = {uint64_t(sel.bn), uint64_t(sel.qn), uint64_t(n)};
  auto arg = [&](int j) { return index32 ? static_cast<void*>(&u32[j]) : static_cast<void*>(&u64[j]); };
  launch_n(fn, n, device, {&vp, &src, &off, &lin, &win, outer.data.data(), inner.data.data(),
                           arg(0), arg(1), arg(2)});
}

KernelSource take_source(size_t size, DType index, int ndim, bool index32) {
  std::string t = bytes_type(size), i = device_type(index), u = index_type(index32);
  std::string nd = std::to_string(ndim);
  return {kHead + "xrt_take_along_axis(char* out, const char* indices, const char* x, " +
          "xrt::StridedLayout<" + nd + ", 3> layout, " + u + " n, xrt::int64_t size, " +
          "xrt::int64_t along, xrt::uint64_t* bad) {\n  xrt::take_along_axis<" + t + ", " + i +
          ", " + nd + ", " + u + ">(out, indices, x, layout, n, size, along, bad);\n}\n", {}};
}

void take_along_axis_kernel(const KernelCall& call) {
  const Tensor &x = call.in(0), &indices = call.in(1);
  Tensor& out = call.out();
  check_index_dtype(indices.dtype());
  int a = static_cast<int>(call.attrs->axes[0]);
  int64_t size = x.shape()[a], along = x.strides()[a] * static_cast<int64_t>(x.itemsize());
  Dims strides = x.strides();
  strides[a] = 0;
  Tensor start = x.as_strided(out.shape(), strides, x.byte_offset());  // x[..., 0, ...]
  StridedPlan plan = plan_strided({&out, &indices, &start});
  if (plan.numel == 0) return;
  int device = out.device().index;
  activate(device);
  Flags flags(1, out.device());
  char key[64];
  std::snprintf(key, sizeof key, "take_along_axis/%zu/%d/%d/%d", x.itemsize(),
                int(indices.dtype()), plan.ndim, plan.index32);
  CUfunction fn = jit_function(device, key, [&] {
    return take_source(x.itemsize(), indices.dtype(), plan.ndim, plan.index32);
  }, "xrt_take_along_axis");
  void *o = out.data(), *ip = indices.data(), *xp = start.data();
  uint32_t n32 = uint32_t(plan.numel);
  uint64_t n64 = uint64_t(plan.numel);
  uint64_t* bad = flags.slot(0);
  launch_n(fn, plan.numel, device,
           {&o, &ip, &xp, const_cast<int64_t*>(plan.layout.data()),
            plan.index32 ? static_cast<void*>(&n32) : static_cast<void*>(&n64), &size, &along,
            &bad});
  const Tensor* arrays[] = {&indices};
  flags.check(arrays, &size);
}

// ---- samples for CI --------------------------------------------------------------------

std::vector<KernelSample> index_samples() {
  std::vector<KernelSample> s;
  for (int d = 0; d < kNumDTypes; ++d) {
    DType dt = DType(d);
    std::string t = device_type(dt);
    if (is_integer(dt)) {
      s.push_back({"xrt_index_offsets " + t, offsets_source(dt, true)});
      s.push_back({"xrt_take_along_axis " + t, take_source(8, dt, 2, true)});
    }
  }
  s.push_back({"xrt_index_offsets /64", offsets_source(DType::UInt64, false)});
  for (size_t size : {1, 2, 4, 8, 16}) {
    std::string b = std::to_string(size) + " bytes";
    s.push_back({"xrt_gather " + b, gather_source(size, 1, 1, true)});
    s.push_back({"xrt_gather 2/3/64 " + b, gather_source(size, 2, 3, false)});
    s.push_back({"xrt_scatter " + b, scatter_source(size, false, 32, 1, 1, true)});
    s.push_back({"xrt_scatter repeated " + b, scatter_source(size, true, 0, 2, 1, true)});
    s.push_back({"xrt_scatter 64 " + b, scatter_source(size, false, 64, 1, 2, false)});
    s.push_back({"xrt_take_along_axis " + b, take_source(size, DType::Int64, 3, false)});
  }
  s.push_back({"xrt_scatter_winners 32", winners_source(false, true)});
  s.push_back({"xrt_scatter_winners 64", winners_source(true, false)});
  return s;
}

KernelInfo kernel(std::string op, KernelFn run, std::string description) {
  return kernel_info(std::move(op), "nvrtc", std::move(run), std::move(description));
}

}  // namespace

void register_index_kernels(KernelRegistry& registry) {
  registry.add(kernel("gather", gather_kernel, "integer-array gather, checked on the device"));
  registry.add(kernel("scatter", scatter_kernel,
                      "integer-array scatter, checked before writing, last duplicate wins"));
  registry.add(kernel("take_along_axis", take_along_axis_kernel,
                      "gather along one axis, checked on the device"));
  register_kernel_samples("index", index_samples);
}

}  // namespace xrt::cuda
