// cpp/src/cpu/fft_plan.cpp: the FFT algorithms behind ComplexPlan and RealPlan.
//
// Complex transforms are a Stockham autosort FFT (decimation in frequency, as in FFTPACK
// and pocketfft): each pass splits every remaining sub-transform of length L = radix*ido
// into `radix` interleaved sub-transforms of length ido, reading from one buffer and
// writing to the other, so the output comes out in natural order without a bit-reversal
// permutation. Lengths whose factorisation would make that slow (a large prime factor)
// go through Bluestein's algorithm instead: a convolution of a smooth length.
//
// Accuracy comes from the twiddle factors: each is the product of at most two roots of
// unity computed from exactly reduced integer angles (never a recurrence), so the error
// of a transform grows like O(eps log n), as in NumPy's pocketfft.
#include "cpu/fft_plan.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <mutex>
#include <utility>

#include "core/host/thread_pool.h"
#include "xpuruntime/errors.h"

namespace xrt::cpu::fft {

using host::parallel_for;

namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;

// exp(2πi m / n) for all m from two tables of about sqrt(n) roots each: the product of
// two accurate roots is within a few ulp, and the tables cost O(sqrt n) sin/cos calls
// instead of O(n).
class RootTable {
 public:
  explicit RootTable(int64_t n)
      : n_(n), step_(static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n))))) {
    for (int64_t j = 0; j < step_; ++j) fine_.push_back(unit_root(j, n));
    for (int64_t q = 0; q * step_ < n; ++q) coarse_.push_back(unit_root(q * step_, n));
  }
  Complex operator()(int64_t m) const {
    m %= n_;
    return coarse_[static_cast<size_t>(m / step_)] * fine_[static_cast<size_t>(m % step_)];
  }
  /// out[i] = (*this)(i * stride) for i < count, where (count-1) * stride < n: the index
  /// is stepped as (coarse, fine) digits, without a division per root.
  void fill(int64_t stride, int64_t count, Complex* out) const {
    const int64_t dq = stride / step_, dr = stride % step_;
    for (int64_t i = 0, q = 0, r = 0; i < count; ++i) {
      out[i] = coarse_[static_cast<size_t>(q)] * fine_[static_cast<size_t>(r)];
      q += dq, r += dr;
      if (r >= step_) r -= step_, ++q;
    }
  }

 private:
  int64_t n_, step_;
  std::vector<Complex> fine_, coarse_;
};

// Multiplication by σi, σ = -1 for the forward transform and +1 for the inverse.
template <bool inverse> inline Complex times_i(Complex a) {
  return inverse ? Complex{-a.im, a.re} : Complex{a.im, -a.re};
}
// Tables hold the inverse-direction roots; the forward transform uses their conjugates.
template <bool inverse> inline Complex twiddle(Complex a, Complex w) {
  return inverse ? a * w : a * conj(w);
}

// ---- Butterflies: b[k] = sum_j a[j] exp(σ 2πi j k / R) ---------------------------------

template <bool inverse> struct Radix2 {
  static constexpr int R = 2;
  void operator()(const Complex* a, Complex* b) const {
    b[0] = a[0] + a[1];
    b[1] = a[0] - a[1];
  }
};

// exp(σ 2πi/4) = σi: no real multiplication at all, which is why radix 4 is preferred.
template <bool inverse> struct Radix4 {
  static constexpr int R = 4;
  void operator()(const Complex* a, Complex* b) const {
    Complex t0 = a[0] + a[2], t1 = a[0] - a[2];
    Complex t2 = a[1] + a[3], t3 = times_i<inverse>(a[1] - a[3]);
    b[0] = t0 + t2;
    b[2] = t0 - t2;
    b[1] = t1 + t3;
    b[3] = t1 - t3;
  }
};

template <bool inverse> struct Radix3 {
  static constexpr int R = 3;
  void operator()(const Complex* a, Complex* b) const {
    constexpr double kSin = 0.866025403784438646763723170752936183;  // sin(2π/3)
    Complex t = a[1] + a[2];
    Complex m = a[0] + t * -0.5;
    Complex d = times_i<inverse>(a[1] - a[2]) * kSin;
    b[0] = a[0] + t;
    b[1] = m + d;
    b[2] = m - d;
  }
};

// The odd butterflies pair a[j] with a[R-j]: their sum meets the cosines and their
// difference the sines, which halves the multiplications.
template <bool inverse> struct Radix5 {
  static constexpr int R = 5;
  void operator()(const Complex* a, Complex* b) const {
    constexpr double c1 = 0.309016994374947424102293417182819059;   // cos(2π/5)
    constexpr double c2 = -0.809016994374947424102293417182819059;  // cos(4π/5)
    constexpr double s1 = 0.951056516295153572116439333379382143;   // sin(2π/5)
    constexpr double s2 = 0.587785252292473129168705954639072769;   // sin(4π/5)
    Complex sum1 = a[1] + a[4], dif1 = a[1] - a[4];
    Complex sum2 = a[2] + a[3], dif2 = a[2] - a[3];
    b[0] = a[0] + sum1 + sum2;
    Complex m1 = a[0] + sum1 * c1 + sum2 * c2, m2 = a[0] + sum1 * c2 + sum2 * c1;
    Complex r1 = times_i<inverse>(dif1 * s1 + dif2 * s2);
    Complex r2 = times_i<inverse>(dif1 * s2 - dif2 * s1);
    b[1] = m1 + r1;
    b[4] = m1 - r1;
    b[2] = m2 + r2;
    b[3] = m2 - r2;
  }
};

// What one pass reads and writes, and the part of it one call computes: sub-transforms
// k in [k_begin, k_end), points i in [i_begin, i_end) of each. Every (k, i) is independent
// of the others, which is what lets a long transform split a pass over the thread pool.
struct PassRange {
  int64_t l1, ido;
  const Complex* tw;
  const Complex* cc;
  Complex* ch;
  int64_t k_begin, k_end, i_begin, i_end;
};

// One Stockham pass. Input cc[i + ido*(j + R*k)], output ch[i + ido*(k + l1*j)]: leg j of
// sub-transform k becomes sub-transform j of the next pass, multiplied by its twiddle.
template <bool inverse, class Butterfly> void pass(const PassRange& r) {
  constexpr int R = Butterfly::R;
  const Butterfly butterfly;
  const int64_t ido = r.ido, out_stride = ido * r.l1;
  const Complex* tw = r.tw;
  for (int64_t k = r.k_begin; k < r.k_end; ++k) {
    const Complex* in = r.cc + k * ido * R;
    Complex* out = r.ch + k * ido;
    Complex a[R], b[R];
    if (r.i_begin == 0) {  // i = 0: the twiddles are 1
      for (int j = 0; j < R; ++j) a[j] = in[ido * j];
      butterfly(a, b);
      for (int j = 0; j < R; ++j) out[out_stride * j] = b[j];
    }
    for (int64_t i = std::max<int64_t>(r.i_begin, 1); i < r.i_end; ++i) {
      for (int j = 0; j < R; ++j) a[j] = in[i + ido * j];
      butterfly(a, b);
      out[i] = b[0];
      for (int j = 1; j < R; ++j)
        out[i + out_stride * j] = twiddle<inverse>(b[j], tw[(j - 1) * ido + i]);
    }
  }
}

// The same pass for any odd radix, O(R) work per point. roots[m] = exp(2πi m / R).
template <bool inverse> void pass_generic(int R, const Complex* roots, const PassRange& r) {
  const int half = (R - 1) / 2;
  const int64_t ido = r.ido, out_stride = ido * r.l1;
  const Complex* tw = r.tw;
  Complex on_stack[128];
  std::vector<Complex> on_heap(R > 128 ? R : 0);
  Complex* a = R > 128 ? on_heap.data() : on_stack;
  for (int64_t k = r.k_begin; k < r.k_end; ++k) {
    const Complex* in = r.cc + k * ido * R;
    Complex* out = r.ch + k * ido;
    for (int64_t i = r.i_begin; i < r.i_end; ++i) {
      auto store = [&](int j, Complex v) {
        out[i + out_stride * j] = i == 0 ? v : twiddle<inverse>(v, tw[(j - 1) * ido + i]);
      };
      for (int j = 0; j < R; ++j) a[j] = in[i + ido * j];
      Complex total = a[0];
      for (int j = 1; j <= half; ++j) {  // a[j] <- sum, a[R-j] <- difference
        Complex s = a[j] + a[R - j], d = a[j] - a[R - j];
        a[j] = s;
        a[R - j] = d;
        total = total + s;
      }
      out[i] = total;
      for (int k2 = 1; k2 <= half; ++k2) {
        Complex even = a[0], odd{0.0, 0.0};
        int m = 0;
        for (int j = 1; j <= half; ++j) {
          m += k2;
          if (m >= R) m -= R;  // m = j*k2 mod R
          even = even + a[j] * roots[m].re;
          odd = odd + a[R - j] * roots[m].im;
        }
        Complex rotated = times_i<inverse>(odd);
        store(k2, even + rotated);
        store(R - k2, even - rotated);
      }
    }
  }
}

// ---- Factorisation and the choice of algorithm -------------------------------------------

std::vector<int> factorize(int64_t n) {
  // As many 4s as possible (the cheapest butterfly per point), at most one 2, then the
  // odd primes in ascending order. Order changes speed and rounding only; the lone 2 goes
  // first as in FFTPACK and pocketfft, where its twiddle-free leg covers the most points.
  std::vector<int> factors;
  while (n % 4 == 0) factors.push_back(4), n /= 4;
  if (n % 2 == 0) factors.insert(factors.begin(), 2), n /= 2;
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) factors.push_back(static_cast<int>(p)), n /= p;
  if (n > 1) factors.push_back(static_cast<int>(n));
  return factors;
}

// Operation count of the direct algorithm, in the units of pocketfft's heuristic (the one
// NumPy uses): per point, a radix-4 pass costs 2, a radix-2 pass 1.1, radix 3 and 5 their
// value, and a generic prime p about 1.1 p (its butterfly is O(p) per point).
double direct_cost(int64_t n) {
  double per_point = 0.0;
  for (int f : factorize(n)) per_point += f == 4 ? 2.0 : f == 2 ? 1.1 : f <= 5 ? f : 1.1 * f;
  return per_point * static_cast<double>(n);
}

// The smallest 2^a 3^b 5^c >= n: the lengths the direct algorithm handles fastest.
int64_t smooth_size(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t f5 = 1; f5 < best; f5 *= 5)
    for (int64_t f35 = f5; f35 < best; f35 *= 3) {
      int64_t x = f35;
      while (x < n) x *= 2;
      best = std::min(best, x);
    }
  return best;
}

// Bluestein needs two transforms of a smooth length m >= 2n-1 plus O(m) pointwise work;
// it wins once the direct algorithm's generic prime butterflies cost more (from primes of
// about 70 up, depending on the rest of n). The factor 1.5 for the pointwise work and the
// extra passes over memory is pocketfft's empirical one. Below 50 points the direct
// algorithm is cheap whatever the factors, and smooth lengths never take this path.
bool prefer_bluestein(int64_t n) {
  if (n < 50 || factorize(n).back() <= 5) return false;
  double bluestein = 2.0 * direct_cost(smooth_size(2 * n - 1)) * 1.5;
  return bluestein < direct_cost(n);
}

// ---- The plan cache ----------------------------------------------------------------------

// Most recently used first. Plans hold O(n) tables, so the cache is bounded in entries and
// in bytes; a plan still in use by a running transform stays alive through its shared_ptr.
template <class Plan> std::shared_ptr<const Plan> cached_plan(int64_t n) {
  constexpr size_t kMaxPlans = 32;
  constexpr int64_t kMaxBytes = int64_t{256} << 20;
  struct Cache {
    std::mutex mutex;
    std::list<std::pair<int64_t, std::shared_ptr<const Plan>>> entries;
    int64_t bytes = 0;
  };
  static Cache cache;
  auto find = [&]() -> std::shared_ptr<const Plan> {
    for (auto it = cache.entries.begin(); it != cache.entries.end(); ++it)
      if (it->first == n) {
        cache.entries.splice(cache.entries.begin(), cache.entries, it);
        return it->second;
      }
    return nullptr;
  };
  {
    std::lock_guard lock(cache.mutex);
    if (auto plan = find()) return plan;
  }
  // Built outside the lock: a plan may ask the cache for the plans it is made of.
  auto plan = std::make_shared<const Plan>(n);
  std::lock_guard lock(cache.mutex);
  if (auto existing = find()) return existing;  // another thread was faster
  cache.entries.emplace_front(n, plan);
  cache.bytes += plan->bytes();
  while (cache.entries.size() > 1 &&
         (cache.entries.size() > kMaxPlans || cache.bytes > kMaxBytes)) {
    cache.bytes -= cache.entries.back().second->bytes();
    cache.entries.pop_back();
  }
  return plan;
}

int64_t table_bytes(const std::vector<Complex>& v) {
  return static_cast<int64_t>(v.size() * sizeof(Complex));
}

}  // namespace

// The angle 2πm/n is reduced with integers to q quarter turns plus |θ| <= π/4, where sin
// and cos are accurate to an ulp; the quarter turns are applied exactly.
Complex unit_root(int64_t m, int64_t n) {
  m %= n;
  if (m < 0) m += n;
  __int128 four_m = static_cast<__int128>(4) * m;
  int64_t q = static_cast<int64_t>((2 * four_m + n) / (2 * static_cast<__int128>(n)));
  int64_t r = static_cast<int64_t>(four_m - static_cast<__int128>(q) * n);  // |r| <= n/2
  double theta = (kPi / 2) * (static_cast<double>(r) / static_cast<double>(n));
  double c = std::cos(theta), s = std::sin(theta);
  switch (q & 3) {
    case 0: return {c, s};
    case 1: return {-s, c};
    case 2: return {-c, -s};
    default: return {s, -c};
  }
}

// ---- ComplexPlan -------------------------------------------------------------------------

ComplexPlan::ComplexPlan(int64_t n) : n_(n) {
  if (n < 1) throw ValueError("FFT length must be at least 1");
  if (prefer_bluestein(n)) {
    m_ = smooth_size(2 * n - 1);
    inner_ = complex_plan(m_);
    // chirp[k] = exp(-πi k²/n) = conj(exp(2πi (k² mod 2n) / 2n)); k² mod 2n is updated
    // exactly with integers ((k+1)² = k² + 2k + 1).
    RootTable roots(2 * n);
    chirp_.resize(static_cast<size_t>(n));
    int64_t square = 0;
    for (int64_t k = 0; k < n; ++k) {
      chirp_[k] = conj(roots(square));
      square = (square + 2 * k + 1) % (2 * n);
    }
    // The convolution kernel conj(chirp[k]) for -n < k < n, wrapped to length m.
    std::vector<Complex> kernel(static_cast<size_t>(m_), Complex{0.0, 0.0});
    for (int64_t k = 0; k < n; ++k) kernel[k] = conj(chirp_[k]);
    for (int64_t k = 1; k < n; ++k) kernel[m_ - k] = conj(chirp_[k]);
    std::vector<Complex> work(static_cast<size_t>(inner_->work_size()));
    Complex* spectrum = inner_->run(kernel.data(), work.data(), false);
    spectrum_.assign(spectrum, spectrum + m_);
    for (Complex& v : spectrum_) v = v * (1.0 / static_cast<double>(m_));
    return;
  }
  std::vector<int> factors = factorize(n);
  RootTable roots(n);
  int64_t l1 = 1;
  for (int radix : factors) {
    Pass p{radix, l1, n / (l1 * radix), {}, {}};
    p.twiddles.resize(static_cast<size_t>((radix - 1) * p.ido));
    for (int j = 1; j < radix; ++j) roots.fill(j * l1, p.ido, &p.twiddles[(j - 1) * p.ido]);
    if (radix > 5)
      for (int j = 0; j < radix; ++j) p.roots.push_back(unit_root(j, radix));
    passes_.push_back(std::move(p));
    l1 *= radix;
  }
}

int64_t ComplexPlan::work_size() const {
  return inner_ ? 2 * m_ : n_;  // the inner plan is a Stockham plan: its work is m_
}

int64_t ComplexPlan::bytes() const {
  int64_t total = table_bytes(chirp_) + table_bytes(spectrum_);
  for (const Pass& p : passes_) total += table_bytes(p.twiddles) + table_bytes(p.roots);
  return total;
}

Complex* ComplexPlan::run(Complex* data, Complex* work, bool inverse) const {
  if (inner_) return inverse ? run_bluestein<true>(data, work) : run_bluestein<false>(data, work);
  return inverse ? run_passes<true>(data, work) : run_passes<false>(data, work);
}

// A long transform splits each pass over the thread pool, along k when there are many
// sub-transforms and along i otherwise. Every output value is computed the same way
// whatever the split, so results do not depend on the thread count. (Inside a task of a
// batched transform, parallel_for runs inline.)
template <bool inverse> Complex* ComplexPlan::run_passes(Complex* data, Complex* work) const {
  constexpr int64_t kSplitLength = int64_t{1} << 15;  // shorter transforms run whole
  constexpr int64_t kChunkPoints = int64_t{1} << 14;
  Complex* in = data;
  Complex* out = work;
  for (const Pass& p : passes_) {
    auto compute = [&](int64_t k_begin, int64_t k_end, int64_t i_begin, int64_t i_end) {
      PassRange r{p.l1, p.ido, p.twiddles.data(), in, out, k_begin, k_end, i_begin, i_end};
      switch (p.radix) {
        case 2: return pass<inverse, Radix2<inverse>>(r);
        case 3: return pass<inverse, Radix3<inverse>>(r);
        case 4: return pass<inverse, Radix4<inverse>>(r);
        case 5: return pass<inverse, Radix5<inverse>>(r);
        default: return pass_generic<inverse>(p.radix, p.roots.data(), r);
      }
    };
    if (n_ < kSplitLength) {
      compute(0, p.l1, 0, p.ido);
    } else if (p.l1 >= p.ido) {
      parallel_for(p.l1, std::max<int64_t>(1, kChunkPoints / (p.ido * p.radix)),
                   [&](int64_t b, int64_t e) { compute(b, e, 0, p.ido); });
    } else {
      parallel_for(p.ido, std::max<int64_t>(1, kChunkPoints / (p.l1 * p.radix)),
                   [&](int64_t b, int64_t e) { compute(0, p.l1, b, e); });
    }
    std::swap(in, out);
  }
  return in;
}

// X[k] = chirp[k] * sum_t (x[t] chirp[t]) conj(chirp[k-t]), since -kt = (k² + t² - (k-t)²)/2:
// a circular convolution of length m >= 2n-1, done with two smooth-length FFTs. The
// inverse transform is the conjugate of the forward transform of the conjugate.
template <bool inverse> Complex* ComplexPlan::run_bluestein(Complex* data, Complex* work) const {
  Complex* u = work;
  Complex* v = work + m_;
  for (int64_t k = 0; k < n_; ++k) u[k] = (inverse ? conj(data[k]) : data[k]) * chirp_[k];
  for (int64_t k = n_; k < m_; ++k) u[k] = Complex{0.0, 0.0};
  Complex* r = inner_->run(u, v, false);
  for (int64_t k = 0; k < m_; ++k) r[k] = r[k] * spectrum_[k];
  Complex* s = inner_->run(r, r == u ? v : u, true);
  for (int64_t k = 0; k < n_; ++k) {
    Complex y = s[k] * chirp_[k];
    data[k] = inverse ? conj(y) : y;
  }
  return data;
}

// ---- RealPlan ------------------------------------------------------------------------------
//
// Even n = 2h: the real sequence is read as h complex values z[m] = x[2m] + i x[2m+1]
// (the same memory: Complex is two adjacent doubles).
// With Z = DFT_h(z), the DFTs of the even and odd samples are
//   E[k] = (Z[k] + conj Z[h-k]) / 2,   O[k] = (Z[k] - conj Z[h-k]) / 2i,
// and X[k] = E[k] + exp(-2πi k/n) O[k] for k = 0..h (Z[h] meaning Z[0]). The inverse runs
// the same algebra backwards. Odd n uses a complex transform of the full length.

RealPlan::RealPlan(int64_t n) : n_(n) {
  if (n < 1) throw ValueError("FFT length must be at least 1");
  if (n % 2 == 0) {
    plan_ = complex_plan(n / 2);
    RootTable roots(n);
    twiddles_.resize(static_cast<size_t>(n / 2 + 1));
    roots.fill(1, n / 2 + 1, twiddles_.data());
  } else {
    plan_ = complex_plan(n);
  }
}

int64_t RealPlan::work_size() const { return plan_->size() + plan_->work_size(); }

int64_t RealPlan::bytes() const { return table_bytes(twiddles_); }

void RealPlan::forward(double* x, Complex* out, Complex* work) const {
  if (n_ % 2 == 1) {
    Complex* z = work;
    for (int64_t t = 0; t < n_; ++t) z[t] = Complex{x[t], 0.0};
    Complex* r = plan_->run(z, work + n_, false);
    for (int64_t k = 0; k <= n_ / 2; ++k) out[k] = r[k];
    out[0].im = 0.0;
    return;
  }
  const int64_t h = n_ / 2;
  const Complex* Z = plan_->run(reinterpret_cast<Complex*>(x), work, false);
  out[0] = Complex{Z[0].re + Z[0].im, 0.0};
  out[h] = Complex{Z[0].re - Z[0].im, 0.0};
  for (int64_t k = 1; k < h; ++k) {
    Complex a = Z[k], b = conj(Z[h - k]);
    Complex even = (a + b) * 0.5;
    Complex odd = times_i<false>(a - b) * 0.5;  // (a - b) / 2i
    out[k] = even + odd * conj(twiddles_[k]);
  }
}

const double* RealPlan::inverse(Complex* in, Complex* work) const {
  Complex* z = work;
  Complex* scratch = work + plan_->size();
  if (n_ % 2 == 1) {
    z[0] = Complex{in[0].re, 0.0};
    for (int64_t k = 1; k <= n_ / 2; ++k) {
      z[k] = in[k];
      z[n_ - k] = conj(in[k]);
    }
    const Complex* r = plan_->run(z, scratch, true);
    double* x = reinterpret_cast<double*>(in);  // n+1 doubles, no longer needed as input
    for (int64_t t = 0; t < n_; ++t) x[t] = r[t].re;
    return x;
  }
  // 2 E[k] + 2i O[k] with E, O from X as above; the factor 2 is the one the
  // unnormalised inverse of length h misses against length n.
  const int64_t h = n_ / 2;
  double first = in[0].re, last = in[h].re;
  z[0] = Complex{first + last, first - last};
  for (int64_t k = 1; k < h; ++k) {
    Complex a = in[k], b = conj(in[h - k]);
    z[k] = (a + b) + times_i<true>((a - b) * twiddles_[k]);
  }
  return reinterpret_cast<const double*>(plan_->run(z, scratch, true));
}

std::shared_ptr<const ComplexPlan> complex_plan(int64_t n) { return cached_plan<ComplexPlan>(n); }
std::shared_ptr<const RealPlan> real_plan(int64_t n) { return cached_plan<RealPlan>(n); }

}  // namespace xrt::cpu::fft
