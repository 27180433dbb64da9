// cpp/src/core/caching_allocator.cpp: the caching allocator's algorithm (see Note [Caching
// allocator] in xpuruntime/caching_allocator.h).
#include "xpuruntime/caching_allocator.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <set>

#include "xpuruntime/errors.h"

namespace xrt {
namespace {

struct Pool;

}  // namespace

struct CachedBlock {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;          // what the caller asked for, while allocated
  StreamId stream = 0;           // the stream of its segment
  Pool* pool = nullptr;
  CachingAllocator* owner = nullptr;
  CachedBlock* prev = nullptr;   // neighbours in the segment, in address order
  CachedBlock* next = nullptr;
  bool allocated = false;
  int pending_events = 0;        // events to wait for before it is free
  std::vector<StreamId> stream_uses;  // other streams it was used on (capacity recycled)

  bool is_split() const { return prev || next; }
  // Free means in its pool's free set; a free block's neighbours are never free.
  bool is_free() const { return !allocated && pending_events == 0; }
};

namespace {

struct SizeKey {
  StreamId stream;
  size_t size;
};

// (stream, size, address): lower_bound of a SizeKey is the best fit on that stream.
struct BlockOrder {
  using is_transparent = void;
  bool operator()(const CachedBlock* a, const CachedBlock* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    if (a->size != b->size) return a->size < b->size;
    return a->ptr < b->ptr;
  }
  bool operator()(const CachedBlock* a, SizeKey b) const {
    return a->stream != b.stream ? a->stream < b.stream : a->size < b.size;
  }
  bool operator()(SizeKey a, const CachedBlock* b) const {
    return a.stream != b->stream ? a.stream < b->stream : a.size <= b->size;
  }
};

// Keeps freed tree nodes for the next insert, so a warm free set never calls the heap.
class NodeCache {
 public:
  NodeCache() = default;
  NodeCache(const NodeCache&) = delete;
  ~NodeCache() {
    for (void* node : spare_) ::operator delete(node);
  }
  void* take(size_t bytes) {
    if (node_bytes_ == 0) node_bytes_ = bytes;
    if (bytes != node_bytes_ || spare_.empty()) return ::operator new(bytes);
    void* node = spare_.back();
    spare_.pop_back();
    return node;
  }
  void give(void* node, size_t bytes) {
    if (bytes != node_bytes_) return ::operator delete(node);
    spare_.push_back(node);
  }

 private:
  size_t node_bytes_ = 0;
  std::vector<void*> spare_;
};

template <class T>
struct Recycling {
  using value_type = T;
  NodeCache* cache;
  explicit Recycling(NodeCache* c) : cache(c) {}
  template <class U>
  Recycling(const Recycling<U>& other) : cache(other.cache) {}
  T* allocate(size_t n) { return static_cast<T*>(cache->take(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { cache->give(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const Recycling<U>& other) const { return cache == other.cache; }
};

using FreeSet = std::set<CachedBlock*, BlockOrder, Recycling<CachedBlock*>>;

struct PrivatePool;

struct Pool {
  Pool(NodeCache* nodes, bool is_small, PrivatePool* owner)
      : blocks(BlockOrder{}, Recycling<CachedBlock*>(nodes)), small(is_small),
        private_pool(owner) {}
  FreeSet blocks;
  bool small;
  PrivatePool* private_pool;  // nullptr for the shared pools
};

struct PrivatePool {
  PrivatePool(PoolId pool_id, NodeCache* nodes)
      : id(pool_id), small(nodes, true, this), large(nodes, false, this) {}
  PoolId id;
  Pool small, large;
  StreamId stream = 0;
  bool open = false;      // routing its stream's allocations here
  bool released = false;  // its owner is gone
  size_t segments = 0;
};

int stat_index(const Pool& pool) { return pool.small ? kStatSmall : kStatLarge; }

void increase(Stat (&stat)[3], int pool, int64_t n) {
  stat[kStatAll].increase(n);
  stat[pool].increase(n);
}

void decrease(Stat (&stat)[3], int pool, int64_t n) {
  stat[kStatAll].decrease(n);
  stat[pool].decrease(n);
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

struct CachingAllocator::State {
  State(CachingAllocator* owner, RawMemory& raw_memory, std::string name)
      : self(owner), raw(raw_memory), device_name(std::move(name)) {}

  CachingAllocator* self;
  RawMemory& raw;
  std::string device_name;
  mutable std::mutex mutex;
  NodeCache nodes;  // before the pools: outlives their sets
  Pool small{&nodes, true, nullptr};
  Pool large{&nodes, false, nullptr};
  std::deque<CachedBlock> block_arena;  // stable addresses
  std::vector<CachedBlock*> spare_blocks;
  std::map<uintptr_t, CachedBlock*> segments;  // first block of each segment
  std::map<PoolId, std::unique_ptr<PrivatePool>> private_pools;
  std::vector<std::unique_ptr<PrivatePool>> released_pools;  // until their last segment goes
  std::vector<PrivatePool*> open_pools;
  std::vector<CachedBlock*> deferred;  // freed during a capture, used on other streams
  std::vector<std::pair<RawMemory::Event, CachedBlock*>> pending;
  std::vector<RawMemory::Event> spare_events;
  MemoryStats stats;
  size_t limit = 0;

  CachedBlock* new_block() {
    CachedBlock* b;
    if (spare_blocks.empty()) {
      b = &block_arena.emplace_back();
    } else {
      b = spare_blocks.back();
      spare_blocks.pop_back();
    }
    b->owner = self;
    return b;
  }

  void recycle(CachedBlock* b) {
    b->prev = b->next = nullptr;
    b->allocated = false;
    b->pending_events = 0;
    b->stream_uses.clear();
    spare_blocks.push_back(b);
  }

  Pool& pool_for(size_t size, StreamId stream) {
    bool is_small = size <= kSmallRequest;
    for (PrivatePool* p : open_pools)
      if (p->stream == stream) return is_small ? p->small : p->large;
    return is_small ? small : large;
  }

  void insert_free(CachedBlock* b) {
    b->pool->blocks.insert(b);
    if (b->is_split()) {
      increase(stats.inactive_split, stat_index(*b->pool), 1);
      increase(stats.inactive_split_bytes, stat_index(*b->pool), int64_t(b->size));
    }
  }

  void erase_free(CachedBlock* b) { erase_free(b->pool->blocks.find(b)); }

  void erase_free(FreeSet::iterator it) {
    CachedBlock* b = *it;
    b->pool->blocks.erase(it);
    if (b->is_split()) {
      decrease(stats.inactive_split, stat_index(*b->pool), 1);
      decrease(stats.inactive_split_bytes, stat_index(*b->pool), int64_t(b->size));
    }
  }

  CachedBlock* take_free(Pool& pool, StreamId stream, size_t size) {
    auto it = pool.blocks.lower_bound(SizeKey{stream, size});
    if (it == pool.blocks.end() || (*it)->stream != stream) return nullptr;
    CachedBlock* b = *it;
    erase_free(it);
    return b;
  }

  // A fresh segment for a request of size (rounded), as one unsplit block; nullptr when
  // the device or the limit says no.
  CachedBlock* new_segment(Pool& pool, StreamId stream, size_t size) {
    size_t want = pool.small ? kSmallSegment : segment_size(size);
    size_t least = pool.small ? kSmallSegment : round_up(size, kLargeRound);
    // Note: a 20 MiB segment for a mid-size request is a bet on reuse; when the device or
    // the limit cannot give that much, the request alone may still fit.
    size_t tries[2] = {want, least};
    for (int i = 0; i < (least < want ? 2 : 1); ++i) {
      size_t bytes = tries[i];
      int64_t reserved = stats.reserved_bytes[kStatAll].current;
      if (limit && size_t(reserved) + bytes > limit) continue;
      void* ptr = raw.allocate(bytes);
      if (!ptr) continue;
      ++stats.num_device_alloc;
      increase(stats.segment, stat_index(pool), 1);
      increase(stats.reserved_bytes, stat_index(pool), int64_t(bytes));
      CachedBlock* b = new_block();
      b->ptr = static_cast<char*>(ptr);
      b->size = bytes;
      b->stream = stream;
      b->pool = &pool;
      segments[reinterpret_cast<uintptr_t>(ptr)] = b;
      if (pool.private_pool) ++pool.private_pool->segments;
      return b;
    }
    return nullptr;
  }

  // b is one whole free segment, out of every set: back to the device.
  void free_segment(CachedBlock* b) {
    Pool& pool = *b->pool;
    raw.free(b->ptr, b->size);
    ++stats.num_device_free;
    decrease(stats.segment, stat_index(pool), 1);
    decrease(stats.reserved_bytes, stat_index(pool), int64_t(b->size));
    segments.erase(reinterpret_cast<uintptr_t>(b->ptr));
    recycle(b);
    if (pool.private_pool) --pool.private_pool->segments;
  }

  // A released private pool goes once its last segment has.
  void drop_if_done(PrivatePool* p) {
    if (!p->released || p->segments > 0) return;
    auto it = std::find_if(released_pools.begin(), released_pools.end(),
                           [p](const auto& q) { return q.get() == p; });
    if (it != released_pools.end()) released_pools.erase(it);
  }

  // Note: while a graph captures, nothing may wait on the host or query events (the global
  // capture mode forbids it), so pending events are left alone and events for blocks used on
  // other streams are recorded once the capture is over, as PyTorch does.
  bool capturing() const { return !open_pools.empty(); }

  // The block was used on other streams: an event on each, and it waits for them all.
  void record_uses(CachedBlock* b) {
    for (StreamId stream : b->stream_uses) {
      RawMemory::Event event = take_event();
      ++b->pending_events;
      try {
        raw.record_event(event, stream);
      } catch (...) {
        // Note: without its event there is no telling when the other stream is done with
        // the block: it stays out of circulation (a leak, not a corruption).
        spare_events.push_back(event);
        b->stream_uses.clear();
        throw;
      }
      pending.emplace_back(event, b);
    }
    b->stream_uses.clear();  // keeps the capacity for the next record_stream
  }

  void record_deferred() {
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

  // The block is no longer allocated nor awaited: merge with free neighbours and file it
  // (or give its segment back, for a released private pool).
  void release_block(CachedBlock* b) {
    Pool& pool = *b->pool;
    decrease(stats.active, stat_index(pool), 1);
    decrease(stats.active_bytes, stat_index(pool), int64_t(b->size));
    // Note: the lower block survives a merge, so a segment's first block (the key of
    // `segments`) never changes.
    if (CachedBlock* prev = b->prev; prev && prev->is_free()) {
      erase_free(prev);
      prev->size += b->size;
      prev->next = b->next;
      if (b->next) b->next->prev = prev;
      recycle(b);
      b = prev;
    }
    if (CachedBlock* next = b->next; next && next->is_free()) {
      erase_free(next);
      b->size += next->size;
      b->next = next->next;
      if (next->next) next->next->prev = b;
      recycle(next);
    }
    if (PrivatePool* p = pool.private_pool; p && p->released && !b->is_split()) {
      free_segment(b);
      drop_if_done(p);
      return;
    }
    insert_free(b);
  }

  void event_finished(RawMemory::Event event, CachedBlock* b) {
    spare_events.push_back(event);
    if (--b->pending_events == 0) release_block(b);
  }

  void process_events() {
    size_t kept = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      auto [event, block] = pending[i];
      if (raw.event_done(event)) event_finished(event, block);
      else pending[kept++] = pending[i];
    }
    pending.resize(kept);
  }

  void wait_for_events() {
    auto waiting = std::move(pending);
    pending.clear();
    for (auto [event, block] : waiting) {
      raw.wait_event(event);
      event_finished(event, block);
    }
  }

  RawMemory::Event take_event() {
    if (spare_events.empty()) return raw.create_event();
    RawMemory::Event e = spare_events.back();
    spare_events.pop_back();
    return e;
  }

  void free_unsplit(Pool& pool) {
    for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
      CachedBlock* b = *it;
      if (b->is_split()) {
        ++it;
        continue;
      }
      it = pool.blocks.erase(it);
      free_segment(b);
    }
  }

  // Everything the cache holds that nothing uses goes back to the device.
  void release_cached() {
    if (!capturing()) {
      wait_for_events();
      raw.synchronize();
    }
    free_unsplit(small);
    free_unsplit(large);
    // A private pool belongs to its graph until released (and then empties as it goes).
  }

  std::string oom_message(size_t nbytes) const {
    DeviceMemoryInfo info;
    std::string device_free = "unknown";
    try {
      info = raw.memory_info();
      device_free = format_bytes(int64_t(info.free)) + " of " + format_bytes(int64_t(info.total));
    } catch (...) {
    }
    const MemoryStats& s = stats;
    return "out of memory on " + device_name + ": tried to allocate " +
           format_bytes(int64_t(nbytes)) + "; " +
           format_bytes(s.allocated_bytes[kStatAll].current) + " allocated and " +
           format_bytes(s.reserved_bytes[kStatAll].current) +
           " reserved by xpuruntime; free on the device: " + device_free + "; limit: " +
           (limit ? format_bytes(int64_t(limit)) : std::string("none")) +
           ". Free tensors, or see memory_summary().";
  }


  void close(PrivatePool& p) {
    p.open = false;
    open_pools.erase(std::find(open_pools.begin(), open_pools.end(), &p));
    if (!capturing() && !deferred.empty()) record_deferred();
  }
};

CachingAllocator::CachingAllocator(RawMemory& raw, std::string device_name)
    : state_(std::make_unique<State>(this, raw, std::move(device_name))) {}

CachingAllocator::~CachingAllocator() {
  State& s = *state_;
  try {
    for (auto [event, block] : s.pending) s.raw.destroy_event(event);
    for (RawMemory::Event e : s.spare_events) s.raw.destroy_event(e);
    s.pending.clear();
    s.free_unsplit(s.small);
    s.free_unsplit(s.large);
    for (auto& [id, p] : s.private_pools) {
      s.free_unsplit(p->small);
      s.free_unsplit(p->large);
    }
    for (auto& p : s.released_pools) {
      s.free_unsplit(p->small);
      s.free_unsplit(p->large);
    }
  } catch (...) {
  }
  // Sets that still hold blocks die with their pools; the arena frees the nodes.
}

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes == 0) return kRound;
  return round_up(nbytes, kRound);
}

size_t CachingAllocator::segment_size(size_t rounded) {
  if (rounded <= kSmallRequest) return kSmallSegment;
  if (rounded < kMidRequest) return kMidSegment;
  return round_up(rounded, kLargeRound);
}

CachedBlock* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (nbytes > (size_t{1} << 60)) {  // no device has that; also keeps rounding exact
    ++s.stats.num_ooms;
    throw OutOfMemoryError(s.oom_message(nbytes));
  }
  if (!s.pending.empty() && !s.capturing()) s.process_events();
  size_t size = round_size(nbytes);
  Pool& pool = s.pool_for(size, stream);
  CachedBlock* b = s.take_free(pool, stream, size);
  if (!b) b = s.new_segment(pool, stream, size);
  if (!b) {
    ++s.stats.num_alloc_retries;
    s.release_cached();
    b = s.take_free(pool, stream, size);
    if (!b) b = s.new_segment(pool, stream, size);
    if (!b) {
      ++s.stats.num_ooms;
      throw OutOfMemoryError(s.oom_message(nbytes));
    }
  }
  size_t rest = b->size - size;
  if (pool.small ? rest >= kRound : rest > kSmallRequest) {
    CachedBlock* r = s.new_block();
    r->ptr = b->ptr + size;
    r->size = rest;
    r->stream = b->stream;
    r->pool = &pool;
    r->prev = b;
    r->next = b->next;
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    s.insert_free(r);
  }
  b->allocated = true;
  b->requested = nbytes;
  int k = stat_index(pool);
  increase(s.stats.allocation, k, 1);
  increase(s.stats.allocated_bytes, k, int64_t(b->size));
  increase(s.stats.requested_bytes, k, int64_t(nbytes));
  increase(s.stats.active, k, 1);
  increase(s.stats.active_bytes, k, int64_t(b->size));
  return b;
}

void CachingAllocator::free(CachedBlock* b) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  int k = stat_index(*b->pool);
  b->allocated = false;
  decrease(s.stats.allocation, k, 1);
  decrease(s.stats.allocated_bytes, k, int64_t(b->size));
  decrease(s.stats.requested_bytes, k, int64_t(b->requested));
  if (!b->stream_uses.empty()) {
    if (s.capturing()) {
      ++b->pending_events;
      s.deferred.push_back(b);
    } else {
      s.record_uses(b);
    }
    return;
  }
  s.release_block(b);
}

void CachingAllocator::record_stream(CachedBlock* b, StreamId stream) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (!b->allocated) throw ValueError("record_stream on memory that is not allocated");
  // Note: a graph-private block is reused only by its graph, whose replays keep their
  // own order; events recorded while capturing would become graph nodes.
  if (stream == b->stream || b->pool->private_pool) return;
  if (std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
}

CachedBlock* CachingAllocator::find(const void* address) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  auto at = reinterpret_cast<uintptr_t>(address);
  auto it = s.segments.upper_bound(at);
  if (it == s.segments.begin()) return nullptr;
  for (CachedBlock* b = std::prev(it)->second; b; b = b->next) {
    auto begin = reinterpret_cast<uintptr_t>(b->ptr);
    if (at < begin) break;
    if (at < begin + b->size) return b->allocated ? b : nullptr;
  }
  return nullptr;
}

void* CachingAllocator::data(const CachedBlock* b) { return b->ptr; }
size_t CachingAllocator::size(const CachedBlock* b) { return b->size; }
CachingAllocator& CachingAllocator::owner(const CachedBlock* b) { return *b->owner; }

void CachingAllocator::empty_cache() {
  std::lock_guard lock(state_->mutex);
  state_->release_cached();
}

void CachingAllocator::set_limit(size_t bytes) {
  std::lock_guard lock(state_->mutex);
  state_->limit = bytes;
}

size_t CachingAllocator::limit() const {
  std::lock_guard lock(state_->mutex);
  return state_->limit;
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(state_->mutex);
  MemoryStats s = state_->stats;
  s.limit = int64_t(state_->limit);
  return s;
}

namespace {

template <class Fn>
void for_each_stat(MemoryStats& s, Fn fn) {
  for (Stat* group : {s.allocation, s.segment, s.active, s.inactive_split, s.allocated_bytes,
                      s.reserved_bytes, s.active_bytes, s.inactive_split_bytes,
                      s.requested_bytes})
    for (int i = 0; i < 3; ++i) fn(group[i]);
}

}  // namespace

void CachingAllocator::reset_peak_stats() {
  std::lock_guard lock(state_->mutex);
  for_each_stat(state_->stats, [](Stat& st) { st.peak = st.current; });
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard lock(state_->mutex);
  MemoryStats& s = state_->stats;
  for_each_stat(s, [](Stat& st) { st.allocated = st.freed = 0; });
  s.num_alloc_retries = s.num_ooms = s.num_device_alloc = s.num_device_free = 0;
}

std::vector<SegmentInfo> CachingAllocator::snapshot() const {
  std::lock_guard lock(state_->mutex);
  std::vector<SegmentInfo> out;
  for (auto [address, head] : state_->segments) {
    SegmentInfo seg{address, 0, head->stream, head->pool->small,
                    head->pool->private_pool ? head->pool->private_pool->id : 0, {}};
    for (CachedBlock* b = head; b; b = b->next) {
      seg.size += b->size;
      seg.blocks.push_back({reinterpret_cast<uintptr_t>(b->ptr), b->size, b->allocated,
                            !b->allocated && b->pending_events > 0});
    }
    out.push_back(std::move(seg));
  }
  return out;
}

std::string CachingAllocator::summary() const {
  return format_summary(stats(), state_->device_name);
}

const std::string& CachingAllocator::device_name() const { return state_->device_name; }

void CachingAllocator::begin_private_pool(PoolId id, StreamId stream) {
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
