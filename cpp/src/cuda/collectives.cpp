// cpp/src/cuda/collectives.cpp: NCCL communicators, their watchdog, collectives on tensors
// and groups.
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
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda/graph.h"
#include "cuda/nccl.h"
#include "cuda/runtime.h"
#include "xpuruntime/cuda/collectives.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {

using Clock = std::chrono::steady_clock;

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

  Clock::duration timeout() const {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(timeout_seconds));
  }

  std::string reason() {
    std::lock_guard lock(mutex);
    return failure;
  }

  void check_open() {
    std::lock_guard lock(mutex);
    if (!failure.empty())
      throw CudaError("the NCCL communicator (" + where + ") failed: " + failure);
    if (closed) throw CudaError("the NCCL communicator (" + where + ") was destroyed");
  }

  // Records why and aborts; call_mutex must be held. The first reason stays.
  void fail_locked(const std::string& why) {
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

  // Polls an ncclInProgress until NCCL is done (call_mutex held); CudaError on error or
  // when the deadline passes (the communicator is then aborted).
  void settle(ncclResult_t result, const char* what) {
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

  // An event behind the work queued so far on stream, for the watchdog.
  void track(CUstream stream) {
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

  void watch() {
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

  void stop_watch() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    stop_watchdog.notify_all();
    if (watchdog.joinable()) watchdog.join();
  }

  // Waits on the host, up to the timeout, for the collectives the events still track;
  // false when one did not finish in time (a peer is gone) or its event failed.
  bool drain() {
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

  // Frees the events (with the device's context current).
  void release_events() {
    std::lock_guard lock(mutex);
    for (const Pending& p : pending) driver().cuEventDestroy(p.event);
    for (CUevent e : spare_events) driver().cuEventDestroy(e);
    pending.clear();
    spare_events.clear();
  }
};

namespace {

// The calling thread's open groups: the communicators and streams used inside them, to be
// settled and tracked at the outermost group_end.
thread_local int group_depth = 0;
thread_local std::vector<std::pair<std::shared_ptr<CommunicatorState>, CUstream>> grouped;

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Prod: return ncclProd;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Avg: return ncclAvg;
  }
  return ncclSum;
}

struct Wire {
  ncclDataType_t type;
  size_t count;  // elements of type
};

Wire wire(const Tensor& t, ReduceOp op, bool reduction) {
  int type = 0, lanes = 1;
  nccl_wire_type(t.dtype(), op, reduction, type, lanes);  // checked before
  return {static_cast<ncclDataType_t>(type), static_cast<size_t>(t.numel()) * lanes};
}

CUstream native(const Stream& stream, int device) {
  Device d = stream.device();
  if (d.is_cpu() || d.index != device)
    throw ValueError("the stream is on " + d.str() + ", the communicator on cuda:" +
                     std::to_string(device));
  return static_cast<CUstream>(stream.handle());
}

// XPURUNTIME_NCCL_BLOCKING=0 makes non-blocking communicators (Note [Communicator lifetime]).
bool blocking_communicators() {
  const char* value = std::getenv("XPURUNTIME_NCCL_BLOCKING");
  return !(value && std::string(value) == "0");
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
  if (join->result != ncclSuccess) {
    std::string text = nccl_error_text(join->result, join->comm);
    if (join->comm) nccl().ncclCommAbort(join->comm);
    throw CudaError("ncclCommInitRankConfig (" + where + ") failed: " + text);
  }
  return join->comm;
}

}  // namespace

Communicator::Communicator(const UniqueId& id, int world_size, int rank, int device,
                           double timeout_seconds)
    : state_(std::make_shared<CommunicatorState>()) {
  if (world_size < 1) throw ValueError("world_size must be >= 1, got " +
                                       std::to_string(world_size));
  if (rank < 0 || rank >= world_size)
    throw ValueError("rank " + std::to_string(rank) + " is not in [0, " +
                     std::to_string(world_size) + ")");
  check_device(device);
  const NcclApi& api = nccl();
  CommunicatorState& s = *state_;
  s.rank = rank, s.world_size = world_size, s.device = device;
  s.timeout_seconds = timeout_seconds;
  s.where = "rank " + std::to_string(rank) + " of " + std::to_string(world_size) +
            " on cuda:" + std::to_string(device);
  activate(device);  // NCCL takes the calling thread's current device
  ncclUniqueId raw;
  std::memcpy(&raw, id.data(), kUniqueIdBytes);
  std::lock_guard call(s.call_mutex);
  if (blocking_communicators()) {
    s.comm = join_blocking(raw, world_size, rank, device, s.timeout(), s.where);
  } else {
    ncclConfig_v21400 config;
    config.blocking = 0;
    ncclResult_t r = api.ncclCommInitRankConfig(&s.comm, world_size, raw, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      std::string text = nccl_error_text(r, s.comm);
      if (s.comm) api.ncclCommAbort(s.comm);
      throw CudaError("ncclCommInitRankConfig (" + s.where + ") failed: " + text);
    }
    s.settle(r, "joining the NCCL communicator");
  }
  s.watchdog = std::thread([state = state_.get()] { state->watch(); });
}

Communicator::~Communicator() {
  try {
    abort();
  } catch (...) {
  }
}

int Communicator::rank() const { return state_->rank; }
int Communicator::world_size() const { return state_->world_size; }
int Communicator::device() const { return state_->device; }
double Communicator::timeout_seconds() const { return state_->timeout_seconds; }

std::string Communicator::error() const {
  CommunicatorState& s = *state_;
  std::lock_guard call(s.call_mutex);
  if (s.comm) {
    ncclResult_t async = ncclSuccess;
    if (nccl().ncclCommGetAsyncError(s.comm, &async) == ncclSuccess && async != ncclSuccess &&
        async != ncclInProgress)
      s.fail_locked("NCCL reported " + nccl_error_text(async, s.comm));
  }
  return s.reason();
}

void Communicator::check() const {
  error();
  state_->check_open();
}

void Communicator::abort() {
  CommunicatorState& s = *state_;
  s.stop_watch();
  std::lock_guard call(s.call_mutex);
  if (s.comm) {
    activate(s.device);
    nccl().ncclCommAbort(s.comm);
    s.comm = nullptr;
  }
  {
    std::lock_guard lock(s.mutex);
    s.closed = true;
  }
  s.release_events();
}

void Communicator::destroy() {
  CommunicatorState& s = *state_;
  s.stop_watch();
  std::lock_guard call(s.call_mutex);
  if (s.comm) {
    activate(s.device);
    const NcclApi& api = nccl();
    if (!s.drain()) {
      s.fail_locked("destroy: a collective did not finish within the timeout of " +
                    std::to_string(s.timeout_seconds) + " s");
      s.release_events();
      return;
    }
    ncclResult_t r = api.ncclCommFinalize(s.comm);
    try {
      s.settle(r, "ncclCommFinalize");  // aborts on error or timeout
    } catch (const CudaError&) {
    }
    if (s.comm) api.ncclCommDestroy(s.comm);
    s.comm = nullptr;
  }
  {
    std::lock_guard lock(s.mutex);
    s.closed = true;
  }
  s.release_events();
}

template <class Enqueue>
void Communicator::run(const char* what, const Stream& stream, Enqueue enqueue) {
  CommunicatorState& s = *state_;
  CUstream cs = native(stream, s.device);
  activate(s.device);
  {
    std::lock_guard call(s.call_mutex);
    s.check_open();
    s.settle(enqueue(nccl(), s.comm, cs), what);
  }
  if (group_depth > 0) grouped.emplace_back(state_, cs);
  else s.track(cs);
}

void Communicator::all_reduce(const Tensor& input, const Tensor& output, ReduceOp op,
                              const Stream& stream) {
  check_collective(Collective::AllReduce, input, output, op, world_size(), device(), 0);
  Wire w = wire(input, op, true);
  if (w.count == 0) return;  // every rank skips alike: nothing to wait for
  run("ncclAllReduce", stream, [&](const NcclApi& api, ncclComm_t comm, CUstream cs) {
    return api.ncclAllReduce(input.data(), output.data(), w.count, w.type, nccl_op(op), comm,
                             cs);
  });
}

void Communicator::broadcast(const Tensor& input, const Tensor& output, int root,
                             const Stream& stream) {
  check_collective(Collective::Broadcast, input, output, ReduceOp::Sum, world_size(),
                   device(), root);
  Wire w = wire(input, ReduceOp::Sum, false);
  if (w.count == 0) return;
  run("ncclBroadcast", stream, [&](const NcclApi& api, ncclComm_t comm, CUstream cs) {
    return api.ncclBroadcast(input.data(), output.data(), w.count, w.type, root, comm, cs);
  });
}

void Communicator::reduce(const Tensor& input, const Tensor& output, ReduceOp op, int root,
                          const Stream& stream) {
  check_collective(Collective::Reduce, input, output, op, world_size(), device(), root);
  Wire w = wire(input, op, true);
  if (w.count == 0) return;
  run("ncclReduce", stream, [&](const NcclApi& api, ncclComm_t comm, CUstream cs) {
    return api.ncclReduce(input.data(), output.data(), w.count, w.type, nccl_op(op), root,
                          comm, cs);
  });
}

void Communicator::all_gather(const Tensor& input, const Tensor& output, const Stream& stream) {
  check_collective(Collective::AllGather, input, output, ReduceOp::Sum, world_size(),
                   device(), 0);
  Wire w = wire(input, ReduceOp::Sum, false);
  if (w.count == 0) return;
  run("ncclAllGather", stream, [&](const NcclApi& api, ncclComm_t comm, CUstream cs) {
    return api.ncclAllGather(input.data(), output.data(), w.count, w.type, comm, cs);
  });
}

void Communicator::reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op,
                                  const Stream& stream) {
  check_collective(Collective::ReduceScatter, input, output, op, world_size(), device(), 0);
  Wire w = wire(output, op, true);
  if (w.count == 0) return;
  run("ncclReduceScatter", stream, [&](const NcclApi& api, ncclComm_t comm, CUstream cs) {
    return api.ncclReduceScatter(input.data(), output.data(), w.count, w.type, nccl_op(op),
                                 comm, cs);
  });
}

void Communicator::all_to_all(const Tensor& input, const Tensor& output, const Stream& stream) {
  check_collective(Collective::AllToAll, input, output, ReduceOp::Sum, world_size(), device(),
                   0);
  Wire w = wire(input, ReduceOp::Sum, false);
  const size_t block = w.count / static_cast<size_t>(world_size());  // bytes per rank
  if (block == 0) return;
  const char* in = input.data();
  char* out = output.data();
  const int n = world_size();
  // One group of send/recv pairs, one pair per peer (NCCL has no all-to-all of its own).
  run("all_to_all (ncclSend/ncclRecv)", stream,
      [&](const NcclApi& api, ncclComm_t comm, CUstream cs) {
        ncclResult_t r = api.ncclGroupStart();
        for (int peer = 0; peer < n && r == ncclSuccess; ++peer) {
          r = api.ncclSend(in + peer * block, block, w.type, peer, comm, cs);
          if (r == ncclSuccess) r = api.ncclRecv(out + peer * block, block, w.type, peer, comm, cs);
        }
        ncclResult_t end = api.ncclGroupEnd();  // always: keeps NCCL's group depth balanced
        return r != ncclSuccess ? r : end;
      });
}

void Communicator::send(const Tensor& tensor, int peer, const Stream& stream) {
  check_collective(Collective::Send, tensor, tensor, ReduceOp::Sum, world_size(), device(),
                   peer);
  Wire w = wire(tensor, ReduceOp::Sum, false);
  if (w.count == 0) return;
  run("ncclSend", stream, [&](const NcclApi& api, ncclComm_t comm, CUstream cs) {
    return api.ncclSend(tensor.data(), w.count, w.type, peer, comm, cs);
  });
}

void Communicator::recv(const Tensor& tensor, int peer, const Stream& stream) {
  check_collective(Collective::Recv, tensor, tensor, ReduceOp::Sum, world_size(), device(),
                   peer);
  Wire w = wire(tensor, ReduceOp::Sum, false);
  if (w.count == 0) return;
  run("ncclRecv", stream, [&](const NcclApi& api, ncclComm_t comm, CUstream cs) {
    return api.ncclRecv(tensor.data(), w.count, w.type, peer, comm, cs);
  });
}

void Communicator::wait_event(const Event& event) const {
  if (!event.recorded()) return;
  CUevent e = static_cast<CUevent>(event.handle());
  int polls = 0;
  while (true) {
    CUresult r = driver().cuEventQuery(e);
    if (r == CUDA_SUCCESS) return;
    if (r != CUDA_ERROR_NOT_READY) cuda::check(r, "cuEventQuery");
    state_->check_open();
    if (++polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
    else std::this_thread::yield();
  }
}

void group_start() {
  ncclResult_t r = nccl().ncclGroupStart();
  if (r != ncclSuccess) throw CudaError("ncclGroupStart failed: " + nccl_error_text(r));
  ++group_depth;
}

void group_end() {
  if (group_depth == 0) throw ValueError("group_end without a group_start");
  --group_depth;
  ncclResult_t r = nccl().ncclGroupEnd();
  if (group_depth > 0) {
    if (r != ncclSuccess && r != ncclInProgress)
      throw CudaError("ncclGroupEnd failed: " + nccl_error_text(r));
    return;
  }
  auto used = std::move(grouped);
  grouped.clear();
  // The group's communicators finish launching (ncclInProgress) or fail one by one.
  for (size_t i = 0; i < used.size(); ++i) {
    CommunicatorState& s = *used[i].first;
    bool first = true;
    for (size_t j = 0; j < i; ++j) first = first && used[j].first != used[i].first;
    if (first) {
      std::lock_guard call(s.call_mutex);
      if (s.comm) {
        ncclResult_t async = r;
        if (r == ncclInProgress || r == ncclSuccess)
          nccl().ncclCommGetAsyncError(s.comm, &async);
        s.settle(async, "ncclGroupEnd");
      }
    }
    bool tracked = false;
    for (size_t j = 0; j < i; ++j)
      tracked = tracked || (used[j].first == used[i].first && used[j].second == used[i].second);
    if (!tracked) s.track(used[i].second);
  }
  if (used.empty() && r != ncclSuccess && r != ncclInProgress)
    throw CudaError("ncclGroupEnd failed: " + nccl_error_text(r));
}

}  // namespace xrt::cuda
