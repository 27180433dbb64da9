// cpp/src/cuda/fft_kernels.cpp: fft_c2c, fft_r2c and fft_c2r on CUDA through cuFFT
// (cuda/cufft.h), and fftfreq/rfftfreq. Device code: cpp/kernels/xrt/fft.cuh.
//
// Note [CUDA fft layouts]: each call transforms the lines of one axis (core/fft_ops.cpp
// did the padding/trimming arithmetic, the dtypes and the output). The batch of lines
// must look to cuFFT like one run of `count` lines, each `stride` apart inside and `dist`
// apart from the next:
//  - an operand is read or written in place when its batch dimensions (every dimension but
//    the axis, size-1 ones dropped) collapse into one with positive strides, its axis
//    stride is positive and its address is aligned (real data of R2C/C2R to the complex
//    size, as cuFFT needs); the input also needs its full length (no zero-padding) and
//    cuFFT's input type, and is never C2R's (cuFFT overwrites C2R's input);
//  - otherwise the input is packed by one kernel into contiguous lines (zero-padded,
//    converted from real, conjugated for hfft, scaled), and/or cuFFT writes contiguous
//    lines that one kernel scatters into the output (scaled, conjugated for ihfft);
//  - the norm's scale rides on the pack when there is one, else on the scatter, else one
//    in-place pass over the output; a scale of 1 costs nothing;
//  - a length-1 transform is the identity and an input trimmed to nothing transforms to
//    zeros: both are the conversion kernel alone, with no cuFFT plan.
// Everything is enqueued on the current stream; temporaries are freed stream-ordered.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/codegen.h"
#include "cuda/cufft.h"
#include "cuda/jit.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/fft.h"
#include "xpuruntime/ops.h"

namespace xrt::cuda {
namespace {

constexpr unsigned kBlock = 256;
const std::string kHead =
    "#include \"xrt/fft.cuh\"\nextern \"C\" __global__ void __launch_bounds__(256) ";

bool is_double(DType d) { return d == DType::Float64 || d == DType::Complex128; }
const char* real_type(DType d) { return is_double(d) ? "double" : "float"; }

// ---- the conversion kernel -----------------------------------------------------------------

KernelSource convert_source(DType to, DType from, int ndim, bool index32) {
  std::string u = index32 ? "xrt::uint32_t" : "xrt::uint64_t";
  std::string s = index32 ? "int" : "xrt::int64_t";
  std::string nd = std::to_string(ndim);
  return {kHead + "xrt_fft_convert(char* dst, const char* src, xrt::StridedLayout<" + nd +
              ", 2> layout, " + u + " n, " + u + " pad_len, " + u + " nyquist, " +
              real_type(to) + " scale, int flags) {\n  xrt::fft_convert<" + device_type(to) +
              ", " + device_type(from) + ", " + nd + ", " + u + ", " + s +
              ">(dst, src, layout, n, pad_len, nyquist, scale, flags);\n}\n",
          {}};
}

/// dst = conj?(src) * scale over `shape` (the line last), with byte strides per operand;
/// src holds only pad_len values of each line (the rest reads as zero). real_ends: C2R's
/// input, whose values 0 and (n even) n/2 count as real (fft_convert in fft.cuh).
struct Conversion {
  char* dst;
  const char* src;
  DType dst_dtype, src_dtype;
  Dims shape, dst_strides, src_strides;
  int64_t pad_len;
  double scale = 1.0;
  bool conjugate = false;
  int64_t real_ends_n = 0;  ///< C2R's n when real_ends applies, else 0
};

void convert(int device, CUstream stream, const Conversion& c) {
  // Dimensions innermost first as (size, dst stride, src stride): size-1 ones dropped,
  // neighbours merged where both operands allow, a padded line kept apart.
  const int last = static_cast<int>(c.shape.size()) - 1;
  const bool padded = c.pad_len < c.shape[last];
  const bool whole_line = padded || c.real_ends_n > 0;  // the line stays one dimension
  std::vector<std::array<int64_t, 3>> dims;
  int64_t numel = 1;
  for (int d = last; d >= 0; --d) {
    const int64_t size = c.shape[d], ds = c.dst_strides[d], ss = c.src_strides[d];
    numel *= size;
    if (size == 1 && d != last) continue;
    if (!dims.empty() && !(whole_line && dims.size() == 1)) {
      auto& inner = dims.back();
      if (ds == inner[0] * inner[1] && ss == inner[0] * inner[2]) {
        inner[0] *= size;
        continue;
      }
    }
    dims.push_back({size, ds, ss});
  }
  if (numel == 0) return;
  const int ndim = static_cast<int>(dims.size());
  const int64_t pad_len = padded ? c.pad_len : dims.front()[0];

  constexpr int64_t limit = INT32_MAX;
  int64_t dst_extent = 0, src_extent = 0;
  for (const auto& d : dims) {
    dst_extent += (d[0] - 1) * std::abs(d[1]);
    src_extent += (d[0] - 1) * std::abs(d[2]);
  }
  const bool index32 = numel <= limit && dst_extent <= limit && src_extent <= limit;

  char key[64];
  std::snprintf(key, sizeof key, "fft/convert/%d/%d/%d/%d", static_cast<int>(c.dst_dtype),
                static_cast<int>(c.src_dtype), ndim, index32 ? 32 : 64);
  CUfunction fn = jit_function(device, key, [&] {
    return convert_source(c.dst_dtype, c.src_dtype, ndim, index32);
  }, "xrt_fft_convert");

  Dims layout;  // StridedLayout<ndim, 2>: sizes, dst strides, src strides; outermost first
  for (int k = 0; k < 3; ++k)
    for (int d = ndim - 1; d >= 0; --d) layout.push_back(dims[d][k]);
  void* dst = c.dst;
  void* src = const_cast<char*>(c.src);
  // Position 0 is taken care of by the flag; an odd n has no middle value (n itself is
  // past the line's n/2+1 positions).
  const int64_t nyquist = c.real_ends_n % 2 == 0 ? c.real_ends_n / 2 : c.real_ends_n;
  uint32_t u32[3] = {uint32_t(numel), uint32_t(pad_len), uint32_t(nyquist)};
  uint64_t u64[3] = {uint64_t(numel), uint64_t(pad_len), uint64_t(nyquist)};
  auto index_arg = [&](int k) {
    return index32 ? static_cast<void*>(&u32[k]) : static_cast<void*>(&u64[k]);
  };
  float scale32 = static_cast<float>(c.scale);
  double scale64 = c.scale;
  int flags = (c.conjugate ? 1 : 0) | (c.real_ends_n > 0 ? 2 : 0);  // kFft* in fft.cuh
  void* args[] = {&dst,          &src,         layout.data(), index_arg(0), index_arg(1),
                  index_arg(2),
                  is_double(c.dst_dtype) ? static_cast<void*>(&scale64)
                                         : static_cast<void*>(&scale32),
                  &flags};
  launch(fn, {grid_blocks(numel, kBlock)}, {kBlock}, 0, stream, args);
}

// ---- the transforms ------------------------------------------------------------------------

enum class Kind { C2C, R2C, C2R };

/// A batch of lines as cuFFT's advanced layout addresses it, in elements.
struct Lines {
  int64_t stride = 1, dist = 1;
};

/// The lines of t along axis as one batch over `batch` (see Note [CUDA fft layouts]).
bool as_lines(const Tensor& t, int axis, const Dims& batch, Lines& lines) {
  const Dims& st = t.strides();
  if (st[axis] <= 0) return false;
  for (size_t i = 0; i < batch.size(); ++i) {
    int b = static_cast<int>(batch[i]);
    if (st[b] <= 0) return false;
    if (i + 1 < batch.size()) {
      int next = static_cast<int>(batch[i + 1]);
      if (st[b] != st[next] * t.shape()[next]) return false;
    }
  }
  lines.stride = st[axis];
  // cuFFT takes no zero distance, even for one line.
  lines.dist = batch.empty() ? st[axis] * t.shape()[axis] : st[static_cast<int>(batch.back())];
  return true;
}

bool aligned(const Tensor& t, size_t alignment) {
  return reinterpret_cast<uintptr_t>(t.data()) % alignment == 0;
}

/// Byte strides of t over [batch..., axis].
Dims line_strides(const Tensor& t, int axis, const Dims& batch) {
  Dims s;
  const int64_t item = static_cast<int64_t>(t.itemsize());
  for (int64_t b : batch) s.push_back(t.strides()[static_cast<int>(b)] * item);
  s.push_back(t.strides()[axis] * item);
  return s;
}

/// Byte strides of contiguous lines of `length` values of dtype over [batch..., axis].
Dims packed_strides(const Dims& batch_shape, int64_t length, DType dtype) {
  Dims s(batch_shape.size() + 1);
  int64_t step = static_cast<int64_t>(itemsize(dtype));
  s[s.size() - 1] = step;
  step *= length;
  for (int i = static_cast<int>(batch_shape.size()) - 1; i >= 0; --i) {
    s[i] = step;
    step *= batch_shape[i];
  }
  return s;
}

cufftType plan_type(Kind kind, bool dbl) {
  switch (kind) {
    case Kind::C2C: return dbl ? CUFFT_Z2Z : CUFFT_C2C;
    case Kind::R2C: return dbl ? CUFFT_D2Z : CUFFT_R2C;
    case Kind::C2R: return dbl ? CUFFT_Z2D : CUFFT_C2R;
  }
  return CUFFT_C2C;
}

void transform(const KernelCall& call, Kind kind) {
  const FftParams p = FftParams::from_attrs(*call.attrs);
  const Tensor& in = call.in(0);
  Tensor& out = call.out();
  if (out.numel() == 0) return;
  const int axis = p.axis;
  const int64_t n = p.n;
  const int device = out.device().index;
  activate(device);
  const CUstream stream = current_stream(device);

  const bool dbl = is_double(out.dtype());
  const DType complex_t = dbl ? DType::Complex128 : DType::Complex64;
  const DType real_t = dbl ? DType::Float64 : DType::Float32;
  const DType fft_in = kind == Kind::R2C ? real_t : complex_t;
  const DType fft_out = kind == Kind::C2R ? real_t : complex_t;
  const int64_t needed = kind == Kind::C2R ? n / 2 + 1 : n;  // input values per line
  const int64_t in_len = in.shape()[axis], out_len = out.shape()[axis];
  const bool conj_in = kind == Kind::C2R && !p.inverse;  // hfft = C2R of the conjugate
  const bool conj_out = kind == Kind::R2C && p.inverse;  // ihfft = conjugate of R2C

  Dims batch, batch_shape;
  int64_t count = 1;
  for (int d = 0; d < out.ndim(); ++d)
    if (d != axis && out.shape()[d] > 1) {
      batch.push_back(d);
      batch_shape.push_back(out.shape()[d]);
      count *= out.shape()[d];
    }
  // Conversions run over [batch..., line].
  auto with_line = [&](int64_t length) {
    Dims shape = batch_shape;
    shape.push_back(length);
    return shape;
  };

  if (n == 1 || in_len == 0) {
    convert(device, stream,
            {out.data(), in.data(), out.dtype(), in.dtype(), with_line(out_len),
             line_strides(out, axis, batch), line_strides(in, axis, batch), in_len, p.scale,
             conj_in || conj_out});
    return;
  }

  const size_t real_align = 2 * itemsize(real_t), complex_align = itemsize(complex_t);
  const bool shares = in.storage() == out.storage();
  const bool same_view = in.data() == out.data() && in.shape() == out.shape() &&
                         in.strides() == out.strides() && in.dtype() == out.dtype();
  Lines in_lines, out_lines;
  const bool in_direct = kind != Kind::C2R && in.dtype() == fft_in && in_len == needed &&
                         (!shares || same_view) &&
                         aligned(in, kind == Kind::R2C ? real_align : complex_align) &&
                         as_lines(in, axis, batch, in_lines);
  const bool out_direct = out.dtype() == fft_out &&
                          aligned(out, kind == Kind::C2R ? real_align : complex_align) &&
                          as_lines(out, axis, batch, out_lines);

  // Temporaries live until the transform is enqueued, then go back stream-ordered.
  Tensor packed, result;
  const void* src = in.data();
  double post_scale = p.scale;
  if (!in_direct) {
    packed = empty(Dims{count, needed}, fft_in, out.device());
    convert(device, stream,
            {packed.data(), in.data(), fft_in, in.dtype(), with_line(needed),
             packed_strides(batch_shape, needed, fft_in), line_strides(in, axis, batch), in_len,
             p.scale, conj_in, kind == Kind::C2R ? n : 0});
    src = packed.data();
    in_lines = {1, needed};
    post_scale = 1.0;  // applied by the pack (every transform here is linear)
  }
  void* dst = out.data();
  if (!out_direct) {
    // C2C from packed lines runs in place (same layout, same type).
    result = kind == Kind::C2C && !in_direct ? packed
                                             : empty(Dims{count, out_len}, fft_out, out.device());
    dst = result.data();
    out_lines = {1, out_len};
  }

  FftPlanKey key;
  key.type = plan_type(kind, dbl);
  key.n[0] = n;
  key.inembed[0] = needed, key.onembed[0] = out_len;  // unused by rank 1, given as cuFFT would
  key.istride = in_lines.stride, key.idist = in_lines.dist;
  key.ostride = out_lines.stride, key.odist = out_lines.dist;
  key.batch = count;
  execute_fft(device, key, src, dst, p.inverse ? CUFFT_INVERSE : CUFFT_FORWARD, stream);

  if (!out_direct) {
    convert(device, stream,
            {out.data(), result.data(), out.dtype(), fft_out, with_line(out_len),
             line_strides(out, axis, batch), packed_strides(batch_shape, out_len, fft_out),
             out_len, post_scale, conj_out});
  } else if (post_scale != 1.0 || conj_out) {
    Dims strides = line_strides(out, axis, batch);
    convert(device, stream,
            {out.data(), out.data(), out.dtype(), out.dtype(), with_line(out_len), strides,
             strides, out_len, post_scale, conj_out});
  }
}

void fft_c2c_kernel(const KernelCall& call) { transform(call, Kind::C2C); }
void fft_r2c_kernel(const KernelCall& call) { transform(call, Kind::R2C); }
void fft_c2r_kernel(const KernelCall& call) { transform(call, Kind::C2R); }

// ---- sample frequencies --------------------------------------------------------------------

KernelSource frequencies_source(DType dtype, bool index32) {
  std::string u = index32 ? "xrt::uint32_t" : "xrt::uint64_t";
  return {kHead + "xrt_fft_frequencies(char* out, xrt::index_t stride, " + u +
              " count, xrt::index_t n, xrt::index_t first_negative, double value) {\n"
              "  xrt::fft_frequencies<" + device_type(dtype) + ", " + u +
              ">(out, stride, count, n, first_negative, value);\n}\n",
          {}};
}

// As cpu/fft_kernels.cpp: k * (1/(n*d)) in double, rounded once to the output dtype.
template <bool nonnegative_only> void frequencies_kernel(const KernelCall& call) {
  Tensor& out = call.out();
  const int64_t count = out.shape()[0];
  if (count == 0) return;
  double value = call.attrs->value.c.real();
  int64_t n = call.attrs->step.i;
  int64_t first_negative = nonnegative_only ? count : (n + 1) / 2;
  int64_t stride = out.strides()[0] * static_cast<int64_t>(out.itemsize());
  const bool index32 = count <= INT32_MAX && std::abs(stride) * count <= INT32_MAX;
  const int device = out.device().index;
  activate(device);
  char key[48];
  std::snprintf(key, sizeof key, "fft/frequencies/%d/%d", static_cast<int>(out.dtype()),
                index32 ? 32 : 64);
  CUfunction fn = jit_function(
      device, key, [&] { return frequencies_source(out.dtype(), index32); },
      "xrt_fft_frequencies");
  void* ptr = out.data();
  uint32_t c32 = static_cast<uint32_t>(count);
  uint64_t c64 = static_cast<uint64_t>(count);
  void* args[] = {&ptr, &stride, index32 ? static_cast<void*>(&c32) : static_cast<void*>(&c64),
                  &n, &first_negative, &value};
  launch(fn, {grid_blocks(count, kBlock)}, {kBlock}, 0, current_stream(device), args);
}

// ---- registration ----------------------------------------------------------------------------

/// For CI: every (destination, source) pair the transforms convert between, contiguous and
/// strided, and the frequencies of both dtypes.
std::vector<KernelSample> fft_samples() {
  std::vector<KernelSample> samples;
  const DType pairs[][2] = {
      {DType::Complex64, DType::Complex64}, {DType::Complex64, DType::Float32},
      {DType::Float32, DType::Float32},     {DType::Float32, DType::Complex64},
      {DType::Complex128, DType::Complex128}, {DType::Complex128, DType::Float64},
      {DType::Float64, DType::Float64},     {DType::Float64, DType::Complex128},
  };
  for (const auto& pair : pairs) {
    std::string name = std::string("xrt_fft_convert ") + device_type(pair[0]) + " <- " +
                       device_type(pair[1]);
    samples.push_back({name + " 2d/32", convert_source(pair[0], pair[1], 2, true)});
    samples.push_back({name + " 3d/64", convert_source(pair[0], pair[1], 3, false)});
  }
  samples.push_back({"xrt_fft_convert 1d/32",
                     convert_source(DType::Complex64, DType::Complex64, 1, true)});
  samples.push_back({"xrt_fft_convert 6d/64",
                     convert_source(DType::Float64, DType::Float64, 6, false)});
  for (DType d : {DType::Float32, DType::Float64})
    for (bool index32 : {true, false})
      samples.push_back({std::string("xrt_fft_frequencies ") + device_type(d),
                         frequencies_source(d, index32)});
  return samples;
}

bool is_fft_dtype(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Complex64 ||
         d == DType::Complex128;
}

}  // namespace

void register_fft_kernels(KernelRegistry& registry) {
  // An input and an output of one precision: real or complex as the transform reads/writes.
  auto in_out = [](bool real_in, bool complex_out) {
    return [=](const DTypeSignature& s) {
      DType in = s.dtypes[0], out = s.dtypes[s.count - 1];
      return s.count == 2 && is_fft_dtype(in) && (!real_in || !is_complex(in)) &&
             is_fft_dtype(out) && is_complex(out) == complex_out && is_double(in) == is_double(out);
    };
  };
  registry.add(kernel_info("fft_c2c", "cufft", fft_c2c_kernel,
                           "cuFFT C2C/Z2Z (real input widened on the device)",
                           in_out(false, true)));
  registry.add(kernel_info("fft_r2c", "cufft", fft_r2c_kernel, "cuFFT R2C/D2Z",
                           in_out(true, true)));
  registry.add(kernel_info("fft_c2r", "cufft", fft_c2r_kernel,
                           "cuFFT C2R/Z2D on a copy of the input (cuFFT overwrites it)",
                           in_out(false, false)));
  auto real_out = [](const DTypeSignature& s) {
    DType out = s.dtypes[s.count - 1];
    return out == DType::Float32 || out == DType::Float64;
  };
  registry.add(kernel_info("fftfreq", "nvrtc", frequencies_kernel<false>, "k / (n*d)", real_out));
  registry.add(kernel_info("rfftfreq", "nvrtc", frequencies_kernel<true>, "k / (n*d), k <= n/2",
                           real_out));
  register_kernel_samples("fft", fft_samples);
}

}  // namespace xrt::cuda
