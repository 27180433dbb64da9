// tests/native/fake_memory.cpp: the test double of a device for the caching allocator.
#include "fake_memory.h"

#include <string>

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

size_t FakeAllocator::block_size(uintptr_t address) const {
  return CachingAllocator::size(block(address));
}

}  // namespace xrt
