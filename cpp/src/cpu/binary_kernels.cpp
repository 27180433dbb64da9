// cpp/src/cpu/binary_kernels.cpp: binary elementwise ops from one table of scalar functions.
// Inputs arrive broadcast and cast to the output dtype; the contiguous and
// scalar-broadcast runs get loops the compiler vectorises.
#include "cpu/dtype_dispatch.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "xpuruntime/scalar.h"

namespace xrt::cpu {
namespace {

using detail::compute_t;

struct Add {
  template <class C> static C apply(C a, C b) { return a + b; }
};

template <class Op, class T> void binary_typed(const KernelCall& call) {
  using C = compute_t<T>;
  for_each_run<3>({&call.out(), &call.in(0), &call.in(1)},
                  [](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
    constexpr int64_t z = sizeof(T);
    T* __restrict o = reinterpret_cast<T*>(p[0]);
    const T* __restrict a = reinterpret_cast<const T*>(p[1]);
    const T* __restrict b = reinterpret_cast<const T*>(p[2]);
    if (s[0] == z && s[1] == z && s[2] == z) {
      for (int64_t i = 0; i < n; ++i) o[i] = T(Op::apply(C(a[i]), C(b[i])));
    } else if (s[0] == z && s[1] == z && s[2] == 0) {
      const C bv = C(b[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = T(Op::apply(C(a[i]), bv));
    } else if (s[0] == z && s[1] == 0 && s[2] == z) {
      const C av = C(a[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = T(Op::apply(av, C(b[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            T(Op::apply(C(*reinterpret_cast<const T*>(p[1] + i * s[1])),
                        C(*reinterpret_cast<const T*>(p[2] + i * s[2]))));
    }
  });
}

template <class Op> void binary_kernel(const KernelCall& call) {
  visit_dtype(call.out().dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) throw TypeError("boolean arithmetic is not defined");
    else binary_typed<Op, T>(call);
  });
}

bool numeric(DType d) { return is_numeric(d); }

}  // namespace

const BinaryOpEntry kBinaryOps[] = {
    {"add", numeric, binary_kernel<Add>},
};
const int kNumBinaryOps = sizeof(kBinaryOps) / sizeof(kBinaryOps[0]);

}  // namespace xrt::cpu
