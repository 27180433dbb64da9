// cpp/src/cpu/binary_kernels.cpp: the binary elementwise kernels whose real loops need no
// libm (the table's math-library column; the others are built per ISA in math_kernels.cpp),
// one entry per row of XRT_BINARY_OPS,
// and `where`. Inputs arrive broadcast and cast to one dtype.
#include <type_traits>

#include "cpu/elementwise_loops.h"
#include "cpu/kernels.h"
#include "xpuruntime/elementwise.h"

namespace xrt::cpu {
namespace {

using namespace baseline;

// nextafter steps by the ulp of the stored type: for float16/bfloat16 that is a step of
// the 16-bit pattern (sign-magnitude), not of the float it computes in.
template <class H> H half_nextafter(H a, H b) {
  float fa = a, fb = b;
  if (fa != fa || fb != fb) return H(std::numeric_limits<float>::quiet_NaN());
  if (fa == fb) return b;
  H r;
  if (fa == 0) {
    r.bits = static_cast<uint16_t>(fb < 0 ? 0x8001u : 0x0001u);
  } else {
    r.bits = static_cast<uint16_t>((fa < fb) == (fa > 0) ? a.bits + 1 : a.bits - 1);
  }
  return r;
}

// where: a byte copy chosen by the condition, so it depends only on the item size.
// Note: the selects are written as masks (all ones where the condition's byte is 1) so that
// GCC vectorises them: `c[i] ? x[i] : y[i]` on bool bytes stayed a scalar loop, 0.3 ns an
// element, and the scalar-fill case (a causal mask filling 4x64x64 scores with -inf) took
// the strided loop: 10.2 us, now 2.8.
template <class U> U select_bits(uint8_t c, U x, U y) {
  if constexpr (std::is_integral_v<U>) {
    const U mask = U(0) - U(c & 1);
    return static_cast<U>((x & mask) | (y & static_cast<U>(~mask)));
  } else {
    return c ? x : y;
  }
}

template <class U> void where_typed(const KernelCall& call) {
  for_each_run<4>({&call.out(), &call.in(0), &call.in(1), &call.in(2)},
                  [](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
    constexpr int64_t z = sizeof(U);
    U* __restrict o = reinterpret_cast<U*>(p[0]);
    const uint8_t* __restrict c = reinterpret_cast<const uint8_t*>(p[1]);
    if (s[0] == z && s[1] == 1 && s[2] == z && s[3] == z) {
      const U* __restrict x = reinterpret_cast<const U*>(p[2]);
      const U* __restrict y = reinterpret_cast<const U*>(p[3]);
      for (int64_t i = 0; i < n; ++i) o[i] = select_bits(c[i], x[i], y[i]);
    } else if (s[0] == z && s[1] == 1 && s[2] == 0 && s[3] == z) {
      // A broadcast scalar on one side (a mask filling scores with -inf).
      const U x = *reinterpret_cast<const U*>(p[2]);
      const U* __restrict y = reinterpret_cast<const U*>(p[3]);
      for (int64_t i = 0; i < n; ++i) o[i] = select_bits(c[i], x, y[i]);
    } else if (s[0] == z && s[1] == 1 && s[2] == z && s[3] == 0) {
      const U* __restrict x = reinterpret_cast<const U*>(p[2]);
      const U y = *reinterpret_cast<const U*>(p[3]);
      for (int64_t i = 0; i < n; ++i) o[i] = select_bits(c[i], x[i], y);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<U*>(p[0] + i * s[0]) =
            *reinterpret_cast<const bool*>(p[1] + i * s[1])
                ? *reinterpret_cast<const U*>(p[2] + i * s[2])
                : *reinterpret_cast<const U*>(p[3] + i * s[3]);
    }
  }, /*in_memory_order=*/true);
}

struct Bytes16 { uint64_t lo, hi; };

}  // namespace

}  // namespace xrt::cpu

namespace xrt::cpu::baseline {
template <> struct BinaryApply<math::nextafter, Float16> {
  static Float16 apply(Float16 a, Float16 b) { return half_nextafter(a, b); }
};
template <> struct BinaryApply<math::nextafter, BFloat16> {
  static BFloat16 apply(BFloat16 a, BFloat16 b) { return half_nextafter(a, b); }
};
}  // namespace xrt::cpu::baseline

namespace xrt::cpu {

#define XRT_BINARY_KERNEL(name, accepts, result, math_library, computes_in) \
  baseline::binary_entry<baseline::math::name,                              \
                         baseline::built_per_isa(MathLibrary::math_library), false>(),
const KernelFnPtr kBinaryKernels[] = {XRT_BINARY_OPS(XRT_BINARY_KERNEL)};
#undef XRT_BINARY_KERNEL

void where_kernel(const KernelCall& call) {
  switch (call.out().itemsize()) {
    case 1: return where_typed<uint8_t>(call);
    case 2: return where_typed<uint16_t>(call);
    case 4: return where_typed<uint32_t>(call);
    case 8: return where_typed<uint64_t>(call);
    case 16: return where_typed<Bytes16>(call);
  }
  baseline::throw_unsupported("where", call.out().dtype());
}

}  // namespace xrt::cpu
