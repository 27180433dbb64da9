// cpp/src/cuda/communicator.cpp: an NCCL communicator's lifetime: the join, the calls
// polled under a deadline, the watchdog that aborts a communicator whose peers are gone.
//
// Note [Communicator lifetime]:
//  - Communicators are blocking (NCCL's default) unless XPURUNTIME_NCCL_BLOCKING=0. A
//    non-blocking communicator hands every group end (every collective) to a thread NCCL
//    creates for it and answers ncclInProgress, to be polled: about 49 us of host time per
//    collective against 22 for torch's blocking one, which decided the small messages
//    (Note [Blocking communicators]).
//  - A blocking join cannot be given a deadline by NCCL, so it runs on a thread of its own
//    while the caller waits for it up to the timeout. A rank that never arrives makes the
//    caller raise CudaError; the joining thread is left behind (it is blocked in NCCL's
//    bootstrap and cannot be interrupted) and aborts the communicator if the join ever ends.
//  - Non-blocking (XPURUNTIME_NCCL_BLOCKING=0): ncclCommInitRankConfig returns at once and
//    the host polls ncclCommGetAsyncError until the other ranks have joined. Any later NCCL
//    call may also answer ncclInProgress (connections are made on first use); it is polled
//    the same way, under the same deadline.
//  - Every NCCL call on a communicator, and its abort, runs under the state's call mutex:
//    the watchdog never frees a communicator that the caller's thread is using.
//  - After each collective (or at the outermost group end) an event from the state's pool
//    is recorded behind it, unless the stream is capturing a graph; the watchdog retires
//    finished events and aborts when the oldest one is older than the timeout
//    (Note [Failing ranks]). destroy() waits for those events (up to the timeout) before
//    ncclCommFinalize, which on a blocking communicator would otherwise wait for ever on a
//    dead peer's collectives.
//  - Aborted or destroyed, the handle is gone; every later call raises with the reason.
//
// Note [Blocking communicators]: what a blocking communicator gives up is the deadline on
// host calls that wait for peers: NCCL makes a connection the first time an algorithm
// needs it, and that host call waits for the peer's side. A peer that died closed its
// sockets, so the call fails at once with NCCL's error; only a peer that is alive but never
// makes the same call (a program bug) leaves it waiting, as it would with torch. Work queued
// on the device stays guarded by the watchdog either way.
#include "cuda/communicator.h"

#include <cstdlib>
#include <memory>

#include "cuda/graph.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {

Clock::duration CommunicatorState::timeout() const {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(timeout_seconds));
}

std::string CommunicatorState::reason() {
  std::lock_guard lock(mutex);
  return failure;
}

void CommunicatorState::check_open() {
  std::lock_guard lock(mutex);
  if (!failure.empty())
    throw CudaError("the NCCL communicator (" + where + ") failed: " + failure);
  if (closed) throw CudaError("the NCCL communicator (" + where + ") was destroyed");
}

void CommunicatorState::fail_locked(const std::string& why) {
  {
    std::lock_guard lock(mutex);
    if (failure.empty()) failure = why;
    closed = true;
  }
  if (comm) {
    nccl().ncclCommAbort(comm);
    comm = nullptr;
  }
}

void CommunicatorState::settle(ncclResult_t result, const char* what) {
  const NcclApi& api = nccl();
  const Clock::time_point start = Clock::now();
  int polls = 0;
  while (result == ncclInProgress) {
    if (timeout_seconds > 0 && Clock::now() - start > timeout()) {
      fail_locked(std::string(what) + " did not finish within the timeout of " +
                  std::to_string(timeout_seconds) + " s (a rank is missing or hangs)");
      check_open();
    }
    // Connections take milliseconds: spin briefly, then sleep.
    if (++polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(200));
    else std::this_thread::yield();
    if (api.ncclCommGetAsyncError(comm, &result) != ncclSuccess) break;
  }
  if (result == ncclSuccess) return;
  std::string text = std::string(what) + ": " + nccl_error_text(result, comm);
  // An argument NCCL refuses leaves the communicator usable; anything else breaks it.
  if (result == ncclInvalidArgument || result == ncclInvalidUsage) throw CudaError(text);
  fail_locked(text);
  check_open();
}

void CommunicatorState::track(CUstream stream) {
  if (timeout_seconds <= 0) return;
  if (stream != nullptr && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD) {
    CUstreamCaptureStatus status;
    if (driver().cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_NONE)
      return;  // a captured event is no point in time of this process
  }
  CUevent event = nullptr;
  {
    std::lock_guard lock(mutex);
    if (!spare_events.empty()) {
      event = spare_events.back();
      spare_events.pop_back();
    }
  }
  if (!event) XRT_CU(cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
  XRT_CU(cuEventRecord, event, stream);
  std::lock_guard lock(mutex);
  pending.push_back({event, Clock::now()});
}

void CommunicatorState::watch() {
  try {
    activate(device);
  } catch (...) {
    return;  // the constructor's thread activated the same device: cannot happen
  }
  // A graph captured in global mode is invalidated by a cuEventQuery from any thread
  // whose own mode is not relaxed: this thread's queries must never break a capture.
  RelaxedCaptureMode relaxed;
  const NcclApi& api = nccl();
  std::unique_lock lock(mutex);
  while (!stopping && !closed) {
    stop_watchdog.wait_for(lock, std::chrono::milliseconds(10));
    if (stopping || closed) break;
    while (!pending.empty() && driver().cuEventQuery(pending.front().event) == CUDA_SUCCESS) {
      spare_events.push_back(pending.front().event);
      pending.pop_front();
    }
    std::string why;
    if (!pending.empty() && timeout_seconds > 0 &&
        Clock::now() - pending.front().queued > timeout())
      why = "a collective queued " + std::to_string(timeout_seconds) +
            " s ago has not finished (the timeout): a rank died, hangs or did not call it";
    lock.unlock();
    {
      // Busy callers are asked again next round; never wait for them here.
      std::unique_lock call(call_mutex, std::try_to_lock);
      if (call.owns_lock() && comm) {
        ncclResult_t async = ncclSuccess;
        if (why.empty() && api.ncclCommGetAsyncError(comm, &async) == ncclSuccess &&
            async != ncclSuccess && async != ncclInProgress)
          why = "NCCL reported " + nccl_error_text(async, comm);
        if (!why.empty()) fail_locked(why);
      }
    }
    lock.lock();
  }
}

void CommunicatorState::stop_watch() {
  {
    std::lock_guard lock(mutex);
    stopping = true;
  }
  stop_watchdog.notify_all();
  if (watchdog.joinable()) watchdog.join();
}

bool CommunicatorState::drain() {
  const Clock::time_point start = Clock::now();
  std::lock_guard lock(mutex);
  while (!pending.empty()) {
    CUresult r = driver().cuEventQuery(pending.front().event);
    if (r == CUDA_SUCCESS) {
      spare_events.push_back(pending.front().event);
      pending.pop_front();
      continue;
    }
    if (r != CUDA_ERROR_NOT_READY) return false;
    if (timeout_seconds > 0 && Clock::now() - start > timeout()) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

void CommunicatorState::release_events() {
  std::lock_guard lock(mutex);
  for (const Pending& p : pending) driver().cuEventDestroy(p.event);
  for (CUevent e : spare_events) driver().cuEventDestroy(e);
  pending.clear();
  spare_events.clear();
}

namespace {

// XPURUNTIME_NCCL_BLOCKING=0 makes non-blocking communicators (Note [Communicator lifetime]).
bool blocking_communicators() {
  const char* value = std::getenv("XPURUNTIME_NCCL_BLOCKING");
  return !(value && std::string(value) == "0");
}

[[noreturn]] void init_failed(ncclResult_t result, ncclComm_t comm, const std::string& where) {
  std::string text = nccl_error_text(result, comm);
  if (comm) nccl().ncclCommAbort(comm);
  throw CudaError("ncclCommInitRankConfig (" + where + ") failed: " + text);
}

// What the joining thread hands back; shared, since the caller may stop waiting first.
struct Join {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false, abandoned = false;
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclSuccess;
  std::string error;  // a failure before NCCL was called
};

// Joins a blocking communicator on a thread of its own, waiting for it up to timeout
// (<= 0: for ever); see Note [Communicator lifetime].
ncclComm_t join_blocking(const ncclUniqueId& raw, int world_size, int rank, int device,
                         Clock::duration timeout, const std::string& where) {
  auto join = std::make_shared<Join>();
  std::thread([join, raw, world_size, rank, device] {
    ncclComm_t comm = nullptr;
    ncclResult_t result = ncclSuccess;
    std::string error;
    try {
      activate(device);  // NCCL takes the calling thread's current device
      ncclConfig_v21400 config;
      config.blocking = 1;
      result = nccl().ncclCommInitRankConfig(&comm, world_size, raw, rank, &config);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard lock(join->mutex);
    if (join->abandoned) {
      if (comm) nccl().ncclCommAbort(comm);
      return;
    }
    join->comm = comm, join->result = result, join->error = error;
    join->done = true;
    join->done_cv.notify_all();
  }).detach();
  std::unique_lock lock(join->mutex);
  auto finished = [&] { return join->done; };
  if (timeout > Clock::duration::zero()) {
    if (!join->done_cv.wait_for(lock, timeout, finished)) {
      join->abandoned = true;
      throw CudaError("joining the NCCL communicator (" + where + ") did not finish within "
                      "the timeout of " +
                      std::to_string(std::chrono::duration<double>(timeout).count()) +
                      " s (a rank is missing or hangs)");
    }
  } else {
    join->done_cv.wait(lock, finished);
  }
  if (!join->error.empty())
    throw CudaError("joining the NCCL communicator (" + where + ") failed: " + join->error);
  if (join->result != ncclSuccess) init_failed(join->result, join->comm, where);
  return join->comm;
}

}  // namespace

void join(CommunicatorState& s, const ncclUniqueId& id) {
  if (blocking_communicators()) {
    s.comm = join_blocking(id, s.world_size, s.rank, s.device, s.timeout(), s.where);
    return;
  }
  ncclConfig_v21400 config;
  config.blocking = 0;
  ncclResult_t r = nccl().ncclCommInitRankConfig(&s.comm, s.world_size, id, s.rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) init_failed(r, s.comm, s.where);
  s.settle(r, "joining the NCCL communicator");
}

}  // namespace xrt::cuda
