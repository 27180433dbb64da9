// cpp/src/cpu/creation_kernels.cpp: linspace and the triangles (tril, triu).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/host/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {

using host::visit_dtype;

namespace {

// out[i] = start + i * step (attrs.value, attrs.step); out is contiguous. Integer dtypes
// take the floor, as NumPy's linspace does.
void linspace_kernel(const KernelCall& call) {
  const Tensor& out = call.out();
  const Scalar& start = call.attrs->value;
  const Scalar& step = call.attrs->step;
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = reinterpret_cast<T*>(out.data());
    parallel_for(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      if constexpr (detail::is_complex_v<T>) {
        auto a = start.to<std::complex<double>>(), s = step.to<std::complex<double>>();
        for (int64_t i = begin; i < end; ++i) o[i] = cast_value<T>(a + s * static_cast<double>(i));
      } else {
        double a = start.to<double>(), s = step.to<double>();
        for (int64_t i = begin; i < end; ++i) {
          double v = a + static_cast<double>(i) * s;
          if constexpr (std::is_integral_v<T>) v = std::floor(v);
          o[i] = cast_value<T>(v);
        }
      }
    });
  });
}

// Copies n items of Size bytes from a strided source to a contiguous destination.
template <size_t Size> void copy_items(char* dst, const char* src, int64_t stride, int64_t n) {
  for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * Size, src + j * stride, Size);
}

using CopyItems = void (*)(char*, const char*, int64_t, int64_t);

CopyItems copy_items_for(size_t size) {
  switch (size) {
    case 1: return copy_items<1>;
    case 2: return copy_items<2>;
    case 4: return copy_items<4>;
    case 8: return copy_items<8>;
    default: return copy_items<16>;
  }
}

// Note: bytes, not values: the zero of every dtype is all-zero bits, so one kernel serves
// all fifteen dtypes. Each row of each matrix is a kept run [lo, hi) copied from the input
// and zeros around it.
template <bool Lower> void triangle_kernel(const KernelCall& call) {
  const Tensor& in = call.in(0);
  const Tensor& out = call.out();  // contiguous, in's shape
  int nd = in.ndim();
  int64_t rows = in.shape()[nd - 2], cols = in.shape()[nd - 1];
  int64_t k = std::clamp<int64_t>(call.attrs->value.to<int64_t>(), -rows - 1, cols + 1);
  int64_t size = static_cast<int64_t>(in.itemsize());
  int64_t col_stride = in.strides()[nd - 1] * size;
  CopyItems copy = copy_items_for(in.itemsize());
  int64_t total_rows = in.numel() / cols;
  parallel_for(total_rows, std::max<int64_t>(1, kParallelGrain / cols), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      // The input row: r unravelled over the leading axes.
      const char* src = in.data();
      for (int64_t rest = r, d = nd - 2; d >= 0; --d) {
        int64_t n = in.shape()[static_cast<int>(d)];
        src += (rest % n) * in.strides()[static_cast<int>(d)] * size;
        rest /= n;
      }
      char* dst = out.data() + r * cols * size;
      int64_t i = r % rows;
      int64_t lo = Lower ? 0 : std::clamp<int64_t>(i + k, 0, cols);
      int64_t hi = Lower ? std::clamp<int64_t>(i + k + 1, 0, cols) : cols;
      if (hi < lo) hi = lo;
      std::memset(dst, 0, static_cast<size_t>(lo * size));
      if (col_stride == size)
        std::memcpy(dst + lo * size, src + lo * size, static_cast<size_t>((hi - lo) * size));
      else
        copy(dst + lo * size, src + lo * col_stride, col_stride, hi - lo);
      std::memset(dst + hi * size, 0, static_cast<size_t>((cols - hi) * size));
    }
  });
}

}  // namespace

void register_creation_kernels(KernelRegistry& r) {
  r.add(kernel_info("linspace", "native", linspace_kernel,
                    "start + i * step, in double precision"));
  r.add(kernel_info("tril", "native", triangle_kernel<true>, "row copies and zero fills (bytes)"));
  r.add(kernel_info("triu", "native", triangle_kernel<false>, "row copies and zero fills (bytes)"));
}

}  // namespace xrt::cpu
