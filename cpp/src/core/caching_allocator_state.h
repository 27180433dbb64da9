// cpp/src/core/caching_allocator_state.h: what a CachingAllocator holds behind its mutex,
// shared by the algorithm (caching_allocator.cpp) and the graph-private pools
// (private_pools.cpp).
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/block_pools.h"
#include "core/light_mutex.h"

namespace xrt {

struct CachingAllocator::State {
  State(CachingAllocator* owner, RawMemory& raw_memory, std::string name)
      : self(owner), raw(raw_memory), device_name(std::move(name)) {}

  CachingAllocator* self;
  RawMemory& raw;
  std::string device_name;
  mutable LightMutex mutex;  // Note [Light mutex]
  caching::NodeCache nodes;  // before the pools: outlives their sets
  caching::Pool small{&nodes, true, nullptr};
  caching::Pool large{&nodes, false, nullptr};
  std::deque<CachedBlock> block_arena;  // stable addresses
  std::vector<CachedBlock*> spare_blocks;
  std::map<uintptr_t, CachedBlock*> segments;  // first block of each segment
  std::map<PoolId, std::unique_ptr<caching::PrivatePool>> private_pools;
  // Released pools stay until their last segment goes.
  std::vector<std::unique_ptr<caching::PrivatePool>> released_pools;
  std::vector<caching::PrivatePool*> open_pools;
  std::vector<CachedBlock*> deferred;  // freed during a capture, used on other streams
  std::vector<std::pair<RawMemory::Event, CachedBlock*>> pending;
  std::vector<RawMemory::Event> spare_events;
  MemoryStatistics statistics;
  MemoryObserver* observer = nullptr;  // the profiler's hook

  // Tells the statistics, then the observer if any: report([&](auto& o) { o.hook(...); }).
  // Note: the statistics get a direct call (MemoryStatistics is final), so the counting
  // inlines as before; only a set observer costs a virtual call.
  template <class Fn>
  void report(Fn&& tell) {
    tell(statistics);
    if (observer) tell(*observer);
  }

  // Blocks, free sets and segments (caching_allocator.cpp).
  CachedBlock* new_block();
  void recycle(CachedBlock* b);
  caching::Pool& pool_for(size_t size, StreamId stream);
  void insert_free(CachedBlock* b);
  void erase_free(caching::FreeSet::iterator it);
  /// The best-fit free block of stream for size, still in its set (end() when none).
  caching::FreeSet::iterator best_fit(caching::Pool& pool, StreamId stream, size_t size);
  CachedBlock* take_free(caching::Pool& pool, StreamId stream, size_t size);
  void refile(caching::FreeSet& set, caching::FreeSet::iterator at, CachedBlock* b);
  CachedBlock* new_segment(caching::Pool& pool, StreamId stream, size_t size);
  void free_segment(CachedBlock* b);
  void free_unsplit(caching::Pool& pool);
  void release_block(CachedBlock* b);
  void release_cached();
  std::string oom_message(size_t nbytes) const;

  // Events of blocks used on other streams (caching_allocator.cpp).
  void record_uses(CachedBlock* b);
  void event_finished(RawMemory::Event event, CachedBlock* b);
  void process_events();
  void wait_for_events();
  RawMemory::Event take_event();

  // Graph-private pools (private_pools.cpp).
  // Note: while a graph captures, nothing may wait on the host or query events (the global
  // capture mode forbids it), so pending events are left alone and events for blocks used
  // on other streams are recorded once the capture is over, as PyTorch does.
  bool capturing() const { return !open_pools.empty(); }
  void record_deferred();
  void drop_if_done(caching::PrivatePool* p);
  void close(caching::PrivatePool& p);
};

}  // namespace xrt
