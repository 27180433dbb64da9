// cpp/src/core/dlpack_protocol.cpp: the DLPack protocol's decisions (streams, copies, moves).
#include "xpuruntime/dlpack_protocol.h"

#include <string>

#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt::dlpack {
namespace {

// Note [DLPack streams]: the consumer names the stream it will read on by a number its
// backend defines (CUDA: 1 the legacy default, 2 the per-thread default, a handle, -1 "do
// not synchronise"; None means 1). The producer makes that stream wait for the work queued
// on its own current stream, by an event: the host never waits.
void order_consumer(Device device, int64_t consumer) {
  if (consumer == -1) return;
  const Backend& b = backend(device);
  Stream theirs = b.stream_from_dlpack_number(device, consumer);
  Stream ours = b.current_stream(device);
  if (theirs != ours) theirs.wait(ours);
}

}  // namespace

ExportPlan prepare_export(const Tensor& t, const ExportRequest& request) {
  Device device = t.device();
  if (device.is_cpu() && request.stream)
    throw ValueError("stream must be None for a cpu tensor (got " +
                     std::to_string(*request.stream) + ")");
  int64_t consumer = device.is_cpu() ? -1 : request.stream.value_or(1);
  // Checked before any work: a number the backend refuses fails here, not after a copy.
  // (find_backend: a tensor of the device exists, so its backend does; it need not be
  // able to run, for the numbers it refuses outright.)
  if (consumer != -1) {
    try {
      (void)find_backend(device.type)->stream_from_dlpack_number(device, consumer);
    } catch (const ValueError& e) {
      throw ValueError(std::string("__dlpack__: ") + e.what());
    }
  }
  ExportPlan plan{t, false};
  if (request.dl_device && *request.dl_device != device) {
    if (request.copy == false)
      throw BufferError("exporting to " + request.dl_device->str() +
                        " needs a copy, and copy=False");
    plan.tensor = to_device(t, *request.dl_device);
    plan.copied = true;
  }
  if (request.copy == true && !plan.copied) {
    plan.tensor = astype(plan.tensor, plan.tensor.dtype(), true);
    plan.copied = true;
  }
  // The consumer's stream waits for ours (the copies above included).
  if (!plan.tensor.device().is_cpu()) order_consumer(plan.tensor.device(), consumer);
  if (!request.versioned && plan.tensor.readonly())
    throw BufferError("a read-only tensor cannot be exported as a legacy DLPack capsule, which "
                      "has no read-only flag; ask for max_version=(1, 0) or copy=True");
  return plan;
}

ImportRequest plan_import(std::optional<Device> producer_device, std::optional<Device> device,
                          std::optional<bool> copy) {
  ImportRequest request;
  if (producer_device && !producer_device->is_cpu()) {
    // Note: the backend's table entry, not backend(): a capsule of device memory imports
    // (as a tensor no op can use yet) even where the backend cannot run.
    const Backend* b = find_backend(producer_device->type);
    if (!b)
      throw BufferError("from_dlpack: no backend for " + producer_device->str() +
                        " is built into this xpuruntime");
    request.stream = b->dlpack_stream_number(*producer_device);
  }
  bool moving = device && producer_device && *device != *producer_device;
  request.copy = moving ? std::nullopt : copy;
  return request;
}

// Note: t by value, so that a fresh import is moved through rather than copied.
Tensor finish_import(Tensor t, std::optional<Device> device, std::optional<bool> copy,
                     bool producer_copied) {
  if (device && *device != t.device()) {
    if (copy == false)
      throw BufferError("from_dlpack: moving to " + device->str() +
                        " needs a copy, and copy=False");
    return to_device(t, *device);
  }
  if (copy == true && !producer_copied) return astype(t, t.dtype(), true);
  return t;
}

}  // namespace xrt::dlpack
