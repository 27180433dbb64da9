// cpp/src/core/private_pools.cpp: the caching allocator's graph-private pools (Note
// [Graph-private pools] in xpuruntime/cuda_memory.h) and the event work a capture defers.
#include <algorithm>

#include "core/caching_allocator_state.h"
#include "xpuruntime/caching_allocator.h"
#include "xpuruntime/errors.h"

namespace xrt {

using caching::PrivatePool;

// Blocks freed during a capture while used on other streams get their events now.
void CachingAllocator::State::record_deferred() {
  auto blocks = std::move(deferred);
  deferred.clear();
  for (CachedBlock* b : blocks) {
    --b->pending_events;
    try {
      record_uses(b);
    } catch (...) {
      ++b->pending_events;  // leaked, see record_uses
    }
  }
}

// A released private pool goes once its last segment has.
void CachingAllocator::State::drop_if_done(PrivatePool* p) {
  if (!p->released || p->segments > 0) return;
  auto it = std::find_if(released_pools.begin(), released_pools.end(),
                         [p](const auto& q) { return q.get() == p; });
  if (it != released_pools.end()) released_pools.erase(it);
}

void CachingAllocator::State::close(PrivatePool& p) {
  p.open = false;
  open_pools.erase(std::find(open_pools.begin(), open_pools.end(), &p));
  if (!capturing() && !deferred.empty()) record_deferred();
}

void CachingAllocator::begin_private_pool(PoolId id, const Stream& on) {
  StreamId stream = on.address();
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  for (PrivatePool* p : s.open_pools)
    if (p->stream == stream || p->id == id)
      throw ValueError("a private memory pool is already open for this stream or id on " +
                       s.device_name);
  auto& pool = s.private_pools[id];
  if (!pool) pool = std::make_unique<PrivatePool>(id, &s.nodes);
  pool->stream = stream;
  pool->open = true;
  s.open_pools.push_back(pool.get());
}

void CachingAllocator::end_private_pool(PoolId id) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  auto it = s.private_pools.find(id);
  if (it != s.private_pools.end() && it->second->open) s.close(*it->second);
}

void CachingAllocator::release_private_pool(PoolId id) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  auto it = s.private_pools.find(id);
  if (it == s.private_pools.end()) return;
  PrivatePool* p = it->second.get();
  if (p->open) s.close(*p);
  p->released = true;
  // Note: moved aside, so the id can name a fresh pool (a graph captures again after reset)
  // while blocks of the old one are still alive.
  s.released_pools.push_back(std::move(it->second));
  s.private_pools.erase(it);
  s.free_unsplit(p->small);
  s.free_unsplit(p->large);
  s.drop_if_done(p);
}

}  // namespace xrt
