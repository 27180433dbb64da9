// cpp/src/cuda/index_common.h: what the CUDA creation, indexing and mask kernels share (the
// device code of the first two is cpp/kernels/xrt/index.cuh; the mask kernels use its
// gather and scatter for masks over some of the axes).
#pragma once
#include <string>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/jit.h"
#include "cuda/runtime.h"

namespace xrt::cuda::index_detail {

inline constexpr unsigned kBlock = 256;
inline const std::string kHead =
    "#include \"xrt/index.cuh\"\nextern \"C\" __global__ void __launch_bounds__(256) ";

/// The device type that moves `size` bytes as one element.
inline const char* bytes_type(size_t size) {
  switch (size) {
    case 1: return "xrt::uint8_t";
    case 2: return "xrt::uint16_t";
    case 4: return "xrt::uint32_t";
    case 8: return "xrt::uint64_t";
    default: return "xrt::index_bytes16";
  }
}
inline const char* index_type(bool index32) { return index32 ? "xrt::uint32_t" : "xrt::uint64_t"; }

/// One thread per element of n, on the device's current stream.
inline void launch_n(CUfunction fn, int64_t n, int device, std::vector<void*> args) {
  launch(fn, {grid_blocks(n, kBlock)}, {kBlock}, 0, current_stream(device), args.data());
}

/// Whether t is one element seen everywhere (a value repeated by stride 0).
inline bool all_strides_zero(const Tensor& t) {
  for (int64_t s : t.strides())
    if (s != 0) return false;
  return true;
}

/// A layout of one operand for StridedLayout<ndim, 1> (a 0-d view: one dimension of 1).
struct OneLayout {
  int ndim = 1;
  Dims data{1, 0};
};
inline OneLayout one_layout(const Tensor& t) {
  OneLayout l;
  if (t.ndim() == 0 || t.numel() == 0) return l;
  StridedPlan plan = plan_strided({&t});
  l.ndim = plan.ndim;
  l.data = plan.layout;
  return l;
}

/// index.cuh's gather: out[p, b, q] = v[p, offset[b], q].
inline KernelSource gather_source(size_t size, int no, int ni, bool index32) {
  std::string t = bytes_type(size), u = index_type(index32);
  std::string o = std::to_string(no), i = std::to_string(ni);
  return {kHead + "xrt_gather(" + t + "* out, const char* v, const xrt::int64_t* offset, " +
          "xrt::StridedLayout<" + o + ", 1> outer, xrt::StridedLayout<" + i + ", 1> inner, " +
          u + " bn, " + u + " qn, " + u + " n) {\n  xrt::gather<" + t + ", " + o + ", " + i +
          ", " + u + ">(out, v, offset, outer, inner, bn, qn, n);\n}\n", {}};
}

/// index.cuh's scatter: v[p, offset[b], q] = values[p, b, q]; winners: 0 (none: the
/// pointer is null), 32 or 64 bits.
inline KernelSource scatter_source(size_t size, bool repeated, int winners, int no, int ni,
                                   bool index32) {
  std::string t = bytes_type(size), u = index_type(index32);
  std::string w = winners == 64 ? "xrt::uint64_t" : "xrt::uint32_t";
  std::string o = std::to_string(no), i = std::to_string(ni);
  return {kHead + "xrt_scatter(char* v, const " + t + "* values, const xrt::int64_t* offset, " +
          "const xrt::int64_t* linear, const " + w + "* winner, xrt::StridedLayout<" + o +
          ", 1> outer, xrt::StridedLayout<" + i + ", 1> inner, " + u + " bn, " + u + " qn, " +
          u + " n) {\n  xrt::scatter<" + t + ", " + (repeated ? "true" : "false") + ", " + w +
          ", " + o + ", " + i + ", " + u +
          ">(v, values, offset, linear, winner, outer, inner, bn, qn, n);\n}\n", {}};
}

}  // namespace xrt::cuda::index_detail
