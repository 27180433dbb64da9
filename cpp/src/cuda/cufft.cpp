// cpp/src/cuda/cufft.cpp: resolves the cuFFT table and keeps the plan caches.
//
// Note [cuFFT plans]:
//  - A plan is made once per (device, FftPlanKey) and kept in that device's cache, least
//    recently used first out when the cache is full (64 plans by default). Plans are
//    shared_ptrs: one evicted while a call holds it is destroyed when that call is done.
//  - Plans are made with cufftSetAutoAllocation(0): cuFFT owns no work area. Each execution
//    takes one of the plan's size from the device allocator on the call's stream and frees
//    it once the transform is enqueued; the caching allocator hands a freed block only to
//    later work on the same stream (or to another stream after an event), as for any
//    tensor freed after its last op was queued, so the transform's scratch is never reused
//    under it and the host never waits.
//  - cufftSetStream and cufftSetWorkArea change the plan, so setting them and enqueueing
//    the transform happen under the cache's mutex: a plan is safe to use from any thread.
//    Making a plan (milliseconds) happens outside it.
//  - cufftDestroy frees the plan's device memory with cudaFree, which waits for the device,
//    so a plan destroyed with a transform still queued is destroyed after it.
//  - A plan that fails with CUFFT_ALLOC_FAILED is retried once after the cache's other
//    plans and the allocator's unused memory are given back.
//  - Transforms can be captured in CUDA graphs; a plan made during a capture is made in
//    relaxed capture mode. A plan evicted (destroyed) during a capture invalidates it: make
//    the plans first (run the transforms once) or raise the capacity.
//  - The caches are never destroyed: at process exit the driver may already be gone.
#include "cuda/cufft.h"

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/allocator.h"
#include "cuda/graph.h"
#include "cuda/library_table.h"
#include "cuda/runtime.h"
#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/cuda_memory.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

const char* result_name(cufftResult result) {
  switch (result) {
    case 0: return "CUFFT_SUCCESS";
    case 1: return "CUFFT_INVALID_PLAN";
    case 2: return "CUFFT_ALLOC_FAILED";
    case 3: return "CUFFT_INVALID_TYPE";
    case 4: return "CUFFT_INVALID_VALUE";
    case 5: return "CUFFT_INTERNAL_ERROR";
    case 6: return "CUFFT_EXEC_FAILED";
    case 7: return "CUFFT_SETUP_FAILED";
    case 8: return "CUFFT_INVALID_SIZE";
    case 10: return "CUFFT_INCOMPLETE_PARAMETER_LIST";
    case 11: return "CUFFT_INVALID_DEVICE";
    case 13: return "CUFFT_NO_WORKSPACE";
    case 14: return "CUFFT_NOT_IMPLEMENTED";
    case 16: return "CUFFT_NOT_SUPPORTED";
    default: return "CUFFT_UNKNOWN_ERROR";
  }
}

CufftApi load_cufft() {
  return load_library_table<CufftApi>(Library::Cufft, "cuFFT", "nvidia-cufft",
                                      [](CufftApi& api, auto resolve) {
#define XRT_RESOLVE_CUFFT_FN(name, params) \
  api.name = reinterpret_cast<decltype(api.name)>(resolve(#name));
    XRT_CUFFT_FUNCTIONS(XRT_RESOLVE_CUFFT_FN)
#undef XRT_RESOLVE_CUFFT_FN
  });
}

// ---- plans ---------------------------------------------------------------------------------

struct KeyHash {
  size_t operator()(const FftPlanKey& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the fields
    auto mix = [&](int64_t v) { h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull; };
    mix(k.type), mix(k.rank), mix(k.istride), mix(k.idist), mix(k.ostride), mix(k.odist),
        mix(k.batch);
    for (int i = 0; i < 3; ++i) mix(k.n[i]), mix(k.inembed[i]), mix(k.onembed[i]);
    return static_cast<size_t>(h);
  }
};

struct Plan {
  cufftHandle handle = 0;
  size_t work_bytes = 0;
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() { cufft().cufftDestroy(handle); }  // errors ignored: nothing to do about them
};
using PlanRef = std::shared_ptr<Plan>;

std::shared_ptr<Plan> make_plan(const FftPlanKey& key) {
  const CufftApi& api = cufft();
  // Making a plan allocates (cudaMalloc), which a graph capture in global mode forbids.
  RelaxedCaptureMode relaxed;
  auto plan = std::make_shared<Plan>();
  check_cufft(api.cufftCreate(&plan->handle), "cufftCreate");
  check_cufft(api.cufftSetAutoAllocation(plan->handle, 0), "cufftSetAutoAllocation");
  long long n[3], inembed[3], onembed[3];
  for (int i = 0; i < 3; ++i)
    n[i] = key.n[i], inembed[i] = key.inembed[i], onembed[i] = key.onembed[i];
  // Note: non-null embeds select the advanced layout (a rank-1 plan reads none of them).
  check_cufft(api.cufftMakePlanMany64(plan->handle, key.rank, n, inembed, key.istride, key.idist,
                                      onembed, key.ostride, key.odist, key.type, key.batch,
                                      &plan->work_bytes),
              "cufftMakePlanMany64");
  return plan;
}

class PlanCache {
 public:
  std::mutex mutex;  // guards the lists and every use of a cached plan's handle

  PlanRef find(const FftPlanKey& key) {
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  /// Adds plan (or returns the one another thread added meanwhile); plans pushed out go to
  /// `evicted`, for the caller to release after unlocking (see Note [cuFFT plans]).
  PlanRef insert(const FftPlanKey& key, PlanRef plan, std::vector<PlanRef>& evicted) {
    if (auto it = index_.find(key); it != index_.end()) return it->second->second;
    if (capacity_ == 0) return plan;
    order_.emplace_front(key, std::move(plan));
    index_[key] = order_.begin();
    trim(capacity_, evicted);
    return order_.front().second;
  }

  void trim(int64_t capacity, std::vector<PlanRef>& evicted) {
    while (static_cast<int64_t>(order_.size()) > capacity) {
      evicted.push_back(std::move(order_.back().second));
      index_.erase(order_.back().first);
      order_.pop_back();
      ++evictions_;
    }
  }

  void set_capacity(int64_t capacity, std::vector<PlanRef>& evicted) {
    capacity_ = capacity;
    trim(capacity, evicted);
  }

  FftPlanCacheInfo info() const {
    return {static_cast<int64_t>(order_.size()), capacity_, hits_, misses_, evictions_};
  }

 private:
  std::list<std::pair<FftPlanKey, PlanRef>> order_;  // most recently used first
  std::unordered_map<FftPlanKey, std::list<std::pair<FftPlanKey, PlanRef>>::iterator, KeyHash>
      index_;
  int64_t capacity_ = 64;
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

std::mutex caches_mutex;
PlanCache* caches[kMaxDevices] = {};  // leaked: see Note [cuFFT plans]
int64_t default_capacity = 64;

PlanCache& cache_of(int device) {
  std::lock_guard lock(caches_mutex);
  PlanCache*& c = caches[device];
  if (!c) {
    c = new PlanCache;
    std::vector<PlanRef> none;
    c->set_capacity(default_capacity, none);
  }
  return *c;
}

/// The cached plan of key, made on a miss (with `lock` released meanwhile).
PlanRef plan_for(PlanCache& cache, const FftPlanKey& key, std::unique_lock<std::mutex>& lock,
                 std::vector<PlanRef>& evicted) {
  if (PlanRef plan = cache.find(key)) return plan;
  lock.unlock();
  PlanRef plan;
  try {
    plan = make_plan(key);
  } catch (const OutOfMemoryError&) {
    {
      std::lock_guard relock(cache.mutex);
      cache.trim(0, evicted);
    }
    evicted.clear();  // destroyed here, unlocked
    empty_cache();
    plan = make_plan(key);
  }
  lock.lock();
  return cache.insert(key, std::move(plan), evicted);
}

}  // namespace

bool FftPlanKey::operator==(const FftPlanKey& o) const {
  for (int i = 0; i < 3; ++i)
    if (n[i] != o.n[i] || inembed[i] != o.inembed[i] || onembed[i] != o.onembed[i]) return false;
  return type == o.type && rank == o.rank && istride == o.istride && idist == o.idist &&
         ostride == o.ostride && odist == o.odist && batch == o.batch;
}

const CufftApi& cufft() {
  // Finds cuFFT outside this one-time initialisation: Note [Finding libraries].
  library_handle(Library::Cufft);
  static const CufftApi api = load_cufft();  // a failed load throws again on the next call
  return api;
}

int cufft_version() {
  int version = 0;
  check_cufft(cufft().cufftGetVersion(&version), "cufftGetVersion");
  return version;
}

void check_cufft(cufftResult result, const char* what) {
  if (result == CUFFT_SUCCESS) return;
  std::string message = std::string(what) + " failed: " + result_name(result) + " (" +
                        std::to_string(result) + ")";
  if (result == CUFFT_ALLOC_FAILED) throw OutOfMemoryError(message);
  throw CudaError(message);
}

void execute_fft(int device, const FftPlanKey& key, const void* in, void* out, int direction,
                 CUstream stream) {
  const CufftApi& api = cufft();
  PlanCache& cache = cache_of(device);
  std::vector<PlanRef> evicted;  // declared first: released after the lock
  std::unique_lock lock(cache.mutex);
  PlanRef plan = plan_for(cache, key, lock, evicted);
  std::shared_ptr<Storage> work;
  if (plan->work_bytes > 0) work = allocate_storage(plan->work_bytes, device, stream);
  cufftHandle h = plan->handle;
  check_cufft(api.cufftSetStream(h, stream), "cufftSetStream");
  check_cufft(api.cufftSetWorkArea(h, work ? work->data() : nullptr), "cufftSetWorkArea");
  // cuFFT takes non-const pointers; it writes `in` only for C2R, and callers hand C2R a
  // buffer of their own.
  void* src = const_cast<void*>(in);
  cufftResult result = CUFFT_SUCCESS;
  switch (key.type) {
    case CUFFT_C2C: result = api.cufftExecC2C(h, src, out, direction); break;
    case CUFFT_Z2Z: result = api.cufftExecZ2Z(h, src, out, direction); break;
    case CUFFT_R2C: result = api.cufftExecR2C(h, src, out); break;
    case CUFFT_D2Z: result = api.cufftExecD2Z(h, src, out); break;
    case CUFFT_C2R: result = api.cufftExecC2R(h, src, out); break;
    case CUFFT_Z2D: result = api.cufftExecZ2D(h, src, out); break;
  }
  check_cufft(result, "cufftExec");
}

FftPlanCacheInfo fft_plan_cache_info(int device) {
  check_device(device);
  PlanCache& cache = cache_of(device);
  std::lock_guard lock(cache.mutex);
  FftPlanCacheInfo info = cache.info();
  return info;
}

void set_fft_plan_cache_capacity(int64_t capacity) {
  if (capacity < 0)
    throw ValueError("the cuFFT plan cache capacity must be >= 0, got " +
                     std::to_string(capacity));
  std::vector<PlanRef> evicted;  // released after the locks
  std::lock_guard lock(caches_mutex);
  default_capacity = capacity;
  for (PlanCache* c : caches)
    if (c) {
      std::lock_guard plan_lock(c->mutex);
      c->set_capacity(capacity, evicted);
    }
}

void clear_fft_plan_cache() {
  std::vector<PlanRef> evicted;
  std::lock_guard lock(caches_mutex);
  for (PlanCache* c : caches)
    if (c) {
      std::lock_guard plan_lock(c->mutex);
      c->trim(0, evicted);
    }
}

}  // namespace xrt::cuda
