// cpp/src/core/storage.cpp: storage comes from its device's backend.
#include "xpuruntime/storage.h"

#include <cstddef>
#include <new>

#include "xpuruntime/profiler.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt {

namespace {

// Note [Pooled storage headers]: every tensor an op makes gets a Storage, which
// std::make_shared puts in one heap block with its reference counts (the header). In a loop
// of tiny ops that block is freed and asked for again every op: a malloc and a free, about
// 150 host instructions and 20 lines of libc's code fetched again per CUDA `a + b`, where
// the driver's launch evicts them (Note [Where the host time of a tiny op goes] in
// cpp/src/cuda/host_costs.cpp). So headers come from a short per-thread list of freed
// ones, and go back to the list of the thread that frees them.
// - Every header block is kHeaderBytes, whatever the shared_ptr's control block needs (a
//   static_assert keeps that true), so any freed one serves any later one.
// - At most kKeptHeaders wait in a thread's list; beyond that they go back to the heap. A
//   thread that frees more than it makes (a consumer) keeps that many at most.
// - The list is a plain thread_local (no guard to check); the first header a thread keeps
//   registers a thread_local whose destructor gives the list back to the heap when the
//   thread ends, and closes it, so that storage freed later in the thread's exit (or in
//   static destructors after main's) goes straight to the heap.
constexpr size_t kHeaderBytes = 128;
constexpr int kKeptHeaders = 64;

struct HeaderList {
  void* head = nullptr;
  int count = 0;
  bool registered = false;  // its closer is set up for this thread
  bool closed = false;      // the thread is ending: back to the heap
};
thread_local HeaderList headers;

struct HeaderListCloser {
  ~HeaderListCloser() {
    HeaderList& list = headers;
    while (list.head) {
      void* p = list.head;
      list.head = *static_cast<void**>(p);
      ::operator delete(p);
    }
    list.count = 0;
    list.closed = true;
  }
};

[[gnu::noinline]] void close_at_thread_exit() {
  static thread_local HeaderListCloser closer;
  (void)closer;
}

template <class T>
struct HeaderAllocator {
  using value_type = T;
  HeaderAllocator() = default;
  template <class U>
  HeaderAllocator(const HeaderAllocator<U>&) {}  // NOLINT: rebinding, as allocators do

  T* allocate(size_t n) {
    static_assert(sizeof(T) <= kHeaderBytes && alignof(T) <= alignof(std::max_align_t));
    HeaderList& list = headers;
    if (n == 1 && list.head) {
      void* p = list.head;
      list.head = *static_cast<void**>(p);
      --list.count;
      return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new(n == 1 ? kHeaderBytes : n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    HeaderList& list = headers;
    if (n == 1 && list.count < kKeptHeaders && !list.closed) {
      if (!list.registered) [[unlikely]] {
        list.registered = true;
        close_at_thread_exit();
      }
      *reinterpret_cast<void**>(p) = list.head;
      list.head = p;
      ++list.count;
      return;
    }
    ::operator delete(p);
  }
  friend bool operator==(const HeaderAllocator&, const HeaderAllocator&) { return true; }
};

}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  std::shared_ptr<Storage> storage = backend(device).allocate(nbytes, device);
  if (profiler::mode()) [[unlikely]]
    storage->profile_session_ = profiler::note_alloc(storage->data_, nbytes, device);
  return storage;
}

void Storage::note_profiled_free() const {
  profiler::note_free(profile_session_, data_, nbytes_, device_);
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device,
                                       Deleter deleter, void* context, bool readonly) {
  return std::allocate_shared<Storage>(HeaderAllocator<Storage>(), data, nbytes, device, deleter,
                                      context, readonly);
}

}  // namespace xrt
