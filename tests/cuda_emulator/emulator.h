// tests/cuda_emulator/emulator.h: just enough of CUDA to run device code of cpp/kernels on
// the host, for tests without a GPU. Blocks run on a few OS threads at once, taken in index
// order as the GPU starts them (Note [Tiles in launch order] in xrt/scan.cuh), each after a
// few random yields, so that they start and run interleaved and tiles that wait on each
// other really do; the threads of a block are fibers
// on their block's OS thread (started with ucontext, then switched with _setjmp/_longjmp,
// which skip the signal-mask system calls), switched at barriers, warp collectives and
// __nanosleep. Build with _FORTIFY_SOURCE off: its longjmp check rejects stack switches.
// __shared__ variables are thread_local statics, so each running block has its own. Warp
// collectives assume full, converged warps (as the kernels under test do).
#pragma once
#include <setjmp.h>
#include <ucontext.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace emu {

struct Warp {
  unsigned arrived = 0, generation = 0;
  std::array<uint64_t, 32> in{}, out{};
};

struct Resume {
  jmp_buf at;
};

struct Block {
  std::vector<ucontext_t> contexts;  // to start each fiber
  std::vector<Resume> resume;       // where each started fiber goes on
  std::vector<bool> started, done;
  ucontext_t start_from;
  jmp_buf scheduler;
  unsigned current = 0, threads = 0;
  unsigned arrived = 0, generation = 0;
  int reduce = 0, result = 0;
  std::vector<Warp> warps;
  const std::function<void()>* body = nullptr;
  uint64_t switches = 0;
};

inline thread_local Block* block = nullptr;
inline thread_local dim3 thread_index, block_index, block_dim, grid_dim;
// Fiber stacks, allocated untouched (only the pages a fiber uses get mapped).
inline thread_local std::vector<std::unique_ptr<char[]>> stacks;

inline void yield() {
  Block* b = block;
  if (++b->switches > (uint64_t(1) << 32)) {
    std::fprintf(stderr, "emulator: a block made no progress (deadlock?)\n");
    std::abort();
  }
  if (!_setjmp(b->resume[b->current].at)) _longjmp(b->scheduler, 1);
}

inline void trampoline() {
  Block* b = block;
  (*b->body)();
  b->done[b->current] = true;
  _longjmp(b->scheduler, 1);
}

inline void run_block(unsigned index, dim3 grid, dim3 threads, const std::function<void()>& body) {
  Block b;
  b.threads = threads.x;
  b.contexts.resize(threads.x);
  b.resume.resize(threads.x);
  b.started.assign(threads.x, false);
  b.done.assign(threads.x, false);
  b.warps.resize((threads.x + 31) / 32);
  b.body = &body;
  block = &b;
  block_index = {index, 1, 1};
  block_dim = threads;
  grid_dim = grid;
  constexpr size_t kStack = 128 * 1024;
  while (stacks.size() < threads.x) stacks.emplace_back(new char[kStack]);
  for (unsigned t = 0; t < threads.x; ++t) {
    getcontext(&b.contexts[t]);
    b.contexts[t].uc_stack.ss_sp = stacks[t].get();
    b.contexts[t].uc_stack.ss_size = kStack;
    b.contexts[t].uc_link = nullptr;
    makecontext(&b.contexts[t], trampoline, 0);
  }
  for (bool left = true; left;) {
    left = false;
    for (unsigned t = 0; t < threads.x; ++t) {
      if (b.done[t]) continue;
      left = true;
      b.current = t;
      thread_index = {t, 1, 1};
      if (_setjmp(b.scheduler)) continue;  // the fiber yielded or finished
      if (b.started[t]) _longjmp(b.resume[t].at, 1);
      b.started[t] = true;
      swapcontext(&b.start_from, &b.contexts[t]);
    }
  }
  block = nullptr;
}

/// Runs body as a kernel of grid x threads; `resident` blocks at once, handed out in index
/// order; seed varies how long each waits before it starts.
inline void launch(dim3 grid, dim3 threads, std::function<void()> body, unsigned resident = 3,
                   unsigned seed = 1) {
  std::atomic<unsigned> next{0};
  auto worker = [&](unsigned w) {
    std::mt19937 delays(seed * 7919u + w);
    for (unsigned i; (i = next++) < grid.x;) {
      for (unsigned k = delays() % 4; k > 0; --k) std::this_thread::yield();
      run_block(i, grid, threads, body);
    }
  };
  std::vector<std::thread> workers;
  for (unsigned r = 0; r < std::min(resident, grid.x); ++r) workers.emplace_back(worker, r);
  for (auto& w : workers) w.join();
}

inline void syncthreads() {
  Block* b = block;
  unsigned generation = b->generation;
  if (++b->arrived == b->threads) {
    b->arrived = 0;
    ++b->generation;
    return;
  }
  while (b->generation == generation) yield();
}

inline int syncthreads_or(int predicate) {
  Block* b = block;
  unsigned generation = b->generation;
  b->reduce |= predicate != 0;
  if (++b->arrived == b->threads) {
    b->result = b->reduce;
    b->reduce = 0;
    b->arrived = 0;
    ++b->generation;
    return b->result;
  }
  while (b->generation == generation) yield();
  return b->result;
}

/// Every lane's v, once all 32 lanes of the warp have given theirs.
inline std::array<uint64_t, 32> warp_exchange(uint64_t v) {
  Warp& w = block->warps[thread_index.x / 32];
  unsigned generation = w.generation;
  w.in[thread_index.x % 32] = v;
  if (++w.arrived == 32) {
    w.out = w.in;
    w.arrived = 0;
    ++w.generation;
  } else {
    while (w.generation == generation) yield();
  }
  return w.out;
}

template <class T> uint64_t to_word(T v) {
  uint64_t w = 0;
  std::memcpy(&w, &v, sizeof(T));
  return w;
}
template <class T> T from_word(uint64_t w) {
  T v;
  std::memcpy(&v, &w, sizeof(T));
  return v;
}

}  // namespace emu

#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define threadIdx emu::thread_index
#define blockIdx emu::block_index
#define blockDim emu::block_dim
#define gridDim emu::grid_dim

inline void __syncthreads() { emu::syncthreads(); }
inline int __syncthreads_or(int p) { return emu::syncthreads_or(p); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::warp_exchange(0); }
inline void __nanosleep(unsigned) {
  std::this_thread::yield();
  emu::yield();
}
inline unsigned __ballot_sync(unsigned, int p) {
  auto all = emu::warp_exchange(p != 0);
  unsigned bits = 0;
  for (int l = 0; l < 32; ++l) bits |= unsigned(all[l] != 0) << l;
  return bits;
}
inline int __all_sync(unsigned, int p) { return __ballot_sync(0xffffffffu, p) == 0xffffffffu; }
template <class T> T __shfl_sync(unsigned, T v, int src) {
  return emu::from_word<T>(emu::warp_exchange(emu::to_word(v))[src & 31]);
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d) {
  auto all = emu::warp_exchange(emu::to_word(v));
  unsigned lane = emu::thread_index.x % 32;
  return lane >= d ? emu::from_word<T>(all[lane - d]) : v;
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __ffs(unsigned v) { return __builtin_ffs(int(v)); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicOr(unsigned* p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
inline unsigned __float_as_uint(float f) { return emu::from_word<unsigned>(emu::to_word(f)); }
inline float __uint_as_float(unsigned u) { return emu::from_word<float>(emu::to_word(u)); }
inline long long __double_as_longlong(double d) { return emu::from_word<long long>(emu::to_word(d)); }
inline double __longlong_as_double(long long v) { return emu::from_word<double>(emu::to_word(v)); }
