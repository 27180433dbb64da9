// cpp/src/cuda/graph.h: CUDA graphs captured from a stream and replayed, and the guards that
// keep host waits and host copies out of a capture.
#pragma once
#include <cstdint>

#include "cuda/driver.h"
#include "cuda/stream.h"

namespace xrt::cuda {

/// A graph captured from the calling thread's current stream.
///  - capture_begin() needs a non-default current stream (the default streams cannot be
///    captured); the Python `graph` context makes a side stream current for that.
///  - Between begin and end, allocations on the capturing stream come from the graph's
///    private pool (allocator.h); that memory stays reserved for replays until reset().
///  - replay() launches on the current stream of the graph's device, without a host wait.
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  void capture_begin(CUstreamCaptureMode mode);
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
  Stream stream_;  ///< the capturing stream, kept alive until capture_end
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  bool capturing_ = false;
};

/// CudaError naming `what` while one of our graphs captures on device: a host wait there
/// would invalidate the capture (and could never finish).
void refuse_while_capturing(int device, const char* what);
/// CudaError naming `what` when stream is capturing: host copies and waits cannot be
/// captured. Cheap for the default streams (they never capture).
void refuse_if_capturing(CUstream stream, const char* what);

/// Relaxed capture mode for the calling thread while alive: lets cuMemAlloc/cuMemFree, which
/// are not stream operations, run during a capture (the global mode forbids them).
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode();
  ~RelaxedCaptureMode();

 private:
  CUstreamCaptureMode previous_ = CU_STREAM_CAPTURE_MODE_RELAXED;
};

}  // namespace xrt::cuda
