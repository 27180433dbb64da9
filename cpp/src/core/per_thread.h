// cpp/src/core/per_thread.h: PerThread<T>, one T per thread, reached through a plain pointer.
//
// Note [Per-thread state on the hot path]: a thread_local of a type with a constructor is
// initialised on first use in each thread, so every access checks a guard: in a shared
// library that is a call of __tls_get_addr for the guard and another for the object, and
// callgrind counted 7 such calls in a tiny op (the dispatcher's and the policy's state).
// A thread_local pointer needs no guard: it is read with one call, and only its first read
// in a thread, which finds it null, touches the real thread_local. When the thread ends
// the object's destructor sets the pointer back to null.
#pragma once

namespace xrt {

template <class T>
class PerThread {
 public:
  static T& get() {
    T* p = pointer;
    return p ? *p : first();
  }

 private:
  struct Holder {
    T value;
    ~Holder() { pointer = nullptr; }
  };
  [[gnu::noinline]] static T& first() {
    static thread_local Holder holder;
    pointer = &holder.value;
    return holder.value;
  }
  static inline thread_local T* pointer = nullptr;
};

}  // namespace xrt
