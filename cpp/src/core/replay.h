// cpp/src/core/replay.h: what the dispatcher tells the replays (Note [Replayed calls] in
// core/replay.cpp).
#pragma once
#include <cstdint>

#include "xpuruntime/dispatcher.h"

namespace xrt {

/// Keeps kernel's replay plan for a call it has just run, decided at generation (read by
/// replay_generation() before the decision), when the call is laid out to be replayed
/// (contiguous, one shape, one device; a 0-d CPU scalar broadcast over the output);
/// otherwise the op's entry stays as it was.
void keep_replay(OpId op, const KernelCall& call, const KernelRef& kernel, uint64_t generation);

/// Note [Stale replays] (core/replay.cpp): what a decision reads calls these after it
/// changes. replays_stale(): a change every thread sees (a policy, the registry, the
/// profiler's mode); thread_replays_stale(): the calling thread's own (its scoped policies,
/// its explain logs).
void replays_stale();
void thread_replays_stale();
uint64_t replay_generation();

}  // namespace xrt
