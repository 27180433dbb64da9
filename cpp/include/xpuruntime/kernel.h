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
};

}  // namespace xrt
