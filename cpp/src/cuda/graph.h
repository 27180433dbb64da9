// cpp/src/cuda/graph.h: the guards that keep host waits and host copies out of a capture
// (the Graph itself is public: xpuruntime/cuda/graph.h).
#pragma once
#include <cstdint>

#include "cuda/driver.h"
#include "xpuruntime/cuda/graph.h"

namespace xrt::cuda {

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
