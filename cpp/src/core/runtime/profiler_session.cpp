// cpp/src/core/runtime/profiler_session.cpp: the profiler's session: starting and stopping
// it, its record buffer and tables, pooled timing events and their reading after the
// session. The hooks that fill the buffer are in profiler.cpp.
//
// Note [Profiler buffer]: a session owns a record array and a shape arena sized at start
// (the memory is reserved, and only the pages used become resident). A hook claims a slot
// with one atomic add and commits it with another when written, so stop() can wait for
// writers that were already inside a hook when it cleared the mode. A finished session is
// kept until the next one starts, so a late writer never touches freed memory. Tables that
// grow rarely (decisions, range names, source lines) sit behind the session's mutex.
#include "core/runtime/profiler_session.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <utility>

#include "core/replay.h"
#include "core/runtime/nvtx.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/registry.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt::profiler {

std::atomic<uint32_t> g_mode{0};

namespace detail {

std::atomic<Session*> active{nullptr};
thread_local uint16_t current_op = kNoOp;
thread_local uint16_t last_op = kNoOp;
thread_local Cause current_cause = Cause::None;
thread_local CopyRoute* current_route = nullptr;

namespace {

std::mutex control;  // start, stop, NVTX switch
std::unique_ptr<Session> running, retired;
uint32_t next_number = 1;
bool nvtx_wanted = false;  // without a session
SourceLocator locator = nullptr;

// Thread numbers are small and stable for the process; their OS ids name trace tracks.
std::mutex threads_mutex;
std::vector<uint64_t> thread_ids;
thread_local uint16_t thread_number = 0;
uint16_t this_thread() {
  if (thread_number == 0) {
    std::lock_guard lock(threads_mutex);
    thread_ids.push_back(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    thread_number = static_cast<uint16_t>(thread_ids.size());
  }
  return thread_number;
}

struct EventPool {
  std::mutex mutex;
  std::unordered_map<uint32_t, std::vector<NativeEvent>> free;
};
EventPool& events() {
  static EventPool* pool = new EventPool();  // never destroyed: events outlive sessions
  return *pool;
}

// Device times of a session's timed ops, as steady-clock nanoseconds. Note: after waiting
// for the device, an event recorded on its idle stream completes at once, so its host
// time (the middle of record and wait) anchors the device clock; every other event is that
// time minus its elapsed time to the anchor. The anchor is off by half its record-to-wait
// window at most, which the result reports (device_clock_error_ns): another process's
// kernels on a shared device can widen every window (1 ms seen with 12 test processes).
constexpr int kAnchorAttempts = 10;
constexpr int64_t kNarrowWindowNs = 20'000;  // an anchor within +-10 us is good enough
void resolve_device_times(Result& out) {
  out.device_begin_ns.assign(out.records.size(), 0);
  out.device_end_ns.assign(out.records.size(), 0);
  std::unordered_map<uint32_t, std::vector<size_t>> by_device;
  for (size_t i = 0; i < out.records.size(); ++i)
    if (out.records[i].device_begin) by_device[device_key(device_of(out.records[i]))].push_back(i);
  for (auto& [key, indices] : by_device) {
    Device d = device_of(out.records[indices.front()]);
    const Backend& b = backend(d);
    try {
      b.synchronize(d);
      // The anchor's host time is off by half its record-to-wait window at most; another
      // process's kernels on a shared device can widen one window, so the narrowest of a
      // few is kept.
      NativeEvent anchor = take_event(d);
      int64_t anchor_ns = 0, window = INT64_MAX;
      for (int attempt = 0; attempt < kAnchorAttempts && window > kNarrowWindowNs; ++attempt) {
        NativeEvent e = attempt == 0 ? anchor : take_event(d);
        int64_t before = now_ns();
        b.record_event(e, b.current_stream(d));
        b.synchronize_event(d, e);
        int64_t after = now_ns();
        if (after - before < window) {
          window = after - before;
          anchor_ns = (before + after) / 2;
          if (e != anchor) std::swap(e, anchor);
        }
        if (e != anchor) give_back(d, e);
      }
      out.device_clock_error_ns = std::max(out.device_clock_error_ns, window / 2);
      for (size_t i : indices) {
        Record& r = out.records[i];
        auto at = [&](NativeEvent e) {
          return anchor_ns - static_cast<int64_t>(double(b.elapsed_ms(d, e, anchor)) * 1e6);
        };
        try {  // an event never reached (recorded inside a graph capture) has no time
          int64_t begin = at(r.device_begin), end = at(r.device_end);
          out.device_begin_ns[i] = begin;
          out.device_end_ns[i] = end;
        } catch (...) {
        }
      }
      give_back(d, anchor);
    } catch (...) {
      // A device that failed (a kernel fault) leaves its ops without device times.
    }
    for (size_t i : indices) {
      Record& r = out.records[i];
      give_back(d, r.device_begin);
      give_back(d, r.device_end);
      r.device_begin = r.device_end = nullptr;
    }
  }
}

}  // namespace

Record* claim(Session& s) {
  size_t i = s.claimed.fetch_add(1, std::memory_order_relaxed);
  if (i >= s.options.max_records) {
    s.committed.fetch_add(1, std::memory_order_release);
    return nullptr;
  }
  Record* r = new (&s.records[i]) Record();
  r->thread = this_thread();
  r->op = current_op;
  return r;
}

uint32_t intern_line(Session& s) {
  if (!locator) return 0;
  SourceLine line;
  try {
    line = locator();
  } catch (...) {
    return 0;
  }
  std::string key = line.file + ":" + std::to_string(line.line) + ":" + line.function;
  std::lock_guard lock(s.mutex);
  auto [it, added] = s.line_ids.emplace(key, static_cast<uint32_t>(s.lines.size()));
  if (added) s.lines.push_back(std::move(line));
  return it->second;
}

uint32_t intern_name(Session& s, const std::string& name) {
  std::lock_guard lock(s.mutex);
  auto [it, added] = s.name_ids.emplace(name, static_cast<uint32_t>(s.names.size()));
  if (added) s.names.push_back(name);
  return it->second;
}

NativeEvent take_event(Device d) {
  EventPool& pool = events();
  {
    std::lock_guard lock(pool.mutex);
    auto& list = pool.free[device_key(d)];
    if (!list.empty()) {
      NativeEvent e = list.back();
      list.pop_back();
      return e;
    }
  }
  return backend(d).create_event(d, true, false);
}

void give_back(Device d, NativeEvent e) {
  EventPool& pool = events();
  std::lock_guard lock(pool.mutex);
  pool.free[device_key(d)].push_back(e);
}

}  // namespace detail

using namespace detail;

const char* cause_name(Cause cause) {
  static const char* names[] = {"", "__bool__", "item", "to_device", "to NumPy",
                                "data-dependent shape", "synchronize", "copy to host"};
  return names[static_cast<int>(cause)];
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void set_source_locator(SourceLocator l) { locator = l; }

void start(const Options& options) {
  std::lock_guard lock(control);
  if (running) throw XpuRuntimeError("a profiler session is recording already; stop it first");
  if (options.max_records == 0) throw ValueError("max_records must be positive");
  retired.reset();
  auto s = std::make_unique<Session>();
  s->number = next_number++;
  s->options = options;
  // Note: malloc leaves large blocks untouched: only the pages used become resident.
  s->records.reset(static_cast<Record*>(std::malloc(options.max_records * sizeof(Record))));
  s->shape_capacity = options.shapes ? options.max_records * 8 : 0;
  if (s->shape_capacity)
    s->shapes.reset(static_cast<int64_t*>(std::malloc(s->shape_capacity * sizeof(int64_t))));
  if (!s->records || (s->shape_capacity && !s->shapes))
    throw OutOfMemoryError("no host memory for the profiler's buffer of " +
                           std::to_string(options.max_records) + " records");
  // Note: the first touch of each page inside the region costs a page fault (a tiny op
  // writes about 300 bytes: an op, an allocation and a free, and its shapes), about a
  // fifth of the per-op cost in bench_profiler.py. The first 64K records (4.5 MiB) and
  // their shapes are touched here, before the region, so short regions never fault.
  const size_t warm = std::min<size_t>(options.max_records, size_t{1} << 16);
  std::memset(static_cast<void*>(s->records.get()), 0, warm * sizeof(Record));
  if (s->shape_capacity)
    std::memset(s->shapes.get(), 0, std::min(s->shape_capacity, warm * 8) * sizeof(int64_t));
  s->start_ns = now_ns();
  uint32_t m = kRecord;
  if (options.device_time) m |= kDeviceTime;
  if (options.shapes) m |= kShapes;
  if (options.memory) m |= kMemory;
  if (options.nvtx || nvtx_wanted) m |= kNvtx;
  if (m & kNvtx) nvtx::attach();
  active.store(s.get(), std::memory_order_release);
  running = std::move(s);
  g_mode.store(m, std::memory_order_release);
  replays_stale();  // replayed calls record nothing (Note [Stale replays] in core/replay.cpp)
}

bool recording() { return active.load(std::memory_order_acquire) != nullptr; }

Result stop() {
  std::unique_lock lock(control);
  if (!running) throw XpuRuntimeError("no profiler session is recording");
  Session& s = *running;
  g_mode.store(nvtx_wanted ? kNvtx : 0, std::memory_order_release);
  replays_stale();
  active.store(nullptr, std::memory_order_release);
  // Writers already inside a hook finish their record (bounded: a stuck one is dropped).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (s.committed.load(std::memory_order_acquire) < s.claimed.load(std::memory_order_acquire)
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  Result out;
  out.start_ns = s.start_ns;
  out.stop_ns = now_ns();
  size_t claimed = s.claimed.load();
  size_t n = std::min(claimed, s.options.max_records);
  out.dropped = claimed - n;
  out.records.assign(s.records.get(), s.records.get() + n);
  size_t timed = s.timed.load();
  out.untimed = timed > s.options.max_timed_ops ? timed - s.options.max_timed_ops : 0;
  size_t used = std::min(s.shapes_used.load(), s.shape_capacity);
  if (used) out.shapes.assign(s.shapes.get(), s.shapes.get() + used);
  {
    std::lock_guard tables(s.mutex);
    out.decisions = s.decisions;
    out.names = s.names;
    out.lines = s.lines;
  }
  out.op_names = KernelRegistry::global().ops();
  {
    std::lock_guard threads(threads_mutex);
    out.thread_ids = thread_ids;
  }
  retired = std::move(running);
  lock.unlock();
  resolve_device_times(out);
  return out;
}

void set_nvtx(bool on) {
  std::lock_guard lock(control);
  nvtx_wanted = on;
  if (on) nvtx::attach();
  uint32_t m = g_mode.load();
  bool session_nvtx = running && running->options.nvtx;
  g_mode.store(on || session_nvtx ? (m | kNvtx) : (m & ~uint32_t(kNvtx)));
  replays_stale();
}

bool nvtx_on() { return (mode() & kNvtx) != 0; }

uint32_t session_number() {
  Session* s = active.load(std::memory_order_acquire);
  return s ? s->number : 0;
}

uint32_t add_decision(const DecisionRecord& record) {
  Session* s = active.load(std::memory_order_acquire);
  if (!s) return 0;
  std::lock_guard lock(s->mutex);
  s->decisions.push_back(record);
  return static_cast<uint32_t>(s->decisions.size() - 1);
}

const char* stable_op_name(uint16_t op) {
  static std::mutex mutex;
  static auto* names = new std::unordered_map<uint16_t, std::string>();
  std::lock_guard lock(mutex);
  auto it = names->find(op);
  if (it == names->end()) it = names->emplace(op, KernelRegistry::global().op_name(op)).first;
  return it->second.c_str();
}

}  // namespace xrt::profiler
