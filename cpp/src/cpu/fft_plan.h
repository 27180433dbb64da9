// cpp/src/cpu/fft_plan.h: FFT plans for one transform length, built once and cached.
//
// - ComplexPlan: a mixed-radix Stockham FFT (radix 4, 2, 3, 5 and a generic odd radix),
//   or Bluestein's algorithm when the length has a large prime factor, so every length
//   from 1 up costs O(n log n).
// - RealPlan: real-input (r2c) and Hermitian-input (c2r) transforms on top of a complex
//   plan of half the length (even n) or of the full length (odd n).
// - All arithmetic is in double precision; float32 data is widened on load and rounded
//   once on store by the kernels (cpu/fft_kernels.cpp).
// Plans are immutable after construction, so one plan serves any number of threads.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace xrt::cpu::fft {

/// A complex double with plain arithmetic. (std::complex's operator* guards against NaN
/// with a call to __muldc3, which blocks vectorisation; FFT libraries use the plain
/// formula, and so do we.) Layout-compatible with std::complex<double>.
struct Complex {
  double re, im;
};
inline Complex operator+(Complex a, Complex b) { return {a.re + b.re, a.im + b.im}; }
inline Complex operator-(Complex a, Complex b) { return {a.re - b.re, a.im - b.im}; }
inline Complex operator*(Complex a, Complex b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
inline Complex operator*(Complex a, double s) { return {a.re * s, a.im * s}; }
inline Complex conj(Complex a) { return {a.re, -a.im}; }

/// exp(2πi m / n), accurate to about an ulp for any m and n.
Complex unit_root(int64_t m, int64_t n);

/// The complex DFT of one length. run() is unnormalised: exponent sign -1 (forward) or
/// +1 (inverse).
class ComplexPlan {
 public:
  explicit ComplexPlan(int64_t n);
  int64_t size() const { return n_; }
  /// Complex elements the `work` buffer of run() must hold.
  int64_t work_size() const;
  /// Transforms data[0, n); returns the buffer that holds the result (data or work).
  Complex* run(Complex* data, Complex* work, bool inverse) const;
  /// Bytes of tables (for the cache's budget).
  int64_t bytes() const;

 private:
  /// One Stockham pass: `l1` transforms already split off, each with `ido` points per
  /// butterfly leg. twiddles[(j-1)*ido + i] = exp(2πi j*l1*i / n).
  struct Pass {
    int radix;
    int64_t l1, ido;
    std::vector<Complex> twiddles;
    std::vector<Complex> roots;  ///< generic radix only: exp(2πi j / radix)
  };
  template <bool inverse> Complex* run_passes(Complex* data, Complex* work) const;
  template <bool inverse> Complex* run_bluestein(Complex* data, Complex* work) const;

  int64_t n_;
  std::vector<Pass> passes_;
  // Bluestein: a convolution of length m_ computed with inner_.
  int64_t m_ = 0;
  std::shared_ptr<const ComplexPlan> inner_;
  std::vector<Complex> chirp_;     ///< exp(-πi k² / n), k < n
  std::vector<Complex> spectrum_;  ///< DFT of the conjugate chirp (wrapped), divided by m_
};

/// The DFT of real data of one length: forward gives the n/2+1 non-redundant
/// coefficients; inverse takes them (a Hermitian spectrum) back to n real values.
class RealPlan {
 public:
  explicit RealPlan(int64_t n);
  int64_t size() const { return n_; }
  int64_t work_size() const;
  /// out[0, n/2] = sum_t x[t] exp(-2πi k t / n), unnormalised. Overwrites x.
  void forward(double* x, Complex* out, Complex* work) const;
  /// x[0, n) = sum_k X[k] exp(+2πi k t / n) over the Hermitian extension X of in[0, n/2];
  /// returns x, which lies in `in` or `work` (both are overwritten). The imaginary parts of
  /// in[0] and (even n) in[n/2] are ignored, as in NumPy.
  const double* inverse(Complex* in, Complex* work) const;
  int64_t bytes() const;

 private:
  int64_t n_;
  std::shared_ptr<const ComplexPlan> plan_;  ///< length n/2 (even n) or n (odd n)
  std::vector<Complex> twiddles_;            ///< even n: exp(2πi k / n), k <= n/2
};

/// Cached plans (built on first use; the cache keeps a bounded number of bytes).
std::shared_ptr<const ComplexPlan> complex_plan(int64_t n);
std::shared_ptr<const RealPlan> real_plan(int64_t n);

}  // namespace xrt::cpu::fft
