// cpp/src/cuda/kernel_check.cpp: the registry of kernel samples and the compile-all check.
#include "cuda/kernel_check.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <tuple>

#include "cuda/nvrtc.h"
#include "xpuruntime/registry.h"

namespace xrt::cuda {
namespace {

struct Family {
  std::string name;
  KernelSampleFn samples;
};

std::mutex mutex;
std::vector<Family>& families() {
  static std::vector<Family> f;
  return f;
}

}  // namespace

void register_kernel_samples(std::string family, KernelSampleFn samples) {
  std::lock_guard lock(mutex);
  families().push_back({std::move(family), samples});
}

KernelCheckResult compile_kernel_samples(const std::string& arch, const std::string& family) {
  nvrtc();                   // CudaError once, rather than one per sample
  KernelRegistry::global();  // runs the families' registrations
  struct Job {
    std::string family;
    KernelSample sample;
  };
  std::vector<Job> jobs;
  {
    std::lock_guard lock(mutex);
    for (const Family& f : families())
      if (family.empty() || family == f.name)
        for (KernelSample& s : f.samples()) jobs.push_back({f.name, std::move(s)});
  }
  KernelCheckResult result;
  result.compiled = static_cast<int>(jobs.size());
  std::mutex failures_mutex;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      try {
        compile_cubin(jobs[i].sample.source, arch, jobs[i].sample.name);
      } catch (const std::exception& e) {
        std::lock_guard lock(failures_mutex);
        result.failures.push_back({jobs[i].family, jobs[i].sample.name, e.what()});
      }
    }
  };
  unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  std::sort(result.failures.begin(), result.failures.end(), [](const auto& a, const auto& b) {
    return std::tie(a.family, a.name) < std::tie(b.family, b.name);
  });
  return result;
}

}  // namespace xrt::cuda
