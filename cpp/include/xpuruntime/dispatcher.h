// cpp/include/xpuruntime/dispatcher.h: the one path every op takes to its kernel.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xpuruntime/policy.h"
#include "xpuruntime/registry.h"

namespace xrt {

/// Why a kernel was chosen.
enum class DecisionReason : uint8_t { Pinned, FirstSupported, BestPerformance, Fallback };

/// What the dispatcher decided for one (op, device, dtypes) and why; cached per thread.
struct DecisionRecord {
  std::string op;
  std::string device;
  std::string dtypes;  ///< "float32, float32 -> float32"
  std::string kernel;
  DecisionReason reason;
  std::string detail;  ///< a sentence: the pin, the candidates, the timings
  std::vector<std::string> candidates;
};

/// Looks up (op, device, dtypes, policy version) in a per-thread cache, asks the policy on
/// a miss, runs the chosen kernel. UnsupportedOperationError when nothing (or not the
/// pinned kernel) supports the call.
void dispatch(OpId op, const KernelCall& call);

/// Note [Replayed calls] (core/replay.cpp): dispatch() for an elementwise call whose
/// inputs and output are contiguous and of one shape; keeps the kernel's replay plan, if it
/// offers one, for this thread's next call of op laid out the same.
void dispatch_keeping_replay(OpId op, const KernelCall& call);

/// This thread's last call of an op kept for replay (core/replay.cpp).
struct ReplayEntry;

/// The entry kept for this thread's last call of op when these inputs repeat it (the same
/// dtypes, device, shape and C-order strides; a 0-d CPU tensor where the call had a host
/// scalar), nothing that decides a kernel has changed since (policy, registered kernels),
/// no explain log is open and the profiler is off; nullptr otherwise.
const ReplayEntry* find_replay(OpId op, const Tensor* const* inputs, int num_inputs);

/// Runs a call of op on inputs that find_replay matched to `entry`: a new output, and the
/// kept plan (or dispatch() where the plan declines the call). Where the plan declines a
/// call with host scalars, an undefined Tensor: the caller takes its own path.
Tensor replay(const ReplayEntry& entry, OpId op, const Tensor* const* inputs, int num_inputs);

/// The kept plan run into out (an in-place operator: out is inputs[0]); false, having done
/// nothing, where out's dtype is not the entry's or the plan declines the call.
bool replay_into(const ReplayEntry& entry, const Tensor* const* inputs, int num_inputs,
                 Tensor& out);

/// How many calls have run a kept plan on this thread (tests, benchmarks).
uint64_t replayed_calls();

/// The kernel dispatch() would run, without running it (explain, benchmarks). With
/// `record`, an open explain log gets the decision as if the kernel ran: for callers that
/// run the chosen kernel themselves (the PyTorch adapter, which launches on torch tensors).
KernelRef select_kernel(OpId op, const KernelCall& call, bool record = false);

/// dispatch() for kernels the caller runs itself: chooses as dispatch does, records the
/// decision in an open explain log, and calls body(kernel) under the profiler's op hooks, so
/// a profile times it as an op (xrt.nn.scaled_dot_product_attention's cuDNN call).
void run_selected(OpId op, const KernelCall& call,
                  const std::function<void(const KernelInfo&)>& body);

/// The calling thread's cached decisions.
std::vector<DecisionRecord> cached_decisions();

/// Explain logs: while one is open on a thread, every dispatch on it appends a record.
void push_explain_log();
std::vector<DecisionRecord> pop_explain_log();

/// Mean nanoseconds of one cached decision lookup for this call (benchmarks).
double time_decision_lookup(OpId op, const KernelCall& call, int iterations);
/// Mean nanoseconds of dispatch(op, call) from C++ (benchmarks); hook=false runs the same
/// path without the profiler's test (Note [Profiler cost]), to measure what it adds.
double time_dispatch(OpId op, const KernelCall& call, int iterations, bool hook);

}  // namespace xrt
