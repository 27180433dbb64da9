// cpp/src/core/caching_allocator.cpp: the caching allocator's algorithm (see Note [Caching
// allocator] in xpuruntime/caching_allocator.h): blocks, splits and merges, segments, and
// the events that hold back blocks used on other streams.
#include "xpuruntime/caching_allocator.h"

#include <algorithm>

#include "core/caching_allocator_state.h"
#include "xpuruntime/errors.h"

namespace xrt {

using caching::event_of;
using caching::FreeSet;
using caching::Pool;
using caching::PrivatePool;

namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

CachedBlock* CachingAllocator::State::new_block() {
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

void CachingAllocator::State::recycle(CachedBlock* b) {
  b->prev = b->next = nullptr;
  b->allocated = false;
  b->pending_events = 0;
  b->stream_uses.clear();
  spare_blocks.push_back(b);
}

Pool& CachingAllocator::State::pool_for(size_t size, StreamId stream) {
  bool is_small = size <= kSmallRequest;
  for (PrivatePool* p : open_pools)
    if (p->stream == stream) return is_small ? p->small : p->large;
  return is_small ? small : large;
}

void CachingAllocator::State::insert_free(CachedBlock* b) {
  b->pool->blocks.insert(b);
  if (b->is_split()) statistics.split_block_cached(event_of(b));
}

void CachingAllocator::State::erase_free(FreeSet::iterator it) {
  CachedBlock* b = *it;
  b->pool->blocks.erase(it);
  if (b->is_split()) statistics.split_block_uncached(event_of(b));
}

FreeSet::iterator CachingAllocator::State::best_fit(Pool& pool, StreamId stream, size_t size) {
  auto it = pool.blocks.lower_bound(caching::SizeKey{stream, size});
  if (it != pool.blocks.end() && (*it)->stream != stream) return pool.blocks.end();
  return it;
}

CachedBlock* CachingAllocator::State::take_free(Pool& pool, StreamId stream, size_t size) {
  auto it = best_fit(pool, stream, size);
  if (it == pool.blocks.end()) return nullptr;
  CachedBlock* b = *it;
  erase_free(it);
  return b;
}

// Note [Refiling a free block]: a tiny op's allocation splits the same free block every
// time, and its free merges the two back: the free set loses one block and gains another
// twice per op. The newcomer usually sorts exactly where the leaver was (nothing free lies
// between their sizes on that stream), so the set's node at `at` takes b in place: no
// rebalancing, no node. Otherwise, an erase and an insert. The node's previous block may
// have changed size already (a merge): erasing by iterator compares nothing. Statistics
// are the caller's.
void CachingAllocator::State::refile(FreeSet& set, FreeSet::iterator at, CachedBlock* b) {
  const caching::BlockOrder less;
  bool fits = at == set.begin() || less(*std::prev(at), b);
  if (fits) {
    auto after = std::next(at);
    fits = after == set.end() || less(b, *after);
  }
  if (fits) {
    // The set's value type is CachedBlock*; its nodes hold non-const storage, and the
    // order is unchanged.
    const_cast<CachedBlock*&>(*at) = b;
    return;
  }
  set.erase(at);
  set.insert(b);
}

// A fresh segment for a request of size (rounded), as one unsplit block; nullptr when the
// raw memory (the device, or a limit over it) says no.
CachedBlock* CachingAllocator::State::new_segment(Pool& pool, StreamId stream, size_t size) {
  size_t want = pool.small ? kSmallSegment : segment_size(size);
  size_t least = pool.small ? kSmallSegment : round_up(size, kLargeRound);
  // Note: a 20 MiB segment for a mid-size request is a bet on reuse; when the device or
  // the limit cannot give that much, the request alone may still fit.
  size_t tries[2] = {want, least};
  for (int i = 0; i < (least < want ? 2 : 1); ++i) {
    size_t bytes = tries[i];
    void* ptr = raw.allocate(bytes);
    if (!ptr) continue;
    CachedBlock* b = new_block();
    b->ptr = static_cast<char*>(ptr);
    b->size = bytes;
    b->stream = stream;
    b->pool = &pool;
    segments[reinterpret_cast<uintptr_t>(ptr)] = b;
    if (pool.private_pool) ++pool.private_pool->segments;
    report([&](auto& o) { o.segment_allocated(event_of(b)); });
    return b;
  }
  return nullptr;
}

// b is one whole free segment, out of every set: back to the device.
void CachingAllocator::State::free_segment(CachedBlock* b) {
  Pool& pool = *b->pool;
  raw.free(b->ptr, b->size);
  report([&](auto& o) { o.segment_freed(event_of(b)); });
  segments.erase(reinterpret_cast<uintptr_t>(b->ptr));
  recycle(b);
  if (pool.private_pool) --pool.private_pool->segments;
}

void CachingAllocator::State::free_unsplit(Pool& pool) {
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

// The block is no longer allocated nor awaited: merge with free neighbours and file it (or
// give its segment back, for a released private pool).
void CachingAllocator::State::release_block(CachedBlock* b) {
  Pool& pool = *b->pool;
  FreeSet& set = pool.blocks;
  report([&](auto& o) { o.block_released(event_of(b)); });
  // Free neighbours merge into b; the merged block takes one of their nodes in the free
  // set (Note [Refiling a free block]). Both are found before any size changes, since the
  // set orders by size.
  CachedBlock* prev = b->prev && b->prev->is_free() ? b->prev : nullptr;
  CachedBlock* next = b->next && b->next->is_free() ? b->next : nullptr;
  FreeSet::iterator node = prev ? set.find(prev) : set.end();
  if (next) {
    auto it = set.find(next);
    if (node == set.end()) node = it;
    else set.erase(it);
  }
  // Note: the lower block survives a merge, so a segment's first block (the key of
  // `segments`) never changes.
  if (prev) {
    statistics.split_block_uncached(event_of(prev));  // it had b for a neighbour
    prev->size += b->size;
    prev->next = b->next;
    if (b->next) b->next->prev = prev;
    recycle(b);
    b = prev;
  }
  if (next) {
    statistics.split_block_uncached(event_of(next));
    b->size += next->size;
    b->next = next->next;
    if (next->next) next->next->prev = b;
    recycle(next);
  }
  if (PrivatePool* p = pool.private_pool; p && p->released && !b->is_split()) {
    if (node != set.end()) set.erase(node);
    free_segment(b);
    drop_if_done(p);
    return;
  }
  if (node == set.end()) return insert_free(b);
  refile(set, node, b);
  if (b->is_split()) statistics.split_block_cached(event_of(b));
}

// Everything the cache holds that nothing uses goes back to the device.
void CachingAllocator::State::release_cached() {
  if (!capturing()) {
    wait_for_events();
    raw.synchronize();
  }
  free_unsplit(small);
  free_unsplit(large);
  // A private pool belongs to its graph until released (and then empties as it goes).
}

std::string CachingAllocator::State::oom_message(size_t nbytes) const {
  std::string device_free = "unknown";
  try {
    DeviceMemoryInfo info = raw.memory_info();
    device_free = format_bytes(int64_t(info.free)) + " of " + format_bytes(int64_t(info.total));
  } catch (...) {
  }
  const MemoryStats& s = statistics.stats();
  size_t limit = raw.limit();
  return "out of memory on " + device_name + ": tried to allocate " +
         format_bytes(int64_t(nbytes)) + "; " +
         format_bytes(s.allocated_bytes[kStatAll].current) + " allocated and " +
         format_bytes(s.reserved_bytes[kStatAll].current) +
         " reserved by xpuruntime; free on the device: " + device_free + "; limit: " +
         (limit ? format_bytes(int64_t(limit)) : std::string("none")) +
         ". Free tensors, or see memory_summary().";
}

// The block was used on other streams: an event on each, and it waits for them all.
void CachingAllocator::State::record_uses(CachedBlock* b) {
  for (const Stream& stream : b->stream_uses) {
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

void CachingAllocator::State::event_finished(RawMemory::Event event, CachedBlock* b) {
  spare_events.push_back(event);
  if (--b->pending_events == 0) release_block(b);
}

void CachingAllocator::State::process_events() {
  size_t kept = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    auto [event, block] = pending[i];
    if (raw.event_done(event)) event_finished(event, block);
    else pending[kept++] = pending[i];
  }
  pending.resize(kept);
}

void CachingAllocator::State::wait_for_events() {
  auto waiting = std::move(pending);
  pending.clear();
  for (auto [event, block] : waiting) {
    raw.wait_event(event);
    event_finished(event, block);
  }
}

RawMemory::Event CachingAllocator::State::take_event() {
  if (spare_events.empty()) return raw.create_event();
  RawMemory::Event e = spare_events.back();
  spare_events.pop_back();
  return e;
}

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

CachedBlock* CachingAllocator::allocate(size_t nbytes, const Stream& on) {
  StreamId stream = on.address();
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (nbytes > (size_t{1} << 60)) {  // no device has that; also keeps rounding exact
    s.report([&](auto& o) { o.out_of_memory(nbytes); });
    throw OutOfMemoryError(s.oom_message(nbytes));
  }
  if (!s.pending.empty() && !s.capturing()) s.process_events();
  size_t size = round_size(nbytes);
  Pool& pool = s.pool_for(size, stream);
  CachedBlock* b = nullptr;
  FreeSet::iterator node = s.best_fit(pool, stream, size);
  if (node != pool.blocks.end()) {
    b = *node;
    if (b->is_split()) s.statistics.split_block_uncached(event_of(b));
  } else {
    b = s.new_segment(pool, stream, size);
  }
  if (!b) {
    s.report([&](auto& o) { o.allocation_retried(nbytes); });
    s.release_cached();
    b = s.take_free(pool, stream, size);
    if (!b) b = s.new_segment(pool, stream, size);
    if (!b) {
      s.report([&](auto& o) { o.out_of_memory(nbytes); });
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
    // The remainder takes the taken block's node (Note [Refiling a free block]).
    if (node != pool.blocks.end()) {
      s.refile(pool.blocks, node, r);
      s.statistics.split_block_cached(event_of(r));
    } else {
      s.insert_free(r);
    }
  } else if (node != pool.blocks.end()) {
    pool.blocks.erase(node);
  }
  b->allocated = true;
  b->requested = nbytes;
  s.report([&](auto& o) { o.block_allocated(event_of(b, nbytes)); });
  return b;
}

void CachingAllocator::free(CachedBlock* b) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  b->allocated = false;
  s.report([&](auto& o) { o.block_freed(event_of(b, b->requested)); });
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

void CachingAllocator::record_stream(CachedBlock* b, const Stream& stream) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (!b->allocated) throw ValueError("record_stream on memory that is not allocated");
  // Note: a graph-private block is reused only by its graph, whose replays keep their
  // own order; events recorded while capturing would become graph nodes.
  if (stream.address() == b->stream || b->pool->private_pool) return;
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

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(state_->mutex);
  MemoryStats s = state_->statistics.stats();
  s.limit = int64_t(state_->raw.limit());
  return s;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard lock(state_->mutex);
  state_->statistics.reset_peak();
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard lock(state_->mutex);
  state_->statistics.reset_accumulated();
}

void CachingAllocator::set_observer(MemoryObserver* observer) {
  std::lock_guard lock(state_->mutex);
  state_->observer = observer;
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

}  // namespace xrt
