// cpp/src/core/default_device.cpp: the process-wide default device and per-thread scopes.
#include "xpuruntime/default_device.h"

#include <atomic>
#include <vector>

#include "xpuruntime/errors.h"

namespace xrt {
namespace {

std::atomic<Device> process_default{kCPU};
thread_local std::vector<Device> scopes;

}  // namespace

Device default_device() {
  return scopes.empty() ? process_default.load(std::memory_order_relaxed) : scopes.back();
}

void set_default_device(Device device) { process_default.store(device); }

void push_default_device(Device device) { scopes.push_back(device); }

void pop_default_device() {
  if (scopes.empty()) throw ValueError("leaving a device scope that was never entered");
  scopes.pop_back();
}

}  // namespace xrt
