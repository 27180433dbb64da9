// cpp/src/core/runtime/profiler.cpp: the profiler's session: a preallocated record buffer,
// the hooks that fill it, pooled timing events and their reading after the session.
//
// Note [Profiler buffer]: a session owns a record array and a shape arena sized at start
// (the memory is reserved, and only the pages used become resident). A hook claims a slot
// with one atomic add and commits it with another when written, so stop() can wait for
// writers that were already inside a hook when it cleared the mode. A finished session is
// kept until the next one starts, so a late writer never touches freed memory. Tables that
// grow rarely (decisions, range names, source lines) sit behind the session's mutex.
#include "xpuruntime/profiler.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/runtime/nvtx.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/tensor.h"

namespace xrt::profiler {

std::atomic<uint32_t> g_mode{0};

namespace {

constexpr uint16_t kNoOp = 0xffff;

struct Session {
  uint32_t number = 0;
  Options options;
  struct Free { void operator()(void* p) const { std::free(p); } };
  std::unique_ptr<Record[], Free> records;
  std::atomic<size_t> claimed{0}, committed{0};
  std::unique_ptr<int64_t[], Free> shapes;
  size_t shape_capacity = 0;
  std::atomic<size_t> shapes_used{0};
  std::atomic<size_t> timed{0};
  std::mutex mutex;  // the tables below
  std::vector<DecisionRecord> decisions;
  std::vector<std::string> names;
  std::unordered_map<std::string, uint32_t> name_ids;
  std::vector<SourceLine> lines;
  std::unordered_map<std::string, uint32_t> line_ids;
  int64_t start_ns = 0;
};

std::mutex control;  // start, stop, NVTX switch
std::atomic<Session*> active{nullptr};
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

thread_local uint16_t current_op = kNoOp;
thread_local uint16_t last_op = kNoOp;  // the op that ran last (what a size read is after)
thread_local Cause current_cause = Cause::None;
thread_local CopyRoute* current_route = nullptr;

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
void commit(Session& s) { s.committed.fetch_add(1, std::memory_order_release); }

Session* session_if(uint32_t bits) {
  if ((mode() & (kRecord | bits)) != (kRecord | bits)) return nullptr;
  return active.load(std::memory_order_acquire);
}

void set_device(Record& r, Device d) {
  r.device_type = d.type;
  r.device_index = static_cast<uint8_t>(d.index);
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

// Timing events, pooled per device for the process (creating one costs microseconds).
struct EventPool {
  std::mutex mutex;
  std::unordered_map<uint32_t, std::vector<NativeEvent>> free;
};
EventPool& events() {
  static EventPool* pool = new EventPool();  // never destroyed: events outlive sessions
  return *pool;
}
uint32_t device_key(Device d) { return uint32_t(d.type) << 16 | uint32_t(uint16_t(d.index)); }
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

int64_t pack_shapes(Session& s, const KernelCall& call) {
  size_t need = 2;
  for (int i = 0; i < call.num_inputs; ++i) need += 1 + call.inputs[i]->shape().size();
  for (int i = 0; i < call.num_outputs; ++i) need += 1 + call.outputs[i].shape().size();
  size_t at = s.shapes_used.fetch_add(need, std::memory_order_relaxed);
  if (at + need > s.shape_capacity) return -1;
  int64_t* p = &s.shapes[at];
  *p++ = call.num_inputs;
  *p++ = call.num_outputs;
  auto put = [&p](const Tensor& t) {
    *p++ = static_cast<int64_t>(t.shape().size());
    for (int64_t d : t.shape()) *p++ = d;
  };
  for (int i = 0; i < call.num_inputs; ++i) put(*call.inputs[i]);
  for (int i = 0; i < call.num_outputs; ++i) put(call.outputs[i]);
  return static_cast<int64_t>(at);
}

Device call_device(const KernelCall& call) {
  if (call.num_outputs > 0) return call.outputs[0].device();
  return call.inputs[0]->device();
}

Device device_of(const Record& r) {
  return Device{r.device_type, static_cast<int16_t>(r.device_index)};
}

// Device times of a session's timed ops, as steady-clock nanoseconds. Note: after waiting
// for the device, an event recorded on its idle stream completes at once, so its host
// time (the middle of record and wait) anchors the device clock; every other event is that
// time minus its elapsed time to the anchor.
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
      NativeEvent anchor = take_event(d);
      int64_t before = now_ns();
      b.record_event(anchor, b.current_stream(d));
      b.synchronize_event(d, anchor);
      int64_t anchor_ns = (before + now_ns()) / 2;
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
}

bool recording() { return active.load(std::memory_order_acquire) != nullptr; }

Result stop() {
  std::unique_lock lock(control);
  if (!running) throw XpuRuntimeError("no profiler session is recording");
  Session& s = *running;
  g_mode.store(nvtx_wanted ? kNvtx : 0, std::memory_order_release);
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

// ---- Ops ------------------------------------------------------------------------------

OpScope::OpScope(uint16_t op, uint32_t decision, const char* nvtx_name, const KernelCall& call)
    : outer_op_(current_op) {
  uint32_t m = mode();
  current_op = op;
  if ((m & kNvtx) && nvtx_name) {
    nvtx::push(nvtx_name);
    nvtx_ = true;
  }
  Session* s = session_if(0);
  if (!s) return;
  Record* r = claim(*s);
  if (!r) return;
  session_ = s;
  r->kind = RecordKind::Op;
  r->id = decision;
  r->op = op;
  r->shapes = (m & kShapes) ? pack_shapes(*s, call) : -1;
  r->device_begin = r->device_end = nullptr;
  r->address = 0;
  Device d = call_device(call);
  set_device(*r, d);
  record_ = r;
  r->begin_ns = now_ns();
  if ((m & kDeviceTime) && !d.is_cpu() &&
      s->timed.fetch_add(1, std::memory_order_relaxed) < s->options.max_timed_ops) {
    try {
      const Backend& b = backend(d);
      Stream stream = b.current_stream(d);
      r->address = stream.address();
      r->device_begin = take_event(d);
      r->device_end = take_event(d);
      b.record_event(r->device_begin, stream);
    } catch (...) {  // the op runs untimed (and its own error, if any, follows)
      if (r->device_begin) give_back(d, r->device_begin);
      if (r->device_end) give_back(d, r->device_end);
      r->device_begin = r->device_end = nullptr;
    }
  }
}

OpScope::~OpScope() {
  if (record_) {
    Record& r = *record_;
    if (r.device_end) {
      Device d = device_of(r);
      try {
        const Backend& b = backend(d);
        b.record_event(r.device_end, b.current_stream(d));
      } catch (...) {
        give_back(d, r.device_begin);
        give_back(d, r.device_end);
        r.device_begin = r.device_end = nullptr;
      }
    }
    r.end_ns = now_ns();
    commit(*static_cast<Session*>(session_));
  }
  last_op = current_op;
  current_op = outer_op_;
  if (nvtx_) nvtx::pop();
}

// ---- Memory ---------------------------------------------------------------------------

uint32_t note_alloc(const void* address, size_t bytes, Device device) {
  Session* s = session_if(kMemory);
  if (!s) return 0;
  Record* r = claim(*s);
  if (!r) return 0;
  r->kind = RecordKind::Alloc;
  r->begin_ns = r->end_ns = now_ns();
  r->address = reinterpret_cast<uintptr_t>(address);
  r->bytes = bytes;
  r->shapes = -1;
  r->device_begin = r->device_end = nullptr;
  set_device(*r, device);
  commit(*s);
  return s->number;
}

void note_free(uint32_t session, const void* address, size_t bytes, Device device) {
  Session* s = session_if(kMemory);
  if (!s || s->number != session) return;
  Record* r = claim(*s);
  if (!r) return;
  r->kind = RecordKind::Free;
  r->begin_ns = r->end_ns = now_ns();
  r->address = reinterpret_cast<uintptr_t>(address);
  r->bytes = bytes;
  r->shapes = -1;
  r->device_begin = r->device_end = nullptr;
  set_device(*r, device);
  commit(*s);
}

void note_segment(bool allocated, const void* address, size_t bytes, Device device) {
  Session* s = session_if(kMemory);
  if (!s) return;
  Record* r = claim(*s);
  if (!r) return;
  r->kind = allocated ? RecordKind::SegmentAlloc : RecordKind::SegmentFree;
  r->begin_ns = r->end_ns = now_ns();
  r->address = reinterpret_cast<uintptr_t>(address);
  r->bytes = bytes;
  r->shapes = -1;
  r->device_begin = r->device_end = nullptr;
  set_device(*r, device);
  commit(*s);
}

namespace {
// Sees a device allocator's segments (its calls to the device's own allocator).
class SegmentObserver final : public MemoryObserver {
 public:
  explicit SegmentObserver(Device device) : device_(device) {}
  void segment_allocated(const MemoryEvent& e) override {
    if (mode()) note_segment(true, e.address, e.size, device_);
  }
  void segment_freed(const MemoryEvent& e) override {
    if (mode()) note_segment(false, e.address, e.size, device_);
  }

 private:
  Device device_;
};
}  // namespace

MemoryObserver* segment_observer(Device device) {
  static std::mutex mutex;
  static auto* observers = new std::unordered_map<uint32_t, std::unique_ptr<SegmentObserver>>();
  std::lock_guard lock(mutex);
  auto& o = (*observers)[device_key(device)];
  if (!o) o = std::make_unique<SegmentObserver>(device);
  return o.get();
}

// ---- Copies and waits -----------------------------------------------------------------

CopyScope::CopyScope(Device dst, Device src, size_t bytes, uint64_t stream)
    : dst_(dst), src_(src), bytes_(bytes), stream_(stream) {
  if (!session_if(0)) return;
  on_ = true;
  outer_route_ = current_route;
  current_route = &route_;
  begin_ns_ = now_ns();
}

void set_copy_route(CopyRoute route) {
  if (current_route) *current_route = route;
}

CopyScope::~CopyScope() {
  if (!on_) return;
  current_route = outer_route_;
  Session* s = session_if(0);
  if (!s) return;
  int64_t end = now_ns();
  CopyDirection direction = dst_.is_cpu()   ? CopyDirection::DeviceToHost
                            : src_.is_cpu() ? CopyDirection::HostToDevice
                            : dst_ == src_  ? CopyDirection::DeviceToDevice
                                            : CopyDirection::PeerToPeer;
  bool blocking = direction == CopyDirection::DeviceToHost;
  uint32_t line = intern_line(*s);
  Device device = dst_.is_cpu() ? src_ : dst_;
  Record* r = claim(*s);
  if (r) {
    r->kind = RecordKind::Copy;
    r->begin_ns = begin_ns_;
    r->end_ns = end;
    r->bytes = bytes_;
    r->address = stream_;
    r->id = line;
    r->shapes = -1;
    r->device_begin = r->device_end = nullptr;
    r->flags = static_cast<uint8_t>(uint8_t(direction) | uint8_t(route_) << 2 |
                                    uint8_t(blocking) << 4);
    set_device(*r, device);
    commit(*s);
  }
  if (!blocking) return;
  Cause cause = current_cause != Cause::None ? current_cause
                : current_op != kNoOp        ? Cause::DataDependent
                                             : Cause::Copy;
  Record* w = claim(*s);
  if (!w) return;
  if (cause == Cause::DataDependent && w->op == kNoOp) w->op = last_op;
  w->kind = RecordKind::Wait;
  w->begin_ns = begin_ns_;
  w->end_ns = end;
  w->bytes = bytes_;
  w->address = stream_;
  w->id = line;
  w->shapes = -1;
  w->device_begin = w->device_end = nullptr;
  w->flags = static_cast<uint8_t>(cause);
  set_device(*w, device);
  commit(*s);
}

WaitScope::WaitScope(Device device, Cause cause) : device_(device), cause_(cause) {
  if (!session_if(0)) return;
  on_ = true;
  begin_ns_ = now_ns();
}

namespace {
void record_wait(Device device, Cause cause, int64_t begin, int64_t end) {
  Session* s = session_if(0);
  if (!s) return;
  uint32_t line = intern_line(*s);
  Record* w = claim(*s);
  if (!w) return;
  w->kind = RecordKind::Wait;
  w->begin_ns = begin;
  w->end_ns = end;
  w->bytes = 0;
  w->address = 0;
  w->id = line;
  w->shapes = -1;
  w->device_begin = w->device_end = nullptr;
  w->flags = static_cast<uint8_t>(cause);
  if (cause == Cause::DataDependent && w->op == kNoOp) w->op = last_op;
  set_device(*w, device);
  commit(*s);
}
}  // namespace

WaitScope::~WaitScope() {
  if (on_) record_wait(device_, cause_, begin_ns_, now_ns());
}

void note_host_read(Device device) {
  int64_t t = now_ns();
  record_wait(device, current_cause != Cause::None ? current_cause : Cause::Item, t, t);
}

CauseScope::CauseScope(Cause cause) : saved_(current_cause) {
  if (current_cause == Cause::None) current_cause = cause;
}
CauseScope::~CauseScope() { current_cause = saved_; }

// ---- Ranges ---------------------------------------------------------------------------

namespace {
struct OpenRange {
  Session* session;
  Record* record;
  bool nvtx;
};
thread_local std::vector<OpenRange> open_ranges;

uint32_t intern_name(Session& s, const std::string& name) {
  std::lock_guard lock(s.mutex);
  auto [it, added] = s.name_ids.emplace(name, static_cast<uint32_t>(s.names.size()));
  if (added) s.names.push_back(name);
  return it->second;
}
}  // namespace

void push_range(const std::string& name) {
  OpenRange open{nullptr, nullptr, false};
  if (mode() & kNvtx) {
    nvtx::push(name.c_str());
    open.nvtx = true;
  }
  if (Session* s = session_if(0)) {
    uint32_t id = intern_name(*s, name);
    if (Record* r = claim(*s)) {
      r->kind = RecordKind::Range;
      r->id = id;
      r->shapes = -1;
      r->bytes = 0;
      r->address = 0;
      r->device_begin = r->device_end = nullptr;
      set_device(*r, kCPU);
      r->end_ns = 0;  // open until pop_range (or the session's end)
      r->begin_ns = now_ns();
      open = {s, r, open.nvtx};
      commit(*s);
    }
  }
  open_ranges.push_back(open);
}

void pop_range() {
  if (open_ranges.empty())
    throw ValueError("pop_range() without an open range on this thread (push_range first)");
  OpenRange open = open_ranges.back();
  open_ranges.pop_back();
  if (open.record && active.load(std::memory_order_acquire) == open.session)
    open.record->end_ns = now_ns();
  if (open.nvtx) nvtx::pop();
}

void mark(const std::string& name) {
  if (mode() & kNvtx) nvtx::mark(name.c_str());
  Session* s = session_if(0);
  if (!s) return;
  uint32_t id = intern_name(*s, name);
  Record* r = claim(*s);
  if (!r) return;
  r->kind = RecordKind::Mark;
  r->id = id;
  r->shapes = -1;
  r->bytes = 0;
  r->address = 0;
  r->device_begin = r->device_end = nullptr;
  set_device(*r, kCPU);
  r->begin_ns = r->end_ns = now_ns();
  commit(*s);
}

}  // namespace xrt::profiler
