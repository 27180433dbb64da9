// cpp/include/xpuruntime/dlpack_protocol.h: the decisions of the DLPack protocol
// (`__dlpack__` and `from_dlpack` of the Array API standard): which stream waits for which,
// when a copy or a move is needed, what a request may not ask. The bindings only translate
// Python arguments and capsules; everything decided is decided here.
#pragma once
#include <cstdint>
#include <optional>

#include "xpuruntime/tensor.h"

namespace xrt::dlpack {

/// What `x.__dlpack__(stream=, max_version=, dl_device=, copy=)` was asked.
struct ExportRequest {
  std::optional<int64_t> stream;    ///< the consumer's stream number; nullopt: None
  bool versioned = false;           ///< max_version >= (1, 0)
  std::optional<Device> dl_device;  ///< where the consumer wants the data
  std::optional<bool> copy;
};

/// What to put in the capsule.
struct ExportPlan {
  Tensor tensor;        ///< t itself, a copy, or a copy on dl_device
  bool copied = false;  ///< the capsule holds a copy (DLPack's IS_COPIED flag)
};

/// Decides an export and orders the consumer's stream after the work queued on ours (an
/// event, no host wait). ValueError for a stream on a cpu tensor and for stream numbers
/// the device does not use (0 on CUDA is ambiguous); BufferError when dl_device needs a
/// copy and copy=False, or when a read-only tensor is asked for as a legacy capsule.
ExportPlan prepare_export(const Tensor& t, const ExportRequest& request);

/// What to ask a producer whose data lives on producer_device (nullopt: it did not say).
struct ImportRequest {
  std::optional<int64_t> stream;  ///< our current stream's number, for device producers
  std::optional<bool> copy;       ///< what to pass as copy= (nullopt: do not pass it)
};

/// `from_dlpack(x, device=, copy=)` before calling x.__dlpack__: the producer's stream
/// handshake targets our current stream on its device; a move to another device makes a
/// copy anyway, so the producer is not asked for another.
ImportRequest plan_import(std::optional<Device> producer_device, std::optional<Device> device,
                          std::optional<bool> copy);

/// `from_dlpack`'s last step for an imported tensor: moves it to device (BufferError when
/// that needs a copy and copy=False) or copies it when copy=True and the producer did not.
Tensor finish_import(Tensor t, std::optional<Device> device, std::optional<bool> copy,
                     bool producer_copied);

}  // namespace xrt::dlpack
