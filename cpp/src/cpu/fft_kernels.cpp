// cpp/src/cpu/fft_kernels.cpp: the fft ops on the CPU: transforms batched along one axis
// of a strided tensor (plans in cpu/fft_plan.h), and the sample frequencies.
//
// - Every line (the values along the axis at one batch index) is widened to double,
//   transformed with the cached plan of its length, scaled and rounded once on store.
// - Lines are spread over the thread pool in fixed chunks of the batch; a line's result
//   never depends on which task computed it, so results do not depend on the thread count.
// - Note: lines that are strided in memory (any axis but a contiguous last one) are loaded
//   and stored in groups of neighbouring lines, so each cache line fetched serves several
//   lines instead of one.
#include <algorithm>
#include <cmath>
#include <complex>
#include <initializer_list>
#include <memory>
#include <vector>

#include "core/host/dtype_dispatch.h"
#include "cpu/fft_plan.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "xpuruntime/fft.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {

using host::Tag;

namespace {

using fft::Complex;

constexpr int kMaxGroup = 8;
constexpr int64_t kGroupBytes = int64_t{1} << 20;  // line buffers of one group, at most
constexpr int64_t kTaskWork = int64_t{1} << 18;    // ~n log n units per parallel task

template <class T> constexpr bool is_complex_v = false;
template <class T> constexpr bool is_complex_v<std::complex<T>> = true;

// Element conversions between storage types and the double working types.
template <class Work, class T> Work load(const char* p) {
  T v = *reinterpret_cast<const T*>(p);
  if constexpr (std::is_same_v<Work, double>) {
    return static_cast<double>(v);
  } else if constexpr (is_complex_v<T>) {
    return Complex{static_cast<double>(v.real()), static_cast<double>(v.imag())};
  } else {
    return Complex{static_cast<double>(v), 0.0};
  }
}

template <class T> void store(char* p, Complex v) {
  using R = typename T::value_type;
  *reinterpret_cast<T*>(p) = T(static_cast<R>(v.re), static_cast<R>(v.im));
}
template <class T> void store(char* p, double v) { *reinterpret_cast<T*>(p) = static_cast<T>(v); }

// Scratch memory for one task, taken from a per-thread cache. Fresh buffers of a long
// transform (tens of MB) page-fault on first touch, thousands of faults per call (measured:
// ~5000 for a 2^20-point transform, a sizeable part of its time); reusing the thread's last
// block avoids that. Blocks up to kKeepBytes stay cached per thread, larger ones are freed.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(size_t bytes) : bytes_(bytes) {
    if (cached_ && cached_bytes_ >= bytes) {
      block_ = std::move(cached_), bytes_ = cached_bytes_;
    } else {
      block_.reset(new char[bytes]);
    }
  }
  ~ScratchBuffer() {
    if (bytes_ <= kKeepBytes && (!cached_ || cached_bytes_ < bytes_))
      cached_ = std::move(block_), cached_bytes_ = bytes_;
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  /// The next `count` values of type T (offsets rounded to 64 bytes, a cache line).
  template <class T> T* take(int64_t count) {
    size_t start = (used_ + 63) / 64 * 64;
    used_ = start + static_cast<size_t>(count) * sizeof(T);
    return reinterpret_cast<T*>(block_.get() + start);
  }
  /// Bytes to ask for to take() these many values of each type.
  static size_t bytes_for(std::initializer_list<size_t> sizes) {
    size_t total = 0;
    for (size_t s : sizes) total += (s + 63) / 64 * 64;
    return total + 64;
  }

 private:
  static constexpr size_t kKeepBytes = size_t{64} << 20;
  static thread_local std::unique_ptr<char[]> cached_;
  static thread_local size_t cached_bytes_;
  std::unique_ptr<char[]> block_;
  size_t bytes_, used_ = 0;
};
thread_local std::unique_ptr<char[]> ScratchBuffer::cached_;
thread_local size_t ScratchBuffer::cached_bytes_ = 0;

Tensor drop_axis(const Tensor& t, int axis) {
  Dims shape, strides;
  for (int d = 0; d < t.ndim(); ++d)
    if (d != axis) shape.push_back(t.shape()[d]), strides.push_back(t.strides()[d]);
  return t.as_strided(shape, strides, t.byte_offset());
}

/// Runs compute over every line of `in` along `axis`, writing `out`'s lines.
/// Each line is loaded into `buf_len` values of type Buf (zero-padded past the input's
/// length); compute(buf, space, work) returns a pointer to the out_len results (type Res),
/// which it may place in its buffer, in `space` (res_len values) or in `work`.
template <class In, class Out, class Buf, class Res, class Compute>
void transform_lines(const Tensor& in, const Tensor& out, int axis, int64_t buf_len,
                     int64_t res_len, int64_t work_len, double scale, const Compute& compute) {
  const int64_t in_len = in.shape()[axis], out_len = out.shape()[axis];
  const int64_t in_step = in.strides()[axis] * static_cast<int64_t>(sizeof(In));
  const int64_t out_step = out.strides()[axis] * static_cast<int64_t>(sizeof(Out));
  Tensor in_batch = drop_axis(in, axis), out_batch = drop_axis(out, axis);
  LoopPlan<2> batch({&out_batch, &in_batch});
  if (batch.numel == 0) return;

  const bool contiguous = in_step == int64_t{sizeof(In)} && out_step == int64_t{sizeof(Out)};
  const int group = contiguous ? 1
                               : static_cast<int>(std::clamp<int64_t>(
                                     kGroupBytes / (buf_len * int64_t{sizeof(Buf)}), 1, kMaxGroup));
  const double line_cost = double(buf_len) * (1.0 + std::log2(double(buf_len)));
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(double(kTaskWork) / line_cost));

  parallel_for(batch.numel, grain, [&](int64_t begin, int64_t end) {
    // Uninitialised: every value is written before it is read.
    const size_t buf_bytes = static_cast<size_t>(group * buf_len) * sizeof(Buf);
    const size_t space_bytes = static_cast<size_t>(group * res_len) * sizeof(Res);
    const size_t work_bytes = static_cast<size_t>(group * work_len) * sizeof(Complex);
    ScratchBuffer scratch(ScratchBuffer::bytes_for({buf_bytes, space_bytes, work_bytes}));
    Buf* bufs = scratch.take<Buf>(group * buf_len);
    Res* spaces = scratch.take<Res>(group * res_len);
    Complex* works = scratch.take<Complex>(group * work_len);
    const Res* results[kMaxGroup];
    auto run_group = [&](const char* src, int64_t src_next, char* dst, int64_t dst_next, int g) {
      if (contiguous) {  // one line; plain pointer loops the compiler can vectorise
        for (int64_t t = 0; t < in_len; ++t)
          bufs[t] = load<Buf, In>(src + t * int64_t{sizeof(In)});
      } else {
        for (int64_t t = 0; t < in_len; ++t)
          for (int b = 0; b < g; ++b)
            bufs[b * buf_len + t] = load<Buf, In>(src + b * src_next + t * in_step);
      }
      for (int b = 0; b < g; ++b) {
        Buf* buf = bufs + b * buf_len;
        std::fill(buf + in_len, buf + buf_len, Buf{});
        results[b] = compute(buf, spaces + b * res_len, works + b * work_len);
      }
      if (contiguous) {
        for (int64_t t = 0; t < out_len; ++t)
          store<Out>(dst + t * int64_t{sizeof(Out)}, results[0][t] * scale);
      } else {
        for (int64_t t = 0; t < out_len; ++t)
          for (int b = 0; b < g; ++b)
            store<Out>(dst + b * dst_next + t * out_step, results[b][t] * scale);
      }
    };
    batch.walk(begin, end, [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s,
                               int64_t count) {
      for (int64_t first = 0; first < count; first += group) {
        int g = static_cast<int>(std::min<int64_t>(group, count - first));
        run_group(p[1] + first * s[1], s[1], p[0] + first * s[0], s[0], g);
      }
    });
  });
}

// Calls f(Tag<T>{}) for the four fft dtypes.
template <class F> void visit_fft_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f(Tag<float>{});
    case DType::Float64: return f(Tag<double>{});
    case DType::Complex64: return f(Tag<std::complex<float>>{});
    case DType::Complex128: return f(Tag<std::complex<double>>{});
    default:
      throw TypeError("the fft kernels do not support " + std::string(dtype_info(dtype).name));
  }
}

// Calls f(Tag<In>{}, Tag<Out>{}) for the dtype pairs an fft kernel handles.
template <bool real_in, bool complex_out, class F>
void visit_in_out(const KernelCall& call, F&& f) {
  visit_fft_dtype(call.in(0).dtype(), [&](auto in) {
    visit_fft_dtype(call.out().dtype(), [&](auto out) {
      using In = typename decltype(in)::type;
      using Out = typename decltype(out)::type;
      if constexpr ((!real_in || !is_complex_v<In>) && is_complex_v<Out> == complex_out)
        f(in, out);
      else
        throw TypeError("unsupported dtypes for this fft kernel");
    });
  });
}

void fft_c2c_kernel(const KernelCall& call) {
  const FftParams p = FftParams::from_attrs(*call.attrs);
  auto plan = fft::complex_plan(p.n);
  visit_in_out<false, true>(call, [&](auto in, auto out) {
    using In = typename decltype(in)::type;
    using Out = typename decltype(out)::type;
    transform_lines<In, Out, Complex, Complex>(
        call.in(0), call.out(), p.axis, p.n, 0, plan->work_size(), p.scale,
        [&](Complex* data, Complex*, Complex* work) -> const Complex* {
          return plan->run(data, work, p.inverse);
        });
  });
}

// The inverse r2c (ihfft) is the conjugate of the forward one, as the input is real.
void fft_r2c_kernel(const KernelCall& call) {
  const FftParams p = FftParams::from_attrs(*call.attrs);
  auto plan = fft::real_plan(p.n);
  const int64_t half = p.n / 2 + 1;
  visit_in_out<true, true>(call, [&](auto in, auto out) {
    using In = typename decltype(in)::type;
    using Out = typename decltype(out)::type;
    transform_lines<In, Out, double, Complex>(
        call.in(0), call.out(), p.axis, p.n, half, plan->work_size(), p.scale,
        [&](double* data, Complex* space, Complex* work) -> const Complex* {
          plan->forward(data, space, work);
          if (p.inverse)
            for (int64_t k = 0; k < half; ++k) space[k] = fft::conj(space[k]);
          return space;
        });
  });
}

// The forward c2r (hfft) equals the inverse one of the conjugated input (its output is real).
void fft_c2r_kernel(const KernelCall& call) {
  const FftParams p = FftParams::from_attrs(*call.attrs);
  auto plan = fft::real_plan(p.n);
  const int64_t half = p.n / 2 + 1;
  visit_in_out<false, false>(call, [&](auto in, auto out) {
    using In = typename decltype(in)::type;
    using Out = typename decltype(out)::type;
    transform_lines<In, Out, Complex, double>(
        call.in(0), call.out(), p.axis, half, 0, plan->work_size(), p.scale,
        [&](Complex* data, double*, Complex* work) -> const double* {
          if (!p.inverse)
            for (int64_t k = 0; k < half; ++k) data[k] = fft::conj(data[k]);
          return plan->inverse(data, work);
        });
  });
}

// out[i] = k_i * value with k = 0, 1, ..., then (fftfreq only) -(n/2), ..., -1: the integer
// times the double 1/(n*d), as NumPy computes it, rounded once to the output dtype.
template <bool nonnegative_only> void frequencies_kernel(const KernelCall& call) {
  Tensor& out = call.out();
  const double value = call.attrs->value.c.real();
  const int64_t n = call.attrs->step.i, count = out.shape()[0];
  const int64_t first_negative = nonnegative_only ? count : (n + 1) / 2;
  visit_fft_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      T* o = reinterpret_cast<T*>(out.data());
      for (int64_t i = 0; i < count; ++i) {
        int64_t k = i < first_negative ? i : i - n;
        o[i * out.strides()[0]] = static_cast<T>(static_cast<double>(k) * value);
      }
    }
  });
}

bool is_fft_dtype(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Complex64 ||
         d == DType::Complex128;
}


}  // namespace

void register_fft_kernels(KernelRegistry& r) {
  auto in_out = [](bool real_in, bool complex_out) {
    return [=](const DTypeSignature& s) {
      DType in = s.dtypes[0], out = s.dtypes[s.count - 1];
      return s.count == 2 && is_fft_dtype(in) && (!real_in || !is_complex(in)) &&
             is_fft_dtype(out) && is_complex(out) == complex_out;
    };
  };
  r.add(kernel_info("fft_c2c", "native", fft_c2c_kernel,
                    "mixed-radix Stockham FFT (radix 4/2/3/5/odd) or Bluestein, in double",
                    in_out(false, true)));
  r.add(kernel_info("fft_r2c", "native", fft_r2c_kernel,
                    "real FFT via a half-length complex FFT, in double", in_out(true, true)));
  r.add(kernel_info("fft_c2r", "native", fft_c2r_kernel,
                    "Hermitian-input FFT via a half-length complex FFT, in double",
                    in_out(false, false)));
  auto real_out = [](const DTypeSignature& s) {
    DType out = s.dtypes[s.count - 1];
    return out == DType::Float32 || out == DType::Float64;
  };
  r.add(kernel_info("fftfreq", "native", frequencies_kernel<false>, "k / (n*d)", real_out));
  r.add(kernel_info("rfftfreq", "native", frequencies_kernel<true>, "k / (n*d), k <= n/2",
                    real_out));
}

}  // namespace xrt::cpu
