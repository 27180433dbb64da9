// cpp/include/xpuruntime/policy.h: KernelPolicy, which kernel each op should use.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace xrt {

enum class AutoStrategy : uint8_t {
  FirstSupported,   ///< the first registered kernel that supports the inputs
  BestPerformance,  ///< time the supporting kernels once per shape class, keep the fastest
};

/// Pins per op ("matmul" -> "openblas"), the strategy for ops without a pin, and the
/// precision kernels may trade for speed.
/// Every change takes a fresh version from a global counter; the dispatcher caches by
/// version, so mutating the policy in use is safe and takes effect at the next call.
class KernelPolicy {
 public:
  KernelPolicy() : version_(next_version()) {}

  void set(const std::string& op, const std::string& kernel);
  std::optional<std::string> get(const std::string& op) const;
  bool remove(const std::string& op);
  std::map<std::string, std::string> preferences() const;
  AutoStrategy auto_strategy() const { return strategy_.load(); }
  void set_auto_strategy(AutoStrategy strategy);
  /// Whether float32/complex64 matrix products may round their inputs to TF32 (10-bit
  /// mantissa) on tensor cores. Off by default, as in PyTorch: results then match float32.
  bool allow_tf32() const { return allow_tf32_.load(std::memory_order_relaxed); }
  void set_allow_tf32(bool allow);
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  static uint64_t next_version();

 private:
  void changed();  // a new version; kept replays go stale

  mutable std::mutex mutex_;
  std::map<std::string, std::string> preferences_;
  std::atomic<AutoStrategy> strategy_{AutoStrategy::FirstSupported};
  std::atomic<bool> allow_tf32_{false};
  std::atomic<uint64_t> version_;
};

using PolicyRef = std::shared_ptr<KernelPolicy>;

/// The policy in force on this thread: the innermost scoped one, else the global one.
const PolicyRef& current_policy();
void set_global_policy(PolicyRef policy);
PolicyRef global_policy();
/// Scoped policies (Python: `with xrt.kernel_policy(p):`), per thread.
void push_thread_policy(PolicyRef policy);
void pop_thread_policy();

const char* strategy_name(AutoStrategy strategy);
std::optional<AutoStrategy> strategy_from_name(const std::string& name);

}  // namespace xrt
