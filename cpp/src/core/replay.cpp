// cpp/src/core/replay.cpp: replayed calls, the dispatcher's shortcut for a call that
// repeats the thread's last call of its op.
//
// Note [Replayed calls]: a loop of tiny ops calls one op on tensors of one layout over and
// over, and every call decided its kernel, then planned its launch (layout, vector width,
// compiled function, grid), to the same result. On the GPU hosts the host time of such an
// op follows the code it runs (Note [Where the host time of a tiny op goes] in
// cpp/src/cuda/host_costs.cpp), so an op whose inputs and output are contiguous and of one
// shape keeps its kernel's replay plan, and a call that repeats it runs the plan.
// - Only kernels that offer a plan (KernelInfo::plan_replay: the elementwise ones; on the
//   CPU the plan is the kernel's loop, which plans its own layout) and only the ops that
//   ask (the unary and binary elementwise functions and operators).
// - The key: the op, the inputs' dtypes, device, shape and C-order strides. Kept with the
//   generation it was decided at, and taken only while that is current (Note [Stale
//   replays]); never kept while an explain log is open or the profiler is on: so every
//   call that would explain or record itself is dispatched as before, and a pin or a newly
//   registered kernel takes effect at once.
// - Only the candidate a decision tries first, not a BestPerformance timing: the kernel
//   any later call of that key would choose (dispatch_keeping_replay in dispatcher.cpp).
// - A plan may decline a call (a view off its vector alignment); the call is dispatched.
// - One plan per op and thread (and per side: CPU or device): a loop over two replayable
//   layouts plans again at each change. A call that cannot be kept (another layout, a
//   plan declined) leaves the entry as it was, for the next call of its key.
// - Scalars (`x + 1.0`: a 0-d CPU tensor; on CUDA a host scalar, Note [Host scalars] in
//   xpuruntime/elementwise.h) are part of the key as such: the call is kept as the kernel
//   saw it, the scalar broadcast over the output, and a later call whose input in that
//   place is a 0-d CPU tensor of the dtype repeats it. A CUDA plan reads the value; a CPU
//   loop gets the scalar broadcast again. A plan that declines such a call leaves it to
//   the caller (the scalar is not broadcast there).
// - In-place operators (`a += b`) repeat an entry too, writing into a: their key is the
//   same call with a for its output.
#include "core/replay.h"

#include <atomic>
#include <vector>

#include "core/per_thread.h"

namespace xrt {

struct ReplayEntry {
  int num_inputs = 0;
  DType in[3] = {};
  DType out = DType::Bool;
  unsigned host = 0;  // inputs that are 0-d CPU scalars, broadcast (bit i: input i)
  Device device;
  Dims shape;
  Dims strides;  // C order: the inputs' and the output's
  int64_t out_nbytes = 0;
  uint64_t generation = 0;         // Note [Stale replays]
  uint64_t thread_generation = 0;
  KernelRef kernel;  // keeps what the plan points into
  ReplayPlan plan;
};

namespace {

struct Replays {
  std::vector<ReplayEntry> entries;  // by OpId, CPU and device calls apart (slot())
  uint64_t taken = 0;                // calls that ran their entry's plan (tests)
  uint64_t generation = 0;           // the thread's own (Note [Stale replays])
};
Replays& replays() { return PerThread<Replays>::get(); }

// Note [Stale replays]: a kept plan holds while nothing its decision read has changed: the
// current policy (the global one, the thread's scoped ones, a change to either), the
// registry, the profiler's mode and the thread's explain logs. Reading each of them on
// every call cost a replay about 60 host instructions and 10 lines of code fetched again
// (callgrind, CUDA `a + b`), so the changes count instead: each calls replays_stale() (a
// change every thread sees) or thread_replays_stale() (the calling thread's own) after it
// is made, and a plan is kept with the two generations read before its decision, and
// taken only while both are current.
// - After, not before: a decision that read the old state was made at the old generation.
// - Conservative: a change to a policy no thread uses also makes every plan stale; the
//   next call of each key plans again.
std::atomic<uint64_t> stale_generation{1};

// The strides of a contiguous tensor of t's shape, in C order (not merely contiguous: a
// size-1 axis may carry any stride there).
bool c_order(const Tensor& t) {
  int64_t step = 1;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    if (t.strides()[d] != step) return false;
    step *= t.shape()[d];
  }
  return true;
}

// A host scalar as the kernel sees it: one value broadcast over out (every stride zero).
bool is_broadcast_value(const Tensor& t, const Tensor& out) {
  if (!(t.shape() == out.shape())) return false;
  for (int d = 0; d < t.ndim(); ++d)
    if (t.strides()[d] != 0) return false;
  return true;
}

// A CPU call and a device call of an op keep their entries apart, so that a loop of both
// (a device result checked against the CPU's) replays each. A call with an input on a
// device is a device call (an input on the CPU beside it is a host scalar).
size_t slot(OpId op, bool on_device) { return size_t{op} * 2 + (on_device ? 1 : 0); }

}  // namespace

void replays_stale() { stale_generation.fetch_add(1, std::memory_order_acq_rel); }
void thread_replays_stale() { ++replays().generation; }
uint64_t replay_generation() { return stale_generation.load(std::memory_order_acquire); }

void keep_replay(OpId op, const KernelCall& call, const KernelRef& kernel, uint64_t generation) {
  if (call.num_outputs != 1 || call.num_inputs < 1 || call.num_inputs > 3) return;
  const Tensor& out = call.out();
  if (out.byte_offset() != 0 || !c_order(out)) return;
  unsigned host = 0;
  for (int i = 0; i < call.num_inputs; ++i) {
    const Tensor& t = call.in(i);
    // A scalar: on the CPU, broadcast (a 0-d input of a 0-d CPU call is simply laid out
    // as its output).
    if (t.device().is_cpu() && is_broadcast_value(t, out) &&
        (t.device() != out.device() || out.ndim() > 0)) {
      host |= 1u << i;
      continue;
    }
    if (t.device() != out.device() || !(t.shape() == out.shape()) ||
        !(t.strides() == out.strides()))
      return;
  }
  // Note: an input beside the scalars gives the output its shape; a call of scalars alone
  // (a unary op of a 0-d tensor, an empty input of zero strides) is laid out as its output
  // or not kept.
  if (host == (1u << call.num_inputs) - 1) return;
  ReplayPlan plan;
  if (!kernel->plan_replay(call, plan)) return;
  Replays& state = replays();
  size_t at = slot(op, !out.device().is_cpu());
  if (at >= state.entries.size()) state.entries.resize(at + 1);
  ReplayEntry& r = state.entries[at];
  r.num_inputs = call.num_inputs;
  r.host = host;
  for (int i = 0; i < call.num_inputs; ++i) r.in[i] = call.in(i).dtype();
  r.out = out.dtype();
  r.device = out.device();
  r.shape = out.shape();
  r.strides = out.strides();
  r.out_nbytes = out.numel() * static_cast<int64_t>(out.itemsize());
  r.generation = generation;
  r.thread_generation = state.generation;
  r.kernel = kernel;
  r.plan = plan;
}

const ReplayEntry* find_replay(OpId op, const Tensor* const* inputs, int num_inputs) {
  Replays& state = replays();
  bool on_device = false;
  for (int i = 0; i < num_inputs; ++i) on_device |= !inputs[i]->device().is_cpu();
  size_t at = slot(op, on_device);
  if (at >= state.entries.size()) return nullptr;
  const ReplayEntry& r = state.entries[at];
  if (!r.plan.run || r.num_inputs != num_inputs) return nullptr;
  for (int i = 0; i < num_inputs; ++i) {
    const Tensor& t = *inputs[i];
    if (t.dtype() != r.in[i]) return nullptr;
    if (r.host >> i & 1u) {
      if (t.ndim() != 0 || !t.device().is_cpu()) return nullptr;
      continue;
    }
    if (t.device() != r.device || !(t.shape() == r.shape) || !(t.strides() == r.strides))
      return nullptr;
  }
  if (r.generation != stale_generation.load(std::memory_order_relaxed) ||
      r.thread_generation != state.generation)
    return nullptr;
  ++state.taken;  // uncounted again where the plan declines the call (the rare path)
  return &r;
}

namespace {

// A CPU loop reads a scalar as the kept call passed it: broadcast over the output.
[[gnu::noinline]] bool run_broadcasting(const ReplayEntry& entry, const Tensor* const* inputs,
                                        int num_inputs, Tensor& out) {
  Tensor held[3];
  const Tensor* args[3] = {};
  for (int i = 0; i < num_inputs; ++i) {
    args[i] = inputs[i];
    if (entry.host >> i & 1u) {
      held[i] = inputs[i]->broadcast_to(entry.shape);
      args[i] = &held[i];
    }
  }
  KernelCall call{args, num_inputs, &out, 1, nullptr};
  return entry.plan.run(entry.plan, call);
}

bool run_plan(const ReplayEntry& entry, const Tensor* const* inputs, int num_inputs,
              Tensor& out) {
  if (entry.host && entry.device.is_cpu()) return run_broadcasting(entry, inputs, num_inputs, out);
  KernelCall call{inputs, num_inputs, &out, 1, nullptr};  // a device plan reads 0-d scalars
  return entry.plan.run(entry.plan, call);
}

}  // namespace

Tensor replay(const ReplayEntry& entry, OpId op, const Tensor* const* inputs, int num_inputs) {
  Tensor out(Storage::allocate(static_cast<size_t>(entry.out_nbytes), entry.device),
             entry.shape, entry.strides, entry.out);
  if (!run_plan(entry, inputs, num_inputs, out)) [[unlikely]] {
    --replays().taken;
    if (entry.host) {
      out = Tensor();  // the caller broadcasts its scalars
    } else {
      KernelCall call{inputs, num_inputs, &out, 1, nullptr};
      dispatch(op, call);
    }
  }
  return out;  // Note: one named result (a second would cost a move)
}

bool replay_into(const ReplayEntry& entry, const Tensor* const* inputs, int num_inputs,
                 Tensor& out) {
  if (out.dtype() == entry.out && run_plan(entry, inputs, num_inputs, out)) return true;
  --replays().taken;
  return false;
}

uint64_t replayed_calls() { return replays().taken; }

}  // namespace xrt
