// cpp/include/xpuruntime/cuda/graph.h: CUDA graphs captured from a stream and replayed.
#pragma once
#include <cstddef>
#include <cstdint>

#include "xpuruntime/runtime/stream.h"

namespace xrt::cuda {

/// What other threads may do while a capture runs (CUDA's stream capture modes).
enum class CaptureMode { Global, ThreadLocal, Relaxed };

/// A graph captured from the calling thread's current stream.
///  - capture_begin() needs a non-default current stream (the default streams cannot be
///    captured); the Python `graph` context makes a side stream current for that.
///  - Between begin and end, allocations on the capturing stream come from the graph's
///    private pool; that memory stays reserved for replays until reset().
///  - replay() launches on the current stream of the graph's device, without a host wait.
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  void capture_begin(CaptureMode mode);
  /// Instantiates what was captured. CudaError when the capture was invalidated (by an
  /// operation a graph cannot hold); the graph is then empty again.
  void capture_end();
  void replay();
  /// Frees the graph and its pool; the object may capture again.
  void reset();

  uint64_t id() const { return id_; }
  bool capturing() const { return capturing_; }
  bool captured() const { return exec_ != nullptr; }
  int device() const { return device_; }
  /// Nodes of the captured graph (0 before a capture).
  size_t num_nodes() const;

 private:
  void discard();

  uint64_t id_;
  int device_ = -1;
  Stream stream_;          ///< the capturing stream, kept alive until capture_end
  void* graph_ = nullptr;  ///< CUgraph
  void* exec_ = nullptr;   ///< CUgraphExec
  bool capturing_ = false;
};

}  // namespace xrt::cuda
