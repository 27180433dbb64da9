// cpp/include/xpuruntime/fake_memory.h: a RawMemory without a device, for testing the caching
// allocator on any machine: made-up addresses, a capacity, scripted failures, and events
// that complete only when the test says so.
#pragma once
#include <deque>
#include <map>
#include <unordered_map>

#include "xpuruntime/caching_allocator.h"

namespace xrt {

class FakeMemory final : public RawMemory {
 public:
  explicit FakeMemory(size_t capacity) : capacity_(capacity) {}

  void* allocate(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  Event create_event() override;
  void destroy_event(Event event) override;
  void record_event(Event event, StreamId stream) override;
  bool event_done(Event event) override;
  void wait_event(Event event) override;
  void synchronize() override { ++synchronizations_; }
  DeviceMemoryInfo memory_info() override { return {capacity_ - used_, capacity_}; }

  /// The next n allocations fail as if the device were full.
  void fail_next(int n) { fail_next_ = n; }
  /// Events recorded on stream so far complete.
  void complete(StreamId stream);
  void complete_all();

  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }
  int64_t allocations() const { return allocations_; }
  int64_t frees() const { return frees_; }
  int64_t waits() const { return waits_; }
  int64_t synchronizations() const { return synchronizations_; }
  /// Recorded events not yet complete.
  int64_t events_pending() const;

 private:
  struct FakeEvent {
    StreamId stream = 0;
    bool recorded = false;
    bool done = false;
    bool destroyed = false;
  };
  size_t capacity_;
  size_t used_ = 0;
  uintptr_t next_address_ = uintptr_t{1} << 40;
  std::map<uintptr_t, size_t> live_;
  std::deque<FakeEvent> events_;  // stable addresses: an Event is a FakeEvent*
  int fail_next_ = 0;
  int64_t allocations_ = 0, frees_ = 0, waits_ = 0, synchronizations_ = 0;
};

/// A CachingAllocator on a FakeMemory, handing out addresses (what _testing binds).
class FakeAllocator {
 public:
  FakeAllocator(size_t capacity) : memory_(capacity), allocator_(memory_, "fake device") {}

  uintptr_t allocate(size_t nbytes, StreamId stream);
  void free(uintptr_t address);
  void record_stream(uintptr_t address, StreamId stream);
  /// Size of the block handed out at address.
  size_t block_size(uintptr_t address) const;

  FakeMemory& memory() { return memory_; }
  CachingAllocator& allocator() { return allocator_; }

 private:
  CachedBlock* block(uintptr_t address) const;
  FakeMemory memory_;
  CachingAllocator allocator_;
  std::unordered_map<uintptr_t, CachedBlock*> live_;
};

}  // namespace xrt
