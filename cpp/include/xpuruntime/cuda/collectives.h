// cpp/include/xpuruntime/cuda/collectives.h: NCCL communicators and collectives on tensors,
// queued on a stream. NCCL is loaded at run time (the `nvidia-nccl-cu13` wheel or the
// system's libnccl.so.2); nothing here needs it at build time.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "xpuruntime/runtime/event.h"
#include "xpuruntime/runtime/stream.h"
#include "xpuruntime/tensor.h"

namespace xrt::cuda {

enum class ReduceOp { Sum, Prod, Min, Max, Avg };

/// The opaque id that ties the ranks of one communicator together (ncclUniqueId).
inline constexpr size_t kUniqueIdBytes = 128;
using UniqueId = std::array<uint8_t, kUniqueIdBytes>;

/// NCCL's version (e.g. 22803 for 2.28.3); CudaError saying how to install NCCL when it
/// cannot be loaded. Needs no GPU.
int nccl_version();
/// A fresh id, made by one rank and sent to the others (it names this host's bootstrap
/// socket, so the network interface NCCL_SOCKET_IFNAME selects must reach the other ranks).
UniqueId nccl_unique_id();

enum class Collective { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll,
                        Send, Recv };

/// The checks a collective makes before anything is queued, public so they can be tested
/// without a GPU: tensors on the communicator's CUDA device, contiguous, a writable output,
/// equal dtypes, a dtype NCCL reduces with op (data movement takes every dtype), shapes
/// that fit world_size (all_gather's output is (world_size * n0, ...) or
/// (world_size, *input.shape), reduce_scatter's input the same of its output, all_to_all's
/// first axis divides by world_size), a root/peer in range. TypeError for dtypes,
/// ValueError for the rest. For Send and Recv, input is the tensor (output is ignored);
/// peer is the root or the peer (any rank when the collective has neither).
void check_collective(Collective kind, const Tensor& input, const Tensor& output, ReduceOp op,
                      int world_size, int device, int peer);

struct CommunicatorState;

/// One rank of an NCCL communicator, on one device.
///
/// Note [Failing ranks]: a collective waits on the device for its peers, so a peer that
/// dies would leave the others' streams waiting forever. Each communicator therefore has a
/// watchdog thread that polls, every few milliseconds, ncclCommGetAsyncError (errors NCCL
/// detects: a network peer gone, a CUDA error) and an event recorded after each collective
/// (one queued longer than `timeout_seconds` and still not done means a peer is missing).
/// Either way it aborts the communicator: NCCL's kernels see the abort flag and return, the
/// streams move on, and every later use (a collective, wait_event, check) raises CudaError
/// with the reason. The join has the same deadline, so a rank that never joins makes the
/// others raise instead of hanging (Note [Communicator lifetime] in cpp/src/cuda/communicator.cpp).
/// timeout_seconds <= 0: no deadline.
class Communicator {
 public:
  /// Joins the communicator `id` as `rank` of `world_size` on `device`; blocks until every
  /// rank has joined (or the timeout passes: CudaError). ValueError for a bad rank/size.
  Communicator(const UniqueId& id, int world_size, int rank, int device,
               double timeout_seconds);
  /// Aborts when destroy() was not called: finalising would wait for peers that may be gone.
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int world_size() const;
  int device() const;
  double timeout_seconds() const;
  /// Why the communicator failed ("" while it works); asks NCCL's async error first.
  std::string error() const;
  /// CudaError with the reason when the communicator failed, was aborted or destroyed.
  void check() const;
  /// Gives up at once (no wait for peers); queued collectives return early. Idempotent.
  void abort();
  /// Waits for queued work and frees the communicator (ncclCommFinalize, ncclCommDestroy);
  /// aborts instead when it failed or the wait passes the timeout.
  void destroy();

  // Collectives: checked (check_collective), then queued on stream, which must be on the
  // communicator's device; the host does not wait. Inside group_start/group_end they are
  // launched together at group_end. input and output may be the same tensor.
  void all_reduce(const Tensor& input, const Tensor& output, ReduceOp op,
                  const Stream& stream);
  void broadcast(const Tensor& input, const Tensor& output, int root, const Stream& stream);
  /// output is written on root only.
  void reduce(const Tensor& input, const Tensor& output, ReduceOp op, int root,
              const Stream& stream);
  void all_gather(const Tensor& input, const Tensor& output, const Stream& stream);
  void reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op,
                      const Stream& stream);
  /// Block i of input's first axis goes to rank i; block j of output comes from rank j.
  void all_to_all(const Tensor& input, const Tensor& output, const Stream& stream);
  void send(const Tensor& tensor, int peer, const Stream& stream);
  void recv(const Tensor& tensor, int peer, const Stream& stream);

  /// Waits on the host (callers from Python release the GIL) until event is done; raises
  /// CudaError as soon as the communicator fails meanwhile.
  void wait_event(const Event& event) const;

 private:
  template <class Enqueue>
  void run(const char* what, const Stream& stream, Enqueue enqueue);

  std::shared_ptr<CommunicatorState> state_;
};

/// ncclGroupStart/ncclGroupEnd for the calling thread: collectives in between (of one or
/// several communicators) are launched together at the outermost group_end, which is what
/// send/recv patterns and one thread driving several devices need. Groups nest.
void group_start();
void group_end();

}  // namespace xrt::cuda
