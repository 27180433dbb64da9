// cpp/src/core/runtime/backend_table.cpp: the table of backends, one per device type, filled
// by the backends' own registrars before main().
#include <array>
#include <atomic>
#include <string>

#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt {
namespace {

// Note: a function-local static, since registrars run during static initialisation in an
// order nobody controls. Never destroyed: kernels may run during shutdown.
std::array<Backend*, kNumDeviceTypes>& table() {
  static auto* backends = new std::array<Backend*, kNumDeviceTypes>{};
  return *backends;
}

const char* type_name(DeviceType type) {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
  }
  return "unknown";
}

}  // namespace

void register_backend(Backend& b) { table()[static_cast<int>(b.device_type())] = &b; }

const Backend* find_backend(DeviceType type) { return table()[static_cast<int>(type)]; }

const Backend& backend(DeviceType type) {
  // Availability is probed once per process and never lost: once a backend has answered,
  // every op's lookup is an index and a load (it asked the backend on every call).
  static std::atomic<const Backend*> available[kNumDeviceTypes] = {};
  if (const Backend* known = available[static_cast<int>(type)].load(std::memory_order_acquire))
    return *known;
  const Backend* b = table()[static_cast<int>(type)];
  if (!b)
    throw XpuRuntimeError(std::string("no backend for '") + type_name(type) +
                          "' devices is built into this xpuruntime");
  b->check_available();
  available[static_cast<int>(type)].store(b, std::memory_order_release);
  return *b;
}

}  // namespace xrt
