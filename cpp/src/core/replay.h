// cpp/src/core/replay.h: what the dispatcher tells the replays (Note [Replayed calls] in
// core/replay.cpp).
#pragma once
#include <cstdint>

#include "xpuruntime/dispatcher.h"

namespace xrt {

/// Keeps kernel's replay plan for a call it has just run, decided under policy_version and
/// registry_epoch, when the call is laid out to be replayed (contiguous, one shape, one
/// device; a 0-d CPU scalar broadcast over the output); otherwise the op's entry stays as
/// it was.
void keep_replay(OpId op, const KernelCall& call, const KernelRef& kernel,
                 uint64_t policy_version, uint64_t registry_epoch);

}  // namespace xrt
