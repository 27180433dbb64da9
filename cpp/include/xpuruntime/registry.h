// cpp/include/xpuruntime/registry.h: KernelRegistry, op name -> registered implementations.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "xpuruntime/kernel.h"

namespace xrt {

using OpId = uint16_t;
using KernelRef = std::shared_ptr<const KernelInfo>;

/// Thread-safe. Every change bumps epoch(), which invalidates the dispatcher's caches.
/// Kernels are handed out as shared pointers, so unregistering one that is running is safe.
class KernelRegistry {
 public:
  static KernelRegistry& global();

  /// The id of an op name, interned on first use (ids are small and dense).
  OpId op_id(std::string_view op);
  std::string op_name(OpId id) const;

  /// Adds a kernel; ValueError if (op, device, name) is taken.
  void add(KernelInfo info);
  /// Removes a kernel; false when there was none.
  bool remove(std::string_view op, std::string_view name, DeviceType device);
  /// Kernels of an op on a device type, highest priority first, then oldest first.
  std::vector<KernelRef> kernels(OpId op, DeviceType device) const;
  std::vector<KernelRef> all() const;
  std::vector<std::string> ops() const;
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, OpId> ids_;
  std::vector<std::string> names_;
  std::vector<std::vector<KernelRef>> kernels_;  // by op id, all devices, in order
  std::atomic<uint64_t> epoch_{1};
};

/// A backend's built-in kernels, added by a function of the backend's own files. Backends
/// declare theirs with XRT_REGISTER_KERNELS; global() runs every such function once, when
/// the registry is first used, so registering compiles and loads nothing.
using KernelSetFn = void (*)(KernelRegistry& registry);
struct KernelSetRegistrar {
  explicit KernelSetRegistrar(KernelSetFn add);
};

}  // namespace xrt

/// In one source file of a backend: `XRT_REGISTER_KERNELS(register_cuda_kernels);`.
#define XRT_REGISTER_KERNELS(fn) \
  namespace {                    \
  const ::xrt::KernelSetRegistrar xrt_kernel_set_registrar(&(fn)); \
  }
