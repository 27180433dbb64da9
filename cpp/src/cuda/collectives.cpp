// cpp/src/cuda/collectives.cpp: the collectives on tensors and groups of an NCCL
// Communicator; its state, join and watchdog are communicator.cpp's (Note [Communicator
// lifetime]).
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "cuda/communicator.h"
#include "xpuruntime/cuda/collectives.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {


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
  CommunicatorState& s = *state_;
  s.rank = rank, s.world_size = world_size, s.device = device;
  s.timeout_seconds = timeout_seconds;
  s.where = "rank " + std::to_string(rank) + " of " + std::to_string(world_size) +
            " on cuda:" + std::to_string(device);
  activate(device);  // NCCL takes the calling thread's current device
  ncclUniqueId raw;
  std::memcpy(&raw, id.data(), kUniqueIdBytes);
  std::lock_guard call(s.call_mutex);
  join(s, raw);
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
