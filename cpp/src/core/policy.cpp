// cpp/src/core/policy.cpp: KernelPolicy and the current policy (global + per-thread scopes).
#include "xpuruntime/policy.h"

#include <vector>

#include "core/per_thread.h"
#include "core/replay.h"

namespace xrt {

uint64_t KernelPolicy::next_version() {
  static std::atomic<uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

// After the change, not before (Note [Stale replays] in core/replay.cpp).
void KernelPolicy::changed() {
  version_.store(next_version(), std::memory_order_release);
  replays_stale();
}

void KernelPolicy::set(const std::string& op, const std::string& kernel) {
  std::lock_guard lock(mutex_);
  preferences_[op] = kernel;
  changed();
}

std::optional<std::string> KernelPolicy::get(const std::string& op) const {
  std::lock_guard lock(mutex_);
  auto it = preferences_.find(op);
  if (it == preferences_.end()) return std::nullopt;
  return it->second;
}

bool KernelPolicy::remove(const std::string& op) {
  std::lock_guard lock(mutex_);
  bool erased = preferences_.erase(op) > 0;
  if (erased) changed();
  return erased;
}

std::map<std::string, std::string> KernelPolicy::preferences() const {
  std::lock_guard lock(mutex_);
  return preferences_;
}

void KernelPolicy::set_auto_strategy(AutoStrategy strategy) {
  strategy_.store(strategy);
  changed();
}

void KernelPolicy::set_allow_tf32(bool allow) {
  allow_tf32_.store(allow, std::memory_order_relaxed);
  changed();
}

namespace {

std::mutex global_mutex;
PolicyRef& global_slot() {
  static PolicyRef* slot = new PolicyRef(std::make_shared<KernelPolicy>());
  return *slot;
}
// Each thread caches the global policy pointer; a generation number says when to re-read.
std::atomic<uint64_t> global_generation{1};
// A PerThread (Note [Per-thread state on the hot path] in per_thread.h).
struct ThreadPolicies {
  std::vector<PolicyRef> scoped;
  PolicyRef global_copy;
  uint64_t generation = 0;
};
ThreadPolicies& thread_policies() { return PerThread<ThreadPolicies>::get(); }

}  // namespace

const PolicyRef& current_policy() {
  ThreadPolicies& t = thread_policies();
  if (!t.scoped.empty()) return t.scoped.back();
  uint64_t generation = global_generation.load(std::memory_order_acquire);
  if (t.generation != generation) {
    std::lock_guard lock(global_mutex);
    t.global_copy = global_slot();
    t.generation = generation;
  }
  return t.global_copy;
}

void set_global_policy(PolicyRef policy) {
  std::lock_guard lock(global_mutex);
  global_slot() = std::move(policy);
  global_generation.fetch_add(1, std::memory_order_acq_rel);
  replays_stale();
}

PolicyRef global_policy() {
  std::lock_guard lock(global_mutex);
  return global_slot();
}

void push_thread_policy(PolicyRef policy) {
  thread_policies().scoped.push_back(std::move(policy));
  thread_replays_stale();
}

void pop_thread_policy() {
  ThreadPolicies& t = thread_policies();
  if (!t.scoped.empty()) t.scoped.pop_back();
  thread_replays_stale();
}

const char* strategy_name(AutoStrategy strategy) {
  return strategy == AutoStrategy::FirstSupported ? "FirstSupported" : "BestPerformance";
}

std::optional<AutoStrategy> strategy_from_name(const std::string& name) {
  if (name == "FirstSupported") return AutoStrategy::FirstSupported;
  if (name == "BestPerformance") return AutoStrategy::BestPerformance;
  return std::nullopt;
}

}  // namespace xrt
