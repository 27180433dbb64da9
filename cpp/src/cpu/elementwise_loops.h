// cpp/src/cpu/elementwise_loops.h: the loops every elementwise kernel shares. A kernel is
// `unary_kernel<Op>` or `binary_kernel<Op>` for a struct of scalar_math.h or
// scalar_binary_math.h; it visits the input dtype, computes in compute_t<T> (float for the
// 16-bit floats) and stores the result in the output's type. Contiguous runs (and a broadcast scalar operand) get plain indexed
// loops the compiler vectorises; anything else walks byte strides. Contiguous float16 runs
// are converted a block at a time (half_blocks.h) and computed by the float loop.
#pragma once
#include <algorithm>
#include <type_traits>
#include <string>
#include <utility>

#include "core/host/dtype_dispatch.h"
#include "cpu/half_blocks.h"
#include "cpu/loops.h"
#include "cpu/scalar_binary_math.h"
#include "cpu/scalar_math.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/kernel.h"

namespace xrt::cpu {

using host::visit_dtype;

using KernelFnPtr = void (*)(const KernelCall& call);
}

namespace xrt::cpu::XRT_ISA_NS {

using detail::compute_t;

/// The stored type of a result: bool for predicates, the real type for the real part of a
/// complex (abs, real, imag), else the input's stored type (so float16 stays float16).
template <class T, class C, class R> using stored_result_t =
    std::conditional_t<std::is_same_v<R, bool>, bool,
                       std::conditional_t<detail::is_complex_v<C> && !detail::is_complex_v<R>,
                                          R, T>>;

template <class Op, class C> inline constexpr bool unary_applicable =
    requires(C c) { Op::apply(c); };
template <class Op, class C> inline constexpr bool binary_applicable =
    requires(C a, C b) { Op::apply(a, b); };

[[noreturn]] inline void throw_unsupported(const char* what, DType dtype) {
  throw TypeError(std::string(what) + " has no CPU kernel for " +
                  std::string(dtype_info(dtype).name));
}

// Elements per converted block: three float blocks stay in L1 next to the operands.
inline constexpr int64_t kHalfBlock = 512;

// o[i] = O(apply(a[i])) for contiguous float16 a, through float blocks.
template <class O, class Apply>
void unary_half_blocks(O* o, const Float16* a, int64_t n, Apply apply) {
  float fa[kHalfBlock], fo[kHalfBlock];
  for (int64_t i = 0; i < n; i += kHalfBlock) {
    int64_t m = std::min(kHalfBlock, n - i);
    widen_float16(a + i, fa, m);
    if constexpr (std::is_same_v<O, Float16>) {
      for (int64_t j = 0; j < m; ++j) fo[j] = static_cast<float>(apply(fa[j]));
      narrow_to_float16(fo, o + i, m);
    } else {
      for (int64_t j = 0; j < m; ++j) o[i + j] = O(apply(fa[j]));
    }
  }
}

// o[i] = O(apply(a[i], b[i])) for float16 operands that are contiguous or (at most one) a
// broadcast scalar.
template <class O, class Apply>
void binary_half_blocks(O* o, const Float16* a, bool a_steps, const Float16* b, bool b_steps,
                        int64_t n, Apply apply) {
  float fa[kHalfBlock], fb[kHalfBlock], fo[kHalfBlock];
  if (!a_steps) std::fill_n(fa, kHalfBlock, float(a[0]));
  if (!b_steps) std::fill_n(fb, kHalfBlock, float(b[0]));
  for (int64_t i = 0; i < n; i += kHalfBlock) {
    int64_t m = std::min(kHalfBlock, n - i);
    if (a_steps) widen_float16(a + i, fa, m);
    if (b_steps) widen_float16(b + i, fb, m);
    if constexpr (std::is_same_v<O, Float16>) {
      for (int64_t j = 0; j < m; ++j) fo[j] = static_cast<float>(apply(fa[j], fb[j]));
      narrow_to_float16(fo, o + i, m);
    } else {
      for (int64_t j = 0; j < m; ++j) o[i + j] = O(apply(fa[j], fb[j]));
    }
  }
}

template <class Op, class T> void unary_typed(const KernelCall& call) {
  using C = compute_t<T>;
  using O = stored_result_t<T, C, decltype(Op::apply(std::declval<C>()))>;
  for_each_run<2>({&call.out(), &call.in(0)},
                  [](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    if constexpr (std::is_same_v<T, Float16>) {
      if (s[0] == sizeof(O) && s[1] == sizeof(T))
        return unary_half_blocks(reinterpret_cast<O*>(p[0]),
                                 reinterpret_cast<const T*>(p[1]), n,
                                 [](float x) { return Op::apply(x); });
    }
    if (s[0] == sizeof(O) && s[1] == sizeof(T)) {
      O* __restrict o = reinterpret_cast<O*>(p[0]);
      const T* __restrict a = reinterpret_cast<const T*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = O(Op::apply(C(a[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) =
            O(Op::apply(C(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
    }
  }, /*in_memory_order=*/true);
}

template <class Op> void unary_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (unary_applicable<Op, compute_t<T>>) unary_typed<Op, T>(call);
    else throw_unsupported("this function", call.in(0).dtype());
  });
}

/// Whether an op of the elementwise table is built per ISA against libmvec
/// (math_kernels.cpp): those that call the math library for real inputs. The others,
/// which call it for complex inputs at most, are built once (unary/binary_kernels.cpp).
constexpr bool built_per_isa(MathLibrary math_library) {
  return math_library == MathLibrary::Yes;
}

/// Table entries: a kernel for the ops of this translation unit's kind (PerIsa: ops built
/// per ISA, or the others), nullptr for the rest.
template <class Op, bool OpPerIsa, bool PerIsa> constexpr KernelFnPtr unary_entry() {
  if constexpr (OpPerIsa == PerIsa) return unary_kernel<Op>;
  else return nullptr;
}

/// Applies Op on the compute type; specialised so that nextafter works on the stored
/// 16-bit type.
template <class Op, class T> struct BinaryApply {
  using C = compute_t<T>;
  static constexpr bool computes_in_float = true;  // specialisations that do not say so
  static auto apply(T a, T b) { return Op::apply(C(a), C(b)); }
};

template <class Op> inline constexpr bool half_blocks_apply =
    requires { BinaryApply<Op, Float16>::computes_in_float; };

template <class Op, class T> void binary_typed(const KernelCall& call) {
  using A = BinaryApply<Op, T>;
  using O = stored_result_t<T, compute_t<T>, decltype(A::apply(std::declval<T>(), std::declval<T>()))>;
  for_each_run<3>({&call.out(), &call.in(0), &call.in(1)},
                  [](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
    constexpr int64_t zo = sizeof(O), z = sizeof(T);
    O* __restrict o = reinterpret_cast<O*>(p[0]);
    const T* __restrict a = reinterpret_cast<const T*>(p[1]);
    const T* __restrict b = reinterpret_cast<const T*>(p[2]);
    if constexpr (std::is_same_v<T, Float16> && half_blocks_apply<Op>) {
      if (s[0] == zo && (s[1] == z || s[1] == 0) && (s[2] == z || s[2] == 0) &&
          (s[1] | s[2]) != 0)
        return binary_half_blocks(o, a, s[1] != 0, b, s[2] != 0, n,
                                  [](float x, float y) { return Op::apply(x, y); });
    }
    if (s[0] == zo && s[1] == z && s[2] == z) {
      for (int64_t i = 0; i < n; ++i) o[i] = O(A::apply(a[i], b[i]));
    } else if (s[0] == zo && s[1] == z && s[2] == 0) {
      const T bv = b[0];
      for (int64_t i = 0; i < n; ++i) o[i] = O(A::apply(a[i], bv));
    } else if (s[0] == zo && s[1] == 0 && s[2] == z) {
      const T av = a[0];
      for (int64_t i = 0; i < n; ++i) o[i] = O(A::apply(av, b[i]));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) =
            O(A::apply(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                       *reinterpret_cast<const T*>(p[2] + i * s[2])));
    }
  }, /*in_memory_order=*/true);
}

template <class Op> void binary_kernel(const KernelCall& call) {
  visit_dtype(call.in(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (binary_applicable<Op, compute_t<T>>) binary_typed<Op, T>(call);
    else throw_unsupported("this function", call.in(0).dtype());
  });
}

template <class Op, bool OpPerIsa, bool PerIsa> constexpr KernelFnPtr binary_entry() {
  if constexpr (OpPerIsa == PerIsa) return binary_kernel<Op>;
  else return nullptr;
}

}  // namespace xrt::cpu::XRT_ISA_NS
