// cpp/src/cuda/elementwise_kernel.cpp: the kernels of one elementwise op on CUDA, generated
// from the device templates of cpp/kernels/xrt/elementwise.cuh and compiled by NVRTC on
// first use.
//
// Note [Elementwise launches]: a call's operands (output first; inputs already broadcast and
// cast by the op definition) are classified into a layout:
//  - dense: one contiguous run each, where an input may also be a single broadcast value
//    (a Python scalar, a 0-d array): vectorised loads of 16 bytes where every run is
//    aligned for them, the grid looping over the array;
//  - strided: anything else, over the dimensions left after dropping size-1 ones and merging
//    those contiguous for every operand (as the CPU's loops do), 32-bit indexing where every
//    offset fits.
// Each (op, dtype, layout) is its own small source and kernel. Its CUfunction is cached in a
// slot of a per-op table indexed by device, dtype and layout, so a call after the first
// builds no string and hashes nothing: it classifies, looks up, fills the arguments on the
// stack and launches.
#include "cuda/elementwise_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/host/memory_order.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda::elementwise {
namespace {

// Note: launch constants from benchmarks/sweep_cuda_elementwise_launch.py on an H100 (float32
// add of 2**28): a grid that covers the array (no grid-stride cap) beat every capped grid by
// 3-5%; 256 or 512 threads and 1, 2 or 4 vectors per thread were within 0.5% of each other.
// One vector per thread makes the smallest kernel, which is what counts for tiny arrays: in a
// CUDA graph of 100 adds of 16 floats (H200), 0.97 us a kernel against 1.03 with two, and
// 1.00 against 1.10 with a host scalar (Note [Grid-stride loops stay rolled]).
constexpr unsigned kBlock = 256;       // threads per block (the kernels' __launch_bounds__)
constexpr int kUnroll = 1;             // vectors per thread and pass (light ops)
constexpr int64_t kMaxBlocks = (int64_t(1) << 31) - 1;  // grid x limit; kernels loop beyond
constexpr int kMaxArgs = 4;            // output and up to three inputs

/// The values of host scalars, as the kernels' HostValues (cpp/kernels/xrt/elementwise.cuh).
struct HostValues {
  alignas(16) uint64_t bits[3][2];
};

// The stored type of each dtype in the device code (cpp/kernels/xrt/real_math.cuh).
const char* device_type(DType d) {
  static const char* const names[kNumDTypes] = {
      "bool", "xrt::ew::i8", "xrt::ew::i16", "xrt::ew::i32", "xrt::ew::i64", "xrt::ew::u8",
      "xrt::ew::u16", "xrt::ew::u32", "xrt::ew::u64", "xrt::ew::Float16", "xrt::ew::BFloat16",
      "float", "double", "xrt::ew::Complex<float>", "xrt::ew::Complex<double>"};
  return names[static_cast<int>(d)];
}

// where copies bytes: one kernel per item size.
const char* bytes_type(size_t itemsize) {
  switch (itemsize) {
    case 1: return "xrt::ew::u8";
    case 2: return "xrt::ew::u16";
    case 4: return "xrt::ew::u32";
    case 8: return "xrt::ew::u64";
    default: return "xrt::ew::Complex<double>";
  }
}

size_t result_itemsize(const ElementwiseInfo& info, DType input) {
  switch (info.result) {
    case ResultKind::Bool: return 1;
    case ResultKind::RealPart: return itemsize(input) / (is_complex(input) ? 2 : 1);
    case ResultKind::Same: break;
  }
  return itemsize(input);
}

}  // namespace

// The operands of a call, collapsed. Byte strides; output first.
struct Plan {
  int nargs = 0;
  int ndim = 0;
  int64_t numel = 1;
  char* ptr[kMaxArgs] = {};
  int64_t item[kMaxArgs] = {};
  int64_t size[64];
  int64_t stride[kMaxArgs][64];
};

namespace {

// In the output's memory order: an elementwise map may take its elements in any order, and
// a result laid out as its inputs (Note [Result layout]) then collapses to one dense run.
void collapse(Plan& p, const Tensor* const* operands) {
  const Dims& shape = operands[0]->shape();
  int order[64];
  host::memory_order(*operands[0], true, order);
  for (int i = 0; i < shape.size(); ++i) {
    const int d = order[i];
    int64_t extent = shape[d];
    p.numel *= extent;
    if (extent == 1) continue;
    bool merge = p.ndim > 0;
    for (int k = 0; k < p.nargs && merge; ++k)
      merge = p.stride[k][p.ndim - 1] == operands[k]->strides()[d] * p.item[k] * extent;
    if (merge) {
      p.size[p.ndim - 1] *= extent;
      for (int k = 0; k < p.nargs; ++k)
        p.stride[k][p.ndim - 1] = operands[k]->strides()[d] * p.item[k];
    } else {
      p.size[p.ndim] = extent;
      for (int k = 0; k < p.nargs; ++k) p.stride[k][p.ndim] = operands[k]->strides()[d] * p.item[k];
      ++p.ndim;
    }
  }
  if (p.ndim == 0) {  // 0-d, or all sizes 1: one element
    p.size[0] = 1;
    for (int k = 0; k < p.nargs; ++k) p.stride[k][0] = 0;
    p.ndim = 1;
  }
}

unsigned blocks_for(int64_t work, int64_t per_block) {
  int64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, kMaxBlocks)));
}

// Note: a call that needs less than one block of work gets only the warps it uses (the
// kernels step by blockDim.x): a 16-element op runs one warp, not eight, which a graph of
// tiny ops replays measurably faster.
unsigned threads_for(int64_t steps, int64_t unroll) {
  int64_t per_thread = (steps + unroll - 1) / unroll;
  if (per_thread >= kBlock) return kBlock;
  return static_cast<unsigned>(std::max<int64_t>(32, (per_thread + 31) / 32 * 32));
}

// The dense kernels' launch: its grid for n elements loaded `vector` at a time, `unroll`
// vectors a thread, and its arguments (DenseArgs<4> of cpp/kernels/xrt/elementwise.cuh).
struct DenseLaunch {
  unsigned blocks, threads;

  DenseLaunch(int64_t n, int vector, int unroll)
      : blocks(blocks_for(n / vector, int64_t(kBlock) * unroll)),
        threads(threads_for(n / vector, unroll)) {}

  void operator()(CUfunction fn, char* const* ptr, int64_t n, const HostValues& values,
                  CUstream stream) const {
    struct {
      char* ptr[kMaxArgs];
      int64_t n;
      HostValues values;
    } args = {{ptr[0], ptr[1], ptr[2], ptr[3]}, n, values};
    void* params[] = {&args};
    launch(fn, Dim3{blocks}, Dim3{threads}, 0, stream, params);
  }
};

}  // namespace

void ElementwiseKernel::run(const KernelCall& call) {
  const Tensor& out = call.out();
  const int64_t n = out.numel();
  if (n == 0) return;
  const int nargs = 1 + static_cast<int>(spec_.family);
  const Tensor* operands[kMaxArgs] = {&out, nullptr, nullptr, nullptr};
  for (int k = 1; k < nargs; ++k) operands[k] = &call.in(k - 1);
  const int device = out.device().index;
  activate(device);
  DType dtype = spec_.family == Family::Where ? call.in(1).dtype() : call.in(0).dtype();

  Plan plan;
  plan.nargs = nargs;
  HostValues values{};
  unsigned host = 0;  // inputs that are host scalars: their value goes in the arguments
  for (int k = 0; k < nargs; ++k) {
    plan.ptr[k] = operands[k]->data();
    plan.item[k] = static_cast<int64_t>(operands[k]->itemsize());
    if (k > 0 && operands[k]->device().is_cpu()) {  // Note [Host scalars]: 0-d, broadcast
      std::memcpy(values.bits[k - 1], operands[k]->data(), operands[k]->itemsize());
      plan.ptr[k] = nullptr;
      host |= 1u << (k - 1);
    }
  }
  Layout layout;
  // An input of the contiguous output's shape and strides is contiguous too (one that is
  // contiguous with other strides on size-1 axes takes the collapse below, to the same
  // layout).
  bool all_dense = host == 0 && out.is_contiguous();
  for (int k = 1; k < nargs && all_dense; ++k)
    all_dense = operands[k]->shape() == out.shape() && operands[k]->strides() == out.strides();
  if (!all_dense) {
    collapse(plan, operands);
    layout = classify(plan);
    if (!layout.dense) try_rows(dtype, plan, layout);
  }
  if (layout.dense) {
    layout.scalars |= host;  // a one-element call reads them as scalars too
    layout.vector = vector_elements(dtype, plan, layout.scalars);
  }

  CUfunction fn = function(device, dtype, layout);
  CUstream stream = current_stream(device);
  if (layout.dense) {
    DenseLaunch(n, layout.vector, unroll_of(dtype))(fn, plan.ptr, n, values, stream);
  } else {
    // StridedArgs<ND>: ptr[4], size[ND], stride[4][ND], n (all 8-byte fields), then the
    // host values at the next 16-byte boundary.
    alignas(16) int64_t args[kMaxArgs + 64 + kMaxArgs * 64 + 2 + sizeof(HostValues) / 8];
    int nd = plan.ndim, at = 0;
    for (int k = 0; k < kMaxArgs; ++k) args[at++] = reinterpret_cast<int64_t>(plan.ptr[k]);
    for (int d = 0; d < nd; ++d) args[at++] = plan.size[d];
    for (int k = 0; k < kMaxArgs; ++k)
      for (int d = 0; d < nd; ++d) args[at++] = k < nargs ? plan.stride[k][d] : 0;
    args[at++] = n;
    at += at % 2;
    std::memcpy(&args[at], &values, sizeof values);
    void* params[] = {args};
    int64_t work = layout.rows ? n / layout.vector : n;
    launch(fn, Dim3{blocks_for(work, kBlock)}, Dim3{threads_for(work, 1)}, 0, stream, params);
  }
}

namespace {

// A dense call of one shape, replayed (Note [Replayed calls] in core/replay.cpp): the
// compiled function and launch of run()'s dense branch, for new pointers and host values.
struct DenseReplay {
  CUfunction fn;
  int64_t n;
  DenseLaunch launch;
  int device, nargs;
  uint8_t misaligned[kMaxArgs];  // address bits that must be clear for the vector loads
  uint8_t item[kMaxArgs];        // item sizes (a host scalar's value is copied)
  unsigned host;                 // inputs that are host scalars (bit k - 1: operand k)
};

bool replay_dense(const ReplayPlan& plan, const KernelCall& call) {
  const DenseReplay& r = plan.as<DenseReplay>();
  char* ptr[kMaxArgs] = {call.out().data(), nullptr, nullptr, nullptr};
  uintptr_t bits = reinterpret_cast<uintptr_t>(ptr[0]) & r.misaligned[0];
  HostValues values{};
  for (int k = 1; k < r.nargs; ++k) {
    const Tensor& t = call.in(k - 1);
    if (r.host >> (k - 1) & 1u) {  // a 0-d CPU tensor: its value goes in the arguments
      std::memcpy(values.bits[k - 1], t.data(), r.item[k]);
      continue;
    }
    ptr[k] = t.data();
    bits |= reinterpret_cast<uintptr_t>(ptr[k]) & r.misaligned[k];
  }
  if (bits) return false;  // a view off the vector alignment: dispatched as usual
  activate(r.device);
  r.launch(r.fn, ptr, r.n, values, current_stream(r.device));
  return true;
}

}  // namespace

// The caller has checked the layout: inputs and output contiguous, of one shape, on one
// device, but for host scalars (ReplayPlanner).
bool ElementwiseKernel::plan_replay(const KernelCall& call, ReplayPlan& replay) {
  const Tensor& out = call.out();
  const int nargs = 1 + static_cast<int>(spec_.family);
  if (call.num_inputs != nargs - 1 || out.numel() == 0) return false;
  Plan plan;
  plan.nargs = nargs;
  unsigned host = 0;
  for (int k = 0; k < nargs; ++k) {
    const Tensor& t = k == 0 ? out : call.in(k - 1);
    plan.ptr[k] = t.data();
    plan.item[k] = static_cast<int64_t>(t.itemsize());
    if (k > 0 && t.device().is_cpu()) host |= 1u << (k - 1);
  }
  DType dtype = spec_.family == Family::Where ? call.in(1).dtype() : call.in(0).dtype();
  Layout layout;  // dense, the host scalars read as scalars: what run() chose for this call
  layout.scalars = host;
  layout.vector = vector_elements(dtype, plan, host);
  // Only a call with the full vector width: a plan made on a view off the alignment would
  // keep later aligned calls on scalar loads.
  if (layout.vector != max_vector(dtype)) return false;
  const int device = out.device().index;
  const int64_t n = out.numel();
  replay.as<DenseReplay>() = {function(device, dtype, layout), n,
                              DenseLaunch(n, layout.vector, unroll_of(dtype)), device, nargs,
                              {}, {}, host};
  DenseReplay& r = replay.as<DenseReplay>();
  for (int k = 0; k < nargs; ++k) {
    r.misaligned[k] = static_cast<uint8_t>(plan.item[k] * layout.vector - 1);
    r.item[k] = static_cast<uint8_t>(plan.item[k]);
  }
  replay.run = &replay_dense;
  return true;
}

KernelSource ElementwiseKernel::source(DType dtype, const Layout& layout,
                                       std::string& name) const {
  std::string fn;
  std::string type_name(dtype_info(dtype).name);
  switch (spec_.family) {
    case Family::Unary:
      fn = std::string("xrt::ew::UnaryFn<xrt::ew::op::") + spec_.name + ", " +
           device_type(dtype) + ">";
      break;
    case Family::Binary:
      fn = std::string("xrt::ew::BinaryFn<xrt::ew::op::") + spec_.name + ", " +
           device_type(dtype) + ">";
      break;
    case Family::Where:
      fn = std::string("xrt::ew::WhereFn<") + bytes_type(itemsize(dtype)) + ">";
      type_name = "b" + std::to_string(itemsize(dtype));
      break;
  }
  std::string body, param;
  name = std::string("xrt_ew_") + spec_.name + "_" + type_name;
  if (layout.dense) {
    int unroll = unroll_of(dtype);
    name += "_d" + std::to_string(layout.vector) + "u" + std::to_string(unroll) + "s" +
            std::to_string(layout.scalars);
    param = "xrt::ew::DenseArgs<4> a";
    body = "xrt::ew::dense_kernel<" + fn + ", " + std::to_string(layout.vector) + ", " +
           std::to_string(unroll) + ", " + std::to_string(layout.scalars) + "u>(a);";
  } else if (layout.rows) {
    name += "_r" + std::to_string(layout.vector) + "s" + std::to_string(layout.scalars) + "g" +
            std::to_string(layout.gathers) + (layout.index32 ? "i32" : "i64");
    param = "xrt::ew::StridedArgs<2> a";
    body = "xrt::ew::rows_kernel<" + fn + ", " + std::to_string(layout.vector) + ", " +
           std::to_string(layout.scalars) + "u, " + std::to_string(layout.gathers) + "u, " +
           (layout.index32 ? "xrt::ew::u32" : "xrt::ew::u64") + ">(a);";
  } else {
    std::string nd = std::to_string(layout.ndim);
    name += "_s" + nd + (layout.index32 ? "i32" : "i64");
    param = "xrt::ew::StridedArgs<" + nd + "> a";
    body = "xrt::ew::strided_kernel<" + fn + ", " + nd + ", " +
           (layout.index32 ? "xrt::ew::u32" : "xrt::ew::u64") + ">(a);";
  }
  KernelSource s;
  s.source = "#include \"xrt/elementwise.cuh\"\nextern \"C\" __global__ void __launch_bounds__(" +
             std::to_string(kBlock) + ") " + name + "(" + param + ") {\n  " + body + "\n}\n";
  s.options = {"--fmad=false"};
  return s;
}

int ElementwiseKernel::max_vector(DType dtype) const {
  size_t widest = itemsize(dtype);
  if (spec_.info) widest = std::max(widest, result_itemsize(*spec_.info, dtype));
  if (spec_.math && is_complex(dtype)) return 1;
  return widest >= 16 ? 1 : static_cast<int>(16 / widest);
}

int ElementwiseKernel::unroll_of(DType dtype) const {
  return spec_.math || is_complex(dtype) ? 1 : kUnroll;
}

Layout ElementwiseKernel::classify(const Plan& p) {
  Layout l;
  bool dense = p.ndim == 1;
  if (dense && p.size[0] > 1) {
    dense = p.stride[0][0] == p.item[0];
    for (int k = 1; k < p.nargs && dense; ++k) {
      if (p.stride[k][0] == 0) l.scalars |= 1u << (k - 1);
      else dense = p.stride[k][0] == p.item[k];
    }
  }
  if (dense) return l;
  l = Layout{};
  l.dense = false;
  l.ndim = p.ndim;
  constexpr int64_t limit = std::numeric_limits<int32_t>::max();
  l.index32 = p.numel <= limit;
  for (int k = 0; k < p.nargs && l.index32; ++k) {
    int64_t reach = 0;
    for (int d = 0; d < p.ndim; ++d) reach += std::abs(p.stride[k][d]) * (p.size[d] - 1);
    l.index32 = reach <= limit;
  }
  return l;
}

// Note [Rows layout]: a row vector broadcast over a matrix (a bias added to every row, or a
// column of per-row values) collapses to two dimensions whose inner one is contiguous, or of
// stride zero, for every operand. The strided kernel would move one element per thread with
// a division per dimension; rows_kernel moves a 16-byte vector of a row per thread with one
// division. It applies when the row length is a multiple of the vector and the output's
// start and row stride are aligned for it. An input that steps through its row a few
// elements at a time (`m[:, ::2].T + 1.0`, a flip), or is contiguous but not aligned for
// vectors, is gathered: its vector's elements are loaded one by one, which on an H100 still
// beats the strided kernel's single element per thread. A 1-D plan is one row. A wider step
// stays strided: a thread's loads would then touch one sector each.
void ElementwiseKernel::try_rows(DType dtype, Plan& p, Layout& layout) const {
  constexpr int64_t kMaxStep = 4;  // elements between a gathered input's loads
  const bool one_row = p.ndim == 1;
  const int inner = one_row ? 0 : 1;
  if (p.ndim > 2 || p.size[inner] < 2) return;
  int v = max_vector(dtype);
  const int64_t out_bytes = p.item[0] * v;
  if (v == 1 || p.size[inner] % v != 0 || p.stride[0][inner] != p.item[0] ||
      (!one_row && p.stride[0][0] % out_bytes != 0) ||
      reinterpret_cast<uintptr_t>(p.ptr[0]) % static_cast<uintptr_t>(out_bytes) != 0)
    return;
  unsigned scalars = 0, gathers = 0;
  for (int k = 1; k < p.nargs; ++k) {
    const int64_t step = p.stride[k][inner], bytes = p.item[k] * v;
    if (step == 0) {
      scalars |= 1u << (k - 1);
    } else if (step != p.item[k] || (!one_row && p.stride[k][0] % bytes != 0) ||
               reinterpret_cast<uintptr_t>(p.ptr[k]) % static_cast<uintptr_t>(bytes) != 0) {
      if (std::abs(step) > kMaxStep * p.item[k]) return;
      gathers |= 1u << (k - 1);
    }
  }
  if (one_row) {
    p.ndim = 2;
    p.size[1] = p.size[0];
    p.size[0] = 1;
    for (int k = 0; k < p.nargs; ++k) {
      p.stride[k][1] = p.stride[k][0];
      p.stride[k][0] = 0;
    }
  }
  layout.rows = true;
  layout.vector = v;
  layout.scalars = scalars;
  layout.gathers = gathers;
}

// The vector width the dense kernel may use: every run must be aligned for it.
int ElementwiseKernel::vector_elements(DType dtype, const Plan& p, unsigned scalars) const {
  int v = max_vector(dtype);
  if (v == 1) return 1;
  for (int k = 0; k < p.nargs; ++k) {
    if (k > 0 && (scalars >> (k - 1) & 1u)) continue;
    if (reinterpret_cast<uintptr_t>(p.ptr[k]) % (static_cast<uintptr_t>(p.item[k]) * v) != 0)
      return 1;
  }
  return v;
}

CUfunction ElementwiseKernel::function(int device, DType dtype, const Layout& layout) {
  int slot = layout.slot();
  std::atomic<CUfunction>* cell = nullptr;
  if (slot >= 0) {
    Slots* slots = devices_[device].load(std::memory_order_acquire);
    if (!slots) slots = create_slots(device);
    cell = &slots->fn[static_cast<int>(dtype)][slot];
    if (CUfunction f = cell->load(std::memory_order_acquire)) return f;
  }
  std::string name;
  KernelSource s = source(dtype, layout, name);
  CUfunction f = jit_function(device, s, name);
  if (cell) cell->store(f, std::memory_order_release);
  return f;
}

ElementwiseKernel::Slots* ElementwiseKernel::create_slots(int device) {
  std::lock_guard lock(mutex_);
  Slots* slots = devices_[device].load(std::memory_order_acquire);
  if (!slots) {
    slots = new Slots;  // lives as long as the process, like the modules it points into
    devices_[device].store(slots, std::memory_order_release);
  }
  return slots;
}

}  // namespace xrt::cuda::elementwise
