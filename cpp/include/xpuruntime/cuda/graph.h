// cpp/include/xpuruntime/cuda/graph.h: CUDA graphs captured from a stream and replayed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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
///  - Work of another library captured into the graph may keep what its replays use with
///    the graph (keep()): a foreign allocator's pool, say (Note [Foreign work in our graphs]).
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
  /// The stream capturing now (the CPU's Stream when not capturing).
  const Stream& capture_stream() const { return stream_; }
  /// Nodes of the captured graph (0 before a capture).
  size_t num_nodes() const;

  /// What is kept under key (null when nothing is): kept things live until the graph is
  /// discarded (reset(), a failed capture, destruction), after its memory pool goes.
  std::shared_ptr<void> kept(const std::string& key) const;
  void keep(const std::string& key, std::shared_ptr<void> thing);

 private:
  void discard();

  uint64_t id_;
  int device_ = -1;
  Stream stream_;          ///< the capturing stream, kept alive until capture_end
  void* graph_ = nullptr;  ///< CUgraph
  void* exec_ = nullptr;   ///< CUgraphExec
  bool capturing_ = false;
  std::vector<std::pair<std::string, std::shared_ptr<void>>> kept_;
};

/// The graph of ours capturing stream (a CUstream) now, or null.
Graph* graph_capturing(void* stream);

}  // namespace xrt::cuda
