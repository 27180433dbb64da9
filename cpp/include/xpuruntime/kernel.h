// cpp/include/xpuruntime/kernel.h: what a kernel receives. Op definitions (core/ops.cpp)
// check dtypes and shapes and allocate the outputs; kernels only compute.
#pragma once
#include <functional>
#include <string>

#include "xpuruntime/scalar.h"
#include "xpuruntime/tensor.h"

namespace xrt {

/// Op-specific arguments that are not tensors.
struct OpAttrs {
  Dims axes;              ///< reductions: the axes to reduce, sorted, non-negative
  bool keepdims = false;  ///< reductions
  Scalar value;           ///< fill: the value; arange: start
  Scalar step;            ///< arange: the step
};

/// One call of an op: inputs already broadcast/cast as the op requires, outputs allocated.
/// Inputs are passed by pointer so that an op hands its operands over without copying them.
struct KernelCall {
  const Tensor* const* inputs = nullptr;
  int num_inputs = 0;
  Tensor* outputs = nullptr;
  int num_outputs = 0;
  const OpAttrs* attrs = nullptr;

  const Tensor& in(int i) const { return *inputs[i]; }
  Tensor& out(int i = 0) const { return outputs[i]; }
};

/// The dtypes of a call, inputs then outputs; at most 4 take part in the dispatch key.
struct DTypeSignature {
  static constexpr int kMax = 4;
  int count = 0;
  DType dtypes[kMax] = {};
  static DTypeSignature of(const KernelCall& call);
  std::string str() const;  ///< "float32, float32 -> float32"
  int num_inputs = 0;
};

using KernelFn = std::function<void(const KernelCall&)>;
using DTypePredicate = std::function<bool(const DTypeSignature&)>;
using CallPredicate = std::function<bool(const KernelCall&)>;

/// How a kernel runs again a call laid out as one it has just run (Note [Replayed calls] in
/// core/replay.cpp): `run` with the kernel's own `data` (a compiled function, launch
/// dimensions). `run` returns false, having done nothing, for a call it cannot take (data
/// misaligned for its vector loads); the caller then dispatches it.
struct ReplayPlan {
  using Run = bool (*)(const ReplayPlan& plan, const KernelCall& call);
  Run run = nullptr;
  alignas(16) unsigned char data[64] = {};

  template <class T>
  T& as() {
    static_assert(sizeof(T) <= sizeof data && alignof(T) <= 16);
    return *reinterpret_cast<T*>(data);
  }
  template <class T>
  const T& as() const {
    static_assert(sizeof(T) <= sizeof data && alignof(T) <= 16);
    return *reinterpret_cast<const T*>(data);
  }
};
/// Fills a plan for a call the kernel has just run, where it can; false where it cannot.
/// The call's inputs and output are contiguous, of one shape, on one device; except
/// scalars: inputs on the CPU that are one value broadcast over the output (every stride
/// zero), which replayed calls pass broadcast again to a CPU plan and as 0-d tensors to a
/// device plan.
using ReplayPlanner = std::function<bool(const KernelCall&, ReplayPlan&)>;

/// A registered implementation of an op on one device type.
struct KernelInfo {
  std::string op;
  std::string name;          ///< unique per (op, device), e.g. "openblas"
  DeviceType device = DeviceType::CPU;
  int priority = 0;          ///< FirstSupported tries higher priorities first
  bool builtin = true;
  DTypePredicate supports;   ///< decided once per dtype signature and cached; empty = all
  CallPredicate accepts;     ///< checked on every call (shapes, strides); empty = all
  KernelFn run;
  std::string description;
  ReplayPlanner plan_replay;  ///< optional (Note [Replayed calls])
};

}  // namespace xrt
