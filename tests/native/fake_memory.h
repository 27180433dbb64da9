// tests/native/fake_memory.h: a RawMemory without a device, for testing the caching
// allocator on any machine: made-up addresses, a capacity, scripted failures, and events
// that complete only when the test says so. Test-only: built into xpuruntime_testing.
#pragma once
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "xpuruntime/caching_allocator.h"
#include "xpuruntime/memory_limit.h"

namespace xrt {

/// Stream n of the fake device: the tests name streams by small numbers; the allocator
/// only files blocks by the handle, and only FakeMemory records events on it.
inline Stream fake_stream(StreamId n) { return Stream(kCPU, reinterpret_cast<NativeStream>(n)); }

class FakeMemory final : public RawMemory {
 public:
  explicit FakeMemory(size_t capacity) : capacity_(capacity) {}

  void* allocate(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  Event create_event() override;
  void destroy_event(Event event) override;
  void record_event(Event event, const Stream& stream) override;
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

/// An observer that writes down what it is told, as a profiler would (the hook's test).
class RecordingObserver final : public MemoryObserver {
 public:
  /// (what, address, size, requested): what is "allocated", "freed", "released",
  /// "segment_allocated", "segment_freed", "retried" or "out_of_memory".
  using Entry = std::tuple<std::string, uintptr_t, size_t, size_t>;

  void block_allocated(const MemoryEvent& e) override { add("allocated", e); }
  void block_freed(const MemoryEvent& e) override { add("freed", e); }
  void block_released(const MemoryEvent& e) override { add("released", e); }
  void segment_allocated(const MemoryEvent& e) override { add("segment_allocated", e); }
  void segment_freed(const MemoryEvent& e) override { add("segment_freed", e); }
  void allocation_retried(size_t nbytes) override {
    entries.emplace_back("retried", 0, 0, nbytes);
  }
  void out_of_memory(size_t nbytes) override {
    entries.emplace_back("out_of_memory", 0, 0, nbytes);
  }

  std::vector<Entry> entries;

 private:
  void add(const char* what, const MemoryEvent& e) {
    entries.emplace_back(what, reinterpret_cast<uintptr_t>(e.address), e.size, e.requested);
  }
};

/// The layers of a device over a FakeMemory (a limit, the caching allocator), handing out
/// addresses (what xpuruntime_testing binds).
class FakeAllocator {
 public:
  explicit FakeAllocator(size_t capacity)
      : memory_(capacity), limited_(memory_), allocator_(limited_, "fake device") {}

  uintptr_t allocate(size_t nbytes, StreamId stream);
  void free(uintptr_t address);
  void record_stream(uintptr_t address, StreamId stream);
  /// Size of the block handed out at address.
  size_t block_size(uintptr_t address) const;
  /// threads C++ threads allocate and free at once, iterations times each (up to 16 live
  /// blocks a thread, sizes of both pools; each thread on its own stream, or all on stream
  /// 0), then free what they hold. Every 512-byte granule of a block handed out is claimed
  /// by its thread and let go before the free: returns (claims that found the granule
  /// taken, or a block outside the device, or a thread's error; allocations and frees).
  /// Not mixed with the calls above (their bookkeeping is single-threaded).
  std::pair<int64_t, int64_t> hammer(int threads, int iterations, bool one_stream);

  FakeMemory& memory() { return memory_; }
  LimitedMemory& limited() { return limited_; }
  CachingAllocator& allocator() { return allocator_; }
  /// Starts (or stops) telling observer() what the allocator does.
  void observe(bool on) { allocator_.set_observer(on ? &observer_ : nullptr); }
  RecordingObserver& observer() { return observer_; }

 private:
  CachedBlock* block(uintptr_t address) const;
  FakeMemory memory_;
  LimitedMemory limited_;
  RecordingObserver observer_;  // before allocator_: outlives it
  CachingAllocator allocator_;
  std::unordered_map<uintptr_t, CachedBlock*> live_;
};

}  // namespace xrt
