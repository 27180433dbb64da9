// cpp/src/cuda/communicator.h: the state behind an NCCL Communicator (its handle, the
// watchdog, the events it watches) and the join, shared by communicator.cpp (lifetime,
// watchdog, join) and collectives.cpp (the collectives on tensors and groups).
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda/nccl.h"
#include "cuda/runtime.h"

namespace xrt::cuda {

using Clock = std::chrono::steady_clock;

/// One rank's communicator (Note [Communicator lifetime] in communicator.cpp).
struct CommunicatorState {
  ncclComm_t comm = nullptr;
  int rank = 0, world_size = 1, device = 0;
  double timeout_seconds = 0;
  std::string where;  // "rank 1 of 2 on cuda:1", for messages

  std::mutex call_mutex;  // every NCCL call on comm, and its abort
  std::mutex mutex;       // the fields below
  std::string failure;    // why it failed ("" while it works)
  bool closed = false;    // aborted or destroyed
  struct Pending {
    CUevent event;
    Clock::time_point queued;
  };
  std::deque<Pending> pending;
  std::vector<CUevent> spare_events;

  std::thread watchdog;
  std::condition_variable stop_watchdog;
  bool stopping = false;

  Clock::duration timeout() const;
  /// Why it failed ("" while it works).
  std::string reason();
  /// CudaError when the communicator failed or was closed.
  void check_open();
  /// Records why and aborts; call_mutex must be held. The first reason stays.
  void fail_locked(const std::string& why);
  /// Polls an ncclInProgress until NCCL is done (call_mutex held); CudaError on error or
  /// when the deadline passes (the communicator is then aborted).
  void settle(ncclResult_t result, const char* what);
  /// An event behind the work queued so far on stream, for the watchdog.
  void track(CUstream stream);
  /// The watchdog thread's loop (Note [Failing ranks]); stop_watch ends and joins it.
  void watch();
  void stop_watch();
  /// Waits on the host, up to the timeout, for the collectives the events still track;
  /// false when one did not finish in time (a peer is gone) or its event failed.
  bool drain();
  /// Frees the events (with the device's context current).
  void release_events();
};

/// Joins s.comm as s.rank of s.world_size on s.device (s.call_mutex held, the device
/// current): blocking unless XPURUNTIME_NCCL_BLOCKING=0, within s.timeout_seconds either
/// way; CudaError when the join fails or times out.
void join(CommunicatorState& s, const ncclUniqueId& id);

}  // namespace xrt::cuda
