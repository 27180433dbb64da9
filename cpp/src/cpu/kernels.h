// cpp/src/cpu/kernels.h: the built-in CPU kernels, one family per file, registered by
// register.cpp. Each takes a KernelCall whose outputs the op definition allocated.
#pragma once
#include "xpuruntime/cpu.h"
#include "xpuruntime/kernel.h"
#include "xpuruntime/registry.h"

namespace xrt::cpu {

void copy_kernel(const KernelCall& call);    // out[...] = cast(in[...]), any strides
void fill_kernel(const KernelCall& call);    // out[...] = attrs.value
void arange_kernel(const KernelCall& call);  // out[i] = attrs.value + i * attrs.step
void sum_kernel(const KernelCall& call);     // out = sum of in over attrs.axes (same dtype)

/// Binary elementwise ops, a table: name -> scalar function per dtype category.
struct BinaryOpEntry {
  const char* name;
  bool (*supports)(DType dtype);
  void (*run)(const KernelCall& call);
};
extern const BinaryOpEntry kBinaryOps[];
extern const int kNumBinaryOps;

void register_linalg_kernels(KernelRegistry& registry);  // linalg_kernels.cpp

void matmul_native(const KernelCall& call);
bool matmul_openblas_supports(DType dtype);
void matmul_openblas(const KernelCall& call);

}  // namespace xrt::cpu
