// cpp/include/xpuruntime/fft.h: the Array API `fft` extension (discrete Fourier transforms,
// sample frequencies, shifts) and the parameters its kernels receive.
#pragma once
#include <optional>
#include <string_view>

#include "xpuruntime/kernel.h"

namespace xrt {

/// Which direction carries the 1/n: "backward" (the inverse), "ortho" (1/sqrt(n) both
/// ways) or "forward".
enum class FftNorm : uint8_t { Backward, Ortho, Forward };
/// Parses the standard's `norm` strings; ValueError for anything else.
FftNorm fft_norm_from_name(std::string_view name);

// One-dimensional transforms along `axis` (negative counts from the end; IndexError when
// out of range). `n` is the transform length (the output length for irfft/hfft); the input
// is zero-padded or trimmed to it; ValueError when n < 1. Inputs: float32, float64,
// complex64, complex128 (rfft/ihfft: real only); TypeError for other dtypes. Results have
// the precision of the input.
Tensor fft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor ifft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor rfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor irfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor hfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor ihfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);

// N-dimensional transforms over `axes` (default: all axes; repeated axes are a
// ValueError) with lengths `s` (default: the input's; -1 keeps an axis's length; `s`
// requires `axes`). `norm` applies to the total length prod(s).
Tensor fftn(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
            FftNorm norm);
Tensor ifftn(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
             FftNorm norm);
Tensor rfftn(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
             FftNorm norm);
Tensor irfftn(const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& axes,
              FftNorm norm);

/// Sample frequencies [0, 1, ..., -1] / (d*n) of a length-n transform (rfftfreq: the
/// n/2+1 non-negative ones). dtype: float32 or float64 (default float64).
Tensor fftfreq(int64_t n, double d, std::optional<DType> dtype, Device device);
Tensor rfftfreq(int64_t n, double d, std::optional<DType> dtype, Device device);

/// Rolls every axis in `axes` (default: all) by half its length, moving the zero
/// frequency to the centre (ifftshift undoes it). Any dtype.
Tensor fftshift(const Tensor& x, const std::optional<Dims>& axes);
Tensor ifftshift(const Tensor& x, const std::optional<Dims>& axes);

/// What the fft_c2c / fft_r2c / fft_c2r kernels receive. The input holds min(M, needed)
/// elements along `axis` (the kernel zero-pads the rest); the output is allocated, or is
/// the input itself (n-d transforms reuse their intermediates): a kernel reads each line
/// whole before it writes that line.
///   c2c: out[k] = scale * sum_t in[t] exp(∓2πi k t / n)           (- forward, + inverse)
///   r2c: out[0..n/2] as c2c, for real input
///   c2r: out[t] (real, n values) as c2c over the Hermitian extension of in[0..n/2]
struct FftParams {
  int axis = 0;          ///< the transformed axis, non-negative
  int64_t n = 1;         ///< logical transform length
  bool inverse = false;  ///< exponent sign +1
  double scale = 1.0;    ///< applied to every output value

  // Note: OpAttrs is shared by every op family, so these ride in its generic fields
  // (axes = {axis}, step = n, value = scale, keepdims = inverse); the mapping lives here
  // and nowhere else.
  OpAttrs to_attrs() const;
  static FftParams from_attrs(const OpAttrs& attrs);
};

}  // namespace xrt
