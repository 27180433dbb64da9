// cpp/src/cuda/reduce_launch.h: how a CUDA reduction runs (reduce_launch.cpp): a problem
// (the input's kept and reduced boxes, with byte strides), a spec (the reducer of
// cpp/kernels/xrt/reducers.cuh and its parameters) and the launcher that picks a walk and
// launches it, splitting large ones (Note [Deterministic reductions] in reduce_launch.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "cuda/reduce_common.h"
#include "xpuruntime/tensor.h"

namespace xrt::cuda::reduce {

/// Merged dimensions with byte strides (at least one dimension).
struct Box {
  Dims shape, strides;
  int64_t numel = 1;
};

/// One launch's input: the outputs (kept, row-major) and the elements behind each.
struct Problem {
  const char* in;
  int64_t in_size;  ///< bytes per element
  Box kept, reduced;
};

/// What to compute: a reducer of reducers.cuh and its parameters.
struct Spec {
  std::string reducer;   ///< device type, e.g. "xrt::reduce::Sum<float, float>"
  int64_t in_size = 0;   ///< sizeof(In)
  int64_t acc_size = 0;  ///< sizeof(Acc) (checked by the kernel at compile time)
  double scalar = 0;
  const void* aux = nullptr;
  void* aux_out = nullptr;
  int64_t count = 0;     ///< elements behind each output

  Spec partials() const {
    Spec p = *this;
    p.reducer = "xrt::reduce::Partials<" + reducer + " >";
    p.in_size = acc_size;
    return p;
  }
};

enum class Walk { Inner, Outer };

struct Shape {
  Walk walk;
  int kept_ndim, reduced_ndim;
  int vec;    ///< inner: elements per 16-byte load; outer: adjacent outputs per thread
  int group;  ///< inner: 32 or kReduceBlock
};

/// The source of one kernel `name` of the walk `s` over spec's reducer (after an include
/// of xrt/reduce.cuh); the compile-check samples put several in one source.
std::string kernel_body(const std::string& name, const Spec& spec, Shape s);

struct Launcher {
  int device;
  CUstream stream;
  Device where;

  void run(const Spec& spec, const Problem& p, char* out, bool may_split) const;

 private:
  void outer(const Spec& spec, const Problem& p, char* out, bool may_split) const;
  void inner(const Spec& spec, const Problem& p, char* out, bool may_split) const;
  void finish(const Spec& spec, const Tensor& partials, Box kept, Box reduced, char* out) const;
};

/// The launcher for a result on t's device (made current), on its current stream.
Launcher launcher_for(const Tensor& t);

/// x's reduction over `axes` (sorted, non-negative): boxes in memory order unless the
/// reducer needs positions (argmax, argmin), which follow the logical order.
Problem problem_of(const Tensor& x, const Dims& axes, bool positions);

}  // namespace xrt::cuda::reduce
