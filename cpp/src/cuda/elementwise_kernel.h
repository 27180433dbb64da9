// cpp/src/cuda/elementwise_kernel.h: the kernels of one elementwise op on CUDA
// (elementwise_kernel.cpp): a call's operands classified into a layout, one small NVRTC
// kernel per (op, dtype, layout), cached in slots and launched (Note [Elementwise launches]).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "cuda/jit.h"
#include "cuda/runtime.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/kernel.h"

namespace xrt::cuda::elementwise {

constexpr int kSlotDims = 8;           // strided kernels of up to 8 dims are cached in slots
constexpr int kSlots = 16 + 2 * kSlotDims + 128;  // dense, strided, rows

enum class Family : uint8_t { Unary = 1, Binary = 2, Where = 3 };

/// One op of the family: its table row and how its kernels are generated.
struct OpSpec {
  const char* name;
  Family family;
  const ElementwiseInfo* info;  ///< the table row (nullptr for where)
  bool math;                    ///< calls the math library: no unrolling, see max_vector
};

/// How one call's operands are laid out; `slot` indexes the per-op function table.
struct Layout {
  bool dense = true;
  bool rows = false;      ///< strided in two dimensions, the inner one vectorised
  int vector = 1;         ///< dense, rows: elements per load
  unsigned scalars = 0;   ///< dense: input k is one value; rows: one value per row
  unsigned gathers = 0;   ///< rows: input k is loaded an element at a time (Note [Rows layout])
  int ndim = 1;           ///< strided: dimensions after collapsing
  bool index32 = true;    ///< strided, rows: every index and byte offset fits in 31 bits

  int slot() const {
    if (dense) return (vector > 1 ? 8 : 0) + static_cast<int>(scalars);
    if (rows)
      return 16 + 2 * kSlotDims + 2 * static_cast<int>(gathers << 3 | scalars) + (index32 ? 1 : 0);
    return ndim <= kSlotDims ? 16 + 2 * (ndim - 1) + (index32 ? 1 : 0) : -1;
  }
};

struct Plan;  // the operands of one call, collapsed (elementwise_kernel.cpp)

/// The kernels of one op: generates, caches and launches them.
class ElementwiseKernel {
 public:
  explicit ElementwiseKernel(OpSpec spec) : spec_(spec) {}

  /// Runs the op on a call's operands, output first (Note [Elementwise launches]).
  void run(const KernelCall& call);

  /// The replay of a dense call this kernel has just run, its kernel compiled (Note
  /// [Replayed calls] in core/replay.cpp); false for a call that does not take the full
  /// vector width (a view off the alignment).
  bool plan_replay(const KernelCall& call, ReplayPlan& plan);

  /// The source of one specialisation, and its kernel's name.
  KernelSource source(DType dtype, const Layout& layout, std::string& name) const;

  const OpSpec& spec() const { return spec_; }

  /// Compiles (or finds) the kernel of one specialisation on device.
  void prepare(int device, DType dtype, const Layout& layout) { function(device, dtype, layout); }

  /// Elements per dense load for dtype (the dense kernel's VEC): 16 bytes of the widest
  /// operand; 1 for the long complex functions, whose copies would only cost compile time.
  int max_vector(DType dtype) const;

 private:
  struct Slots {
    std::atomic<CUfunction> fn[kNumDTypes][kSlots] = {};
  };

  int unroll_of(DType dtype) const;
  static Layout classify(const Plan& p);
  /// The rows layout of a strided plan of one or two dimensions, when it applies (a 1-D plan
  /// becomes one row); plan and layout are unchanged otherwise.
  void try_rows(DType dtype, Plan& p, Layout& layout) const;
  int vector_elements(DType dtype, const Plan& p, unsigned scalars) const;
  CUfunction function(int device, DType dtype, const Layout& layout);
  Slots* create_slots(int device);

  OpSpec spec_;
  std::mutex mutex_;
  std::array<std::atomic<Slots*>, kMaxDevices> devices_{};
};

}  // namespace xrt::cuda::elementwise
