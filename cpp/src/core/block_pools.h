// cpp/src/core/block_pools.h: the caching allocator's bookkeeping: blocks chained in address
// order within their segment, and pools whose free sets are ordered for best fit and
// recycle their nodes.
#pragma once
#include <set>
#include <vector>

#include "xpuruntime/caching_allocator.h"

namespace xrt {
namespace caching {

struct Pool;

}  // namespace caching

struct CachedBlock {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;          // what the caller asked for, while allocated
  StreamId stream = 0;           // the stream of its segment
  caching::Pool* pool = nullptr;
  CachingAllocator* owner = nullptr;
  CachedBlock* prev = nullptr;   // neighbours in the segment, in address order
  CachedBlock* next = nullptr;
  bool allocated = false;
  int pending_events = 0;        // events to wait for before it is free
  std::vector<Stream> stream_uses;  // other streams it was used on (capacity recycled)

  bool is_split() const { return prev || next; }
  // Free means in its pool's free set; a free block's neighbours are never free.
  bool is_free() const { return !allocated && pending_events == 0; }
};

namespace caching {

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

// What observers are told about a block or a segment.
inline MemoryEvent event_of(const CachedBlock* b, size_t requested = 0) {
  return {b->ptr, b->size, requested, b->stream, b->pool->small};
}

}  // namespace caching
}  // namespace xrt
