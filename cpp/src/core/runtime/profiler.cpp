// cpp/src/core/runtime/profiler.cpp: the profiler's hooks: what the dispatcher, storage,
// the allocators, copies, waits and ranges write into the session's buffer (the session
// itself, its start, stop and device times, is profiler_session.cpp). Each hook claims a
// record, whose defaults (no shapes, events, bytes or address; on the CPU) it leaves where
// they fit, and commits it.
#include "xpuruntime/profiler.h"

#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/runtime/nvtx.h"
#include "core/runtime/profiler_session.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/tensor.h"

namespace xrt::profiler {

using namespace detail;

namespace {

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

// The fields every timed record of a host event carries.
void fill(Record& r, RecordKind kind, Device device, int64_t begin, int64_t end,
          uint64_t bytes, uint64_t stream, uint32_t line) {
  r.kind = kind;
  r.begin_ns = begin;
  r.end_ns = end;
  r.bytes = bytes;
  r.address = stream;
  r.id = line;
  set_device(r, device);
}

// A wait of the host for the device (or, on the CPU, a value read that will be one there).
void record_wait(Session& s, Device device, Cause cause, int64_t begin, int64_t end,
                 uint64_t bytes, uint64_t stream, uint32_t line) {
  Record* w = claim(s);
  if (!w) return;
  fill(*w, RecordKind::Wait, device, begin, end, bytes, stream, line);
  w->flags = static_cast<uint8_t>(cause);
  if (cause == Cause::DataDependent && w->op == kNoOp) w->op = last_op;
  commit(s);
}

}  // namespace

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
  if (m & kShapes) r->shapes = pack_shapes(*s, call);
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

namespace {
uint32_t note_memory(Session* s, RecordKind kind, const void* address, size_t bytes,
                     Device device) {
  Record* r = s ? claim(*s) : nullptr;
  if (!r) return 0;
  r->kind = kind;
  r->begin_ns = r->end_ns = now_ns();
  r->address = reinterpret_cast<uintptr_t>(address);
  r->bytes = bytes;
  set_device(*r, device);
  commit(*s);
  return s->number;
}
}  // namespace

uint32_t note_alloc(const void* address, size_t bytes, Device device) {
  return note_memory(session_if(kMemory), RecordKind::Alloc, address, bytes, device);
}

void note_free(uint32_t session, const void* address, size_t bytes, Device device) {
  Session* s = session_if(kMemory);
  if (s && s->number == session) note_memory(s, RecordKind::Free, address, bytes, device);
}

void note_segment(bool allocated, const void* address, size_t bytes, Device device) {
  note_memory(session_if(kMemory), allocated ? RecordKind::SegmentAlloc : RecordKind::SegmentFree,
              address, bytes, device);
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
  if (Record* r = claim(*s)) {
    fill(*r, RecordKind::Copy, device, begin_ns_, end, bytes_, stream_, line);
    r->flags = static_cast<uint8_t>(uint8_t(direction) | uint8_t(route_) << 2 |
                                    uint8_t(blocking) << 4);
    commit(*s);
  }
  if (!blocking) return;
  Cause cause = current_cause != Cause::None ? current_cause
                : current_op != kNoOp        ? Cause::DataDependent
                                             : Cause::Copy;
  record_wait(*s, device, cause, begin_ns_, end, bytes_, stream_, line);
}

WaitScope::WaitScope(Device device, Cause cause) : device_(device), cause_(cause) {
  if (!session_if(0)) return;
  on_ = true;
  begin_ns_ = now_ns();
}

WaitScope::~WaitScope() {
  if (!on_) return;
  int64_t end = now_ns();
  if (Session* s = session_if(0)) record_wait(*s, device_, cause_, begin_ns_, end, 0, 0,
                                              intern_line(*s));
}

void note_host_read(Device device) {
  Session* s = session_if(0);
  if (!s) return;
  int64_t t = now_ns();
  record_wait(*s, device, current_cause != Cause::None ? current_cause : Cause::Item, t, t, 0,
              0, intern_line(*s));
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
  r->begin_ns = r->end_ns = now_ns();
  commit(*s);
}

}  // namespace xrt::profiler
