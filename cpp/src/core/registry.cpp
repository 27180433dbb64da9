// cpp/src/core/registry.cpp: KernelRegistry.
#include "xpuruntime/registry.h"

#include <algorithm>

#include "core/replay.h"
#include "xpuruntime/errors.h"

namespace xrt {
namespace {

// The backends' kernel sets, in registration order; a function-local static, since the
// registrars run during static initialisation in an order nobody controls.
std::vector<KernelSetFn>& kernel_sets() {
  static auto* sets = new std::vector<KernelSetFn>();
  return *sets;
}

std::atomic<KernelRegistry*> built{nullptr};

}  // namespace

KernelSetRegistrar::KernelSetRegistrar(KernelSetFn add) {
  kernel_sets().push_back(add);
  // A backend loaded after the registry was built (not the case today) still gets in.
  if (KernelRegistry* r = built.load(std::memory_order_acquire)) add(*r);
}

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();  // never destroyed: kernels may run during shutdown
    for (KernelSetFn add : kernel_sets()) add(*r);
    built.store(r, std::memory_order_release);
    return r;
  }();
  return *registry;
}

OpId KernelRegistry::op_id(std::string_view op) {
  std::lock_guard lock(mutex_);
  auto it = ids_.find(std::string(op));
  if (it != ids_.end()) return it->second;
  auto id = static_cast<OpId>(names_.size());
  ids_.emplace(std::string(op), id);
  names_.emplace_back(op);
  kernels_.emplace_back();
  return id;
}

std::string KernelRegistry::op_name(OpId id) const {
  std::lock_guard lock(mutex_);
  return id < names_.size() ? names_[id] : "<unknown op>";
}

void KernelRegistry::add(KernelInfo info) {
  OpId id = op_id(info.op);
  std::lock_guard lock(mutex_);
  auto& list = kernels_[id];
  for (const auto& k : list)
    if (k->name == info.name && k->device == info.device)
      throw ValueError("a kernel named '" + info.name + "' is already registered for op '" +
                       info.op + "'");
  auto ref = std::make_shared<const KernelInfo>(std::move(info));
  // Stable insertion by descending priority keeps registration order among equals.
  auto pos = std::find_if(list.begin(), list.end(),
                          [&](const KernelRef& k) { return k->priority < ref->priority; });
  list.insert(pos, std::move(ref));
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  replays_stale();  // Note [Stale replays] (core/replay.cpp)
}

bool KernelRegistry::remove(std::string_view op, std::string_view name, DeviceType device) {
  std::lock_guard lock(mutex_);
  auto it = ids_.find(std::string(op));
  if (it == ids_.end()) return false;
  auto& list = kernels_[it->second];
  auto pos = std::find_if(list.begin(), list.end(), [&](const KernelRef& k) {
    return k->name == name && k->device == device;
  });
  if (pos == list.end()) return false;
  list.erase(pos);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  replays_stale();  // Note [Stale replays] (core/replay.cpp)
  return true;
}

std::vector<KernelRef> KernelRegistry::kernels(OpId op, DeviceType device) const {
  std::lock_guard lock(mutex_);
  std::vector<KernelRef> out;
  if (op >= kernels_.size()) return out;
  for (const auto& k : kernels_[op])
    if (k->device == device) out.push_back(k);
  return out;
}

std::vector<KernelRef> KernelRegistry::all() const {
  std::lock_guard lock(mutex_);
  std::vector<KernelRef> out;
  for (const auto& list : kernels_) out.insert(out.end(), list.begin(), list.end());
  return out;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::lock_guard lock(mutex_);
  return names_;
}

}  // namespace xrt
