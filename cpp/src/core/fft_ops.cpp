// cpp/src/core/fft_ops.cpp: the fft extension's op definitions: dtype and shape rules,
// n/s/axes/norm handling, dispatch of the one-axis ops fft_c2c, fft_r2c and fft_c2r.
#include "xpuruntime/fft.h"

#include <algorithm>
#include <cmath>

#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"

namespace xrt {

OpAttrs FftParams::to_attrs() const {
  OpAttrs attrs;
  attrs.axes = Dims{axis};
  attrs.step = Scalar::from_int(n);
  attrs.value = Scalar::from_float(scale);
  attrs.keepdims = inverse;
  return attrs;
}

FftParams FftParams::from_attrs(const OpAttrs& attrs) {
  return FftParams{static_cast<int>(attrs.axes[0]), attrs.step.i, attrs.keepdims,
                   attrs.value.c.real()};
}

FftNorm fft_norm_from_name(std::string_view name) {
  if (name == "backward") return FftNorm::Backward;
  if (name == "ortho") return FftNorm::Ortho;
  if (name == "forward") return FftNorm::Forward;
  throw ValueError("norm must be 'backward', 'ortho' or 'forward', got '" + std::string(name) +
                   "'");
}

namespace {

struct FftOps {
  OpId c2c, r2c, c2r, fftfreq, rfftfreq;
  static const FftOps& get() {
    static const FftOps ops = [] {
      auto& r = KernelRegistry::global();
      return FftOps{r.op_id("fft_c2c"), r.op_id("fft_r2c"), r.op_id("fft_c2r"),
                    r.op_id("fftfreq"), r.op_id("rfftfreq")};
    }();
    return ops;
  }
};

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

// The standard's fft dtypes are float32, float64, complex64 and complex128.
// Note: transforms documented for complex input (fft, ifft, irfft, hfft, ...) also take
// real float32/float64, as NumPy does; the result then has the complex (or real) dtype of
// the same precision. float16/bfloat16 are not fft dtypes.
void check_dtype(DType d, const char* op, bool real_only) {
  bool real = d == DType::Float32 || d == DType::Float64;
  bool complex = d == DType::Complex64 || d == DType::Complex128;
  if (real || (complex && !real_only)) return;
  throw TypeError(std::string(op) + " is not defined for " + name_of(d) + " (it needs " +
                  (real_only ? "a real floating-point dtype: float32 or float64"
                             : "a floating-point dtype: float32, float64, complex64 or "
                               "complex128") +
                  ")");
}

DType complex_of(DType d) {
  return d == DType::Float32 || d == DType::Complex64 ? DType::Complex64 : DType::Complex128;
}

// The factor applied to the result: 1/n goes to the inverse direction under "backward"
// and to the forward direction under "forward"; "ortho" splits it.
double norm_scale(FftNorm norm, int64_t n, bool inverse) {
  switch (norm) {
    case FftNorm::Backward: return inverse ? 1.0 / static_cast<double>(n) : 1.0;
    case FftNorm::Forward: return inverse ? 1.0 : 1.0 / static_cast<double>(n);
    case FftNorm::Ortho: return 1.0 / std::sqrt(static_cast<double>(n));
  }
  return 1.0;
}

// The six one-axis transforms, as a table.
enum class Kind : uint8_t { C2C, R2C, C2R };
struct Transform {
  const char* name;
  Kind kind;
  bool inverse;  // exponent sign +1; also where "backward" puts 1/n
};
constexpr Transform kFft{"fft", Kind::C2C, false}, kIfft{"ifft", Kind::C2C, true},
    kRfft{"rfft", Kind::R2C, false}, kIhfft{"ihfft", Kind::R2C, true},
    kIrfft{"irfft", Kind::C2R, true}, kHfft{"hfft", Kind::C2R, false};

// in_place: x is an intermediate of an n-d transform that nothing else sees; when the
// result has its dtype and shape it is written over x (the kernels read each line whole
// before writing it), which saves an allocation per axis.
Tensor transform(const Transform& t, const Tensor& x, std::optional<int64_t> n, int64_t axis,
                 FftNorm norm, bool in_place = false) {
  check_dtype(x.dtype(), t.name, t.kind == Kind::R2C);
  int a = normalize_axis(axis, x.ndim());
  int64_t size = x.shape()[a];
  // irfft/hfft: n counts output points; the input holds n/2+1 of them.
  int64_t length = n ? *n : t.kind == Kind::C2R ? 2 * (size - 1) : size;
  if (length < 1) {
    if (n)
      throw ValueError(std::string(t.name) + ": n must be at least 1, got " +
                       std::to_string(*n));
    throw ValueError(std::string(t.name) + ": the input has length " + std::to_string(size) +
                     " along axis " + std::to_string(a) + ", which gives " +
                     std::to_string(length) + " points; pass n >= 1");
  }
  int64_t needed = t.kind == Kind::C2R ? length / 2 + 1 : length;
  int64_t out_length = t.kind == Kind::R2C ? length / 2 + 1 : length;
  DType out_dtype = t.kind == Kind::C2R ? real_dtype(x.dtype()) : complex_of(x.dtype());

  Dims in_shape = x.shape();
  in_shape[a] = std::min(size, needed);  // the kernel zero-pads up to `needed`
  Tensor input = x.as_strided(in_shape, x.strides(), x.byte_offset());
  Dims out_shape = x.shape();
  out_shape[a] = out_length;
  bool reuse = in_place && out_dtype == x.dtype() && out_shape == x.shape() && x.is_contiguous();
  Tensor out = reuse ? x : empty(out_shape, out_dtype, x.device());

  OpAttrs attrs = FftParams{a, length, t.inverse, norm_scale(norm, length, t.inverse)}.to_attrs();
  const FftOps& ops = FftOps::get();
  OpId op = t.kind == Kind::C2C ? ops.c2c : t.kind == Kind::R2C ? ops.r2c : ops.c2r;
  const Tensor* inputs[] = {&input};
  KernelCall call{inputs, 1, &out, 1, &attrs};
  dispatch(op, call);
  return out;
}

// ---- n-dimensional arguments ----------------------------------------------------------------

struct NdArgs {
  Dims s, axes;
};

NdArgs nd_args(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
               const char* name, bool c2r) {
  if (s && !axes)
    throw ValueError(std::string(name) + ": s was given without axes; the standard requires "
                     "axes whenever s is given");
  NdArgs args;
  if (axes) {
    for (int64_t axis : *axes) args.axes.push_back(normalize_axis(axis, x.ndim()));
  } else {
    for (int d = 0; d < x.ndim(); ++d) args.axes.push_back(d);
  }
  Dims sorted = args.axes;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 1; i < sorted.size(); ++i)
    if (sorted[i] == sorted[i - 1])
      throw ValueError(std::string(name) + ": repeated axis " + std::to_string(sorted[i]) +
                       " in axes");
  if (s) {
    if (s->size() != args.axes.size())
      throw ValueError(std::string(name) + ": s has " + std::to_string(s->size()) +
                       " entries but axes has " + std::to_string(args.axes.size()));
    for (int i = 0; i < s->size(); ++i) {
      int64_t side = (*s)[i];
      if (side == -1) side = x.shape()[static_cast<int>(args.axes[i])];
      else if (side < 1)
        throw ValueError(std::string(name) + ": entries of s must be at least 1 (or -1), got " +
                         std::to_string(side));
      args.s.push_back(side);
    }
  } else {
    for (int64_t axis : args.axes) args.s.push_back(x.shape()[static_cast<int>(axis)]);
    if (c2r && !args.axes.empty()) args.s[args.s.size() - 1] = 2 * (args.s.back() - 1);
  }
  return args;
}

Tensor c2c_nd(const Transform& t, const Tensor& x, const std::optional<Dims>& s,
              const std::optional<Dims>& axes, FftNorm norm) {
  check_dtype(x.dtype(), t.name, false);
  NdArgs args = nd_args(x, s, axes, t.name, false);
  if (args.axes.empty()) return astype(x, complex_of(x.dtype()), true);
  Tensor y = x;
  for (int i = args.axes.size() - 1; i >= 0; --i)
    y = transform(t, y, args.s[i], args.axes[i], norm, /*in_place=*/i < args.axes.size() - 1);
  return y;
}

void check_not_empty(const NdArgs& args, const char* name) {
  if (args.axes.empty())
    throw ValueError(std::string(name) + ": needs at least one axis to transform");
}

// ---- fftshift -------------------------------------------------------------------------------

Tensor narrow(const Tensor& t, int axis, int64_t start, int64_t length) {
  Dims shape = t.shape();
  shape[axis] = length;
  int64_t offset = t.byte_offset() + start * t.strides()[axis] * static_cast<int64_t>(t.itemsize());
  return t.as_strided(shape, t.strides(), offset);
}

struct Shift {
  int axis;
  int64_t amount;  // 0 < amount < size
};

// A roll over k axes is 2^k block copies: along each axis, out[amount:] = x[:size-amount]
// and out[:amount] = x[size-amount:]. Each block is one strided copy (the copy op).
void copy_rolled(Tensor out, Tensor x, const std::vector<Shift>& shifts, size_t next) {
  if (next == shifts.size()) return copy_into(out, x);
  auto [axis, amount] = shifts[next];
  int64_t size = x.shape()[axis];
  copy_rolled(narrow(out, axis, amount, size - amount), narrow(x, axis, 0, size - amount), shifts,
              next + 1);
  copy_rolled(narrow(out, axis, 0, amount), narrow(x, axis, size - amount, amount), shifts,
              next + 1);
}

Tensor shift(const Tensor& x, const std::optional<Dims>& axes, bool inverse) {
  const char* name = inverse ? "ifftshift" : "fftshift";
  NdArgs args = nd_args(x, std::nullopt, axes, name, false);
  std::vector<Shift> shifts;
  for (int64_t axis : args.axes) {
    int64_t size = x.shape()[static_cast<int>(axis)];
    int64_t amount = inverse ? size - size / 2 : size / 2;
    if (size > 1 && amount % size != 0) shifts.push_back({static_cast<int>(axis), amount});
  }
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) copy_rolled(out, x, shifts, 0);
  return out;
}

Tensor frequencies(OpId op, const char* name, int64_t n, int64_t count, double d,
                   std::optional<DType> dtype, Device device) {
  if (n < 1)
    throw ValueError(std::string(name) + ": n must be at least 1, got " + std::to_string(n));
  if (d == 0.0) throw ValueError(std::string(name) + ": the sample spacing d must not be zero");
  DType out_dtype = dtype.value_or(kDefaultFloat);
  check_dtype(out_dtype, name, true);
  Tensor out = empty(Dims{count}, out_dtype, device);
  OpAttrs attrs;
  attrs.value = Scalar::from_float(1.0 / (static_cast<double>(n) * d));  // as NumPy computes it
  attrs.step = Scalar::from_int(n);
  KernelCall call{nullptr, 0, &out, 1, &attrs};
  dispatch(op, call);
  return out;
}

}  // namespace

Tensor fft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return transform(kFft, x, n, axis, norm);
}
Tensor ifft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return transform(kIfft, x, n, axis, norm);
}
Tensor rfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return transform(kRfft, x, n, axis, norm);
}
Tensor irfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return transform(kIrfft, x, n, axis, norm);
}
Tensor hfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return transform(kHfft, x, n, axis, norm);
}
Tensor ihfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return transform(kIhfft, x, n, axis, norm);
}

// Like NumPy, the n-d transforms run one axis at a time, last axis first; the per-axis
// norm factors multiply to the factor of prod(s).
Tensor fftn(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
            FftNorm norm) {
  return c2c_nd(kFft, x, s, axes, norm);
}
Tensor ifftn(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
             FftNorm norm) {
  return c2c_nd(kIfft, x, s, axes, norm);
}

Tensor rfftn(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
             FftNorm norm) {
  check_dtype(x.dtype(), "rfftn", true);
  NdArgs args = nd_args(x, s, axes, "rfftn", false);
  check_not_empty(args, "rfftn");
  size_t last = args.axes.size() - 1;
  Tensor y = transform(kRfft, x, args.s[last], args.axes[last], norm);
  for (int i = static_cast<int>(last) - 1; i >= 0; --i)
    y = transform(kFft, y, args.s[i], args.axes[i], norm, /*in_place=*/true);
  return y;
}

Tensor irfftn(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
              FftNorm norm) {
  check_dtype(x.dtype(), "irfftn", false);
  NdArgs args = nd_args(x, s, axes, "irfftn", true);
  check_not_empty(args, "irfftn");
  size_t last = args.axes.size() - 1;
  Tensor y = x;
  for (int i = static_cast<int>(last) - 1; i >= 0; --i) {
    bool in_place = static_cast<size_t>(i) + 1 < last;  // y is ours after the first axis
    y = transform(kIfft, y, args.s[i], args.axes[i], norm, in_place);
  }
  return transform(kIrfft, y, args.s[last], args.axes[last], norm);
}

Tensor fftfreq(int64_t n, double d, std::optional<DType> dtype, Device device) {
  return frequencies(FftOps::get().fftfreq, "fftfreq", n, n, d, dtype, device);
}
Tensor rfftfreq(int64_t n, double d, std::optional<DType> dtype, Device device) {
  return frequencies(FftOps::get().rfftfreq, "rfftfreq", n, n / 2 + 1, d, dtype, device);
}

Tensor fftshift(const Tensor& x, const std::optional<Dims>& axes) { return shift(x, axes, false); }
Tensor ifftshift(const Tensor& x, const std::optional<Dims>& axes) { return shift(x, axes, true); }

}  // namespace xrt
