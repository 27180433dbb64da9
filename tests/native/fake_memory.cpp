// tests/native/fake_memory.cpp: the test double of a device for the caching allocator.
#include "fake_memory.h"

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "xpuruntime/errors.h"

namespace xrt {

void* FakeMemory::allocate(size_t nbytes) {
  if (fail_next_ > 0) {
    --fail_next_;
    return nullptr;
  }
  if (nbytes > capacity_ - used_) return nullptr;
  uintptr_t address = next_address_;
  // Never reused, and 2 MiB apart: a merge across segments would show as a gap.
  next_address_ += (nbytes + (size_t{4} << 20)) & ~((size_t{2} << 20) - 1);
  live_[address] = nbytes;
  used_ += nbytes;
  ++allocations_;
  return reinterpret_cast<void*>(address);
}

void FakeMemory::free(void* ptr, size_t nbytes) {
  auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == live_.end() || it->second != nbytes)
    throw XpuRuntimeError("FakeMemory: free of memory it did not hand out (or of another size)");
  used_ -= nbytes;
  live_.erase(it);
  ++frees_;
}

RawMemory::Event FakeMemory::create_event() { return &events_.emplace_back(); }

void FakeMemory::destroy_event(Event event) { static_cast<FakeEvent*>(event)->destroyed = true; }

void FakeMemory::record_event(Event event, const Stream& stream) {
  auto* e = static_cast<FakeEvent*>(event);
  if (e->destroyed) throw XpuRuntimeError("FakeMemory: record of a destroyed event");
  *e = FakeEvent{stream.address(), true, false, false};
}

bool FakeMemory::event_done(Event event) {
  auto* e = static_cast<FakeEvent*>(event);
  return !e->recorded || e->done;
}

void FakeMemory::wait_event(Event event) {
  ++waits_;
  static_cast<FakeEvent*>(event)->done = true;
}

void FakeMemory::complete(StreamId stream) {
  for (FakeEvent& e : events_)
    if (e.recorded && e.stream == stream) e.done = true;
}

void FakeMemory::complete_all() {
  for (FakeEvent& e : events_) e.done = true;
}

int64_t FakeMemory::events_pending() const {
  int64_t n = 0;
  for (const FakeEvent& e : events_) n += e.recorded && !e.done && !e.destroyed;
  return n;
}

uintptr_t FakeAllocator::allocate(size_t nbytes, StreamId stream) {
  CachedBlock* b = allocator_.allocate(nbytes, fake_stream(stream));
  auto address = reinterpret_cast<uintptr_t>(CachingAllocator::data(b));
  live_[address] = b;
  return address;
}

CachedBlock* FakeAllocator::block(uintptr_t address) const {
  auto it = live_.find(address);
  if (it == live_.end())
    throw ValueError("no block handed out at " + std::to_string(address));
  return it->second;
}

void FakeAllocator::free(uintptr_t address) {
  CachedBlock* b = block(address);
  live_.erase(address);
  allocator_.free(b);
}

void FakeAllocator::record_stream(uintptr_t address, StreamId stream) {
  allocator_.record_stream(block(address), fake_stream(stream));
}

std::pair<int64_t, int64_t> FakeAllocator::hammer(int threads, int iterations,
                                                  bool one_stream) {
  constexpr size_t kGranule = 512;
  const uintptr_t base = uintptr_t{1} << 40;  // FakeMemory's first address
  const size_t granules = memory_.capacity() / kGranule + 1;
  std::vector<std::atomic<int>> owner(granules);
  std::atomic<int64_t> clashes{0}, calls{0};
  // Moves every granule of b from owner `from` to owner `to`, counting those that were not
  // `from`'s.
  auto claim = [&](CachedBlock* b, int from, int to) {
    auto at = reinterpret_cast<uintptr_t>(CachingAllocator::data(b));
    size_t n = CachingAllocator::size(b);
    if (at < base || (at - base + n - 1) / kGranule >= granules) {
      ++clashes;
      return;
    }
    for (size_t g = (at - base) / kGranule; g <= (at - base + n - 1) / kGranule; ++g) {
      int expected = from;
      if (!owner[g].compare_exchange_strong(expected, to)) ++clashes;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const int me = t + 1;
      try {
        std::mt19937 rng(static_cast<unsigned>(me));
        Stream stream = fake_stream(one_stream ? 0 : static_cast<StreamId>(me));
        std::vector<CachedBlock*> live;
        for (int i = 0; i < iterations; ++i) {
          if (live.size() < 16 && (live.empty() || rng() % 2)) {
            size_t n = rng() % 16 == 0 ? (size_t{1} << 20) + rng() % (size_t{1} << 20)
                                       : 1 + rng() % 8192;
            CachedBlock* b = allocator_.allocate(n, stream);
            claim(b, 0, me);
            live.push_back(b);
          } else {
            size_t k = rng() % live.size();
            claim(live[k], me, 0);
            allocator_.free(live[k]);
            live[k] = live.back();
            live.pop_back();
          }
          ++calls;
        }
        for (CachedBlock* b : live) {
          claim(b, me, 0);
          allocator_.free(b);
        }
      } catch (...) {
        ++clashes;
      }
    });
  }
  for (std::thread& th : pool) th.join();
  return {clashes.load(), calls.load()};
}

size_t FakeAllocator::block_size(uintptr_t address) const {
  return CachingAllocator::size(block(address));
}

}  // namespace xrt
