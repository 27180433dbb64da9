// cpp/include/xpuruntime/profiler.h: the profiler's recording side: one flag word that the
// hooks test, a preallocated buffer of fixed-size records, and the hooks the dispatcher,
// storage, copies and waits call while a session records.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "xpuruntime/device.h"
#include "xpuruntime/memory_observer.h"
#include "xpuruntime/runtime/event.h"

namespace xrt {
class Tensor;
class Storage;
struct KernelCall;
struct DecisionRecord;
}  // namespace xrt

namespace xrt::profiler {

/// Note [Profiler cost]: every hook starts with `if (mode())`: one relaxed load of a word
/// that is zero unless a session records or NVTX is on, so the branch is predictable and
/// off costs about a nanosecond per op. While on, an op claims a slot of a preallocated
/// buffer (one atomic add), stamps the steady clock twice and, with device timing, records
/// two pooled events on its stream; nothing allocates and no Python runs per op. Device
/// times are read after the session, when its events have long completed.
enum Mode : uint32_t {
  kRecord = 1,      ///< a session records
  kNvtx = 2,        ///< ops and ranges emit NVTX ranges
  kDeviceTime = 4,  ///< ops on devices get start/end events
  kShapes = 8,      ///< ops record their shapes
  kMemory = 16,     ///< allocations and frees are recorded
};
extern std::atomic<uint32_t> g_mode;
inline uint32_t mode() { return g_mode.load(std::memory_order_relaxed); }

enum class RecordKind : uint8_t {
  Op, Range, Alloc, Free, SegmentAlloc, SegmentFree, Copy, Wait, Mark
};

/// Why the host waited (Wait records) or read a value.
enum class Cause : uint8_t {
  None, Bool, Item, ToDevice, ToNumpy, DataDependent, Synchronize, Copy
};
const char* cause_name(Cause cause);

/// Copy records: direction and route, packed in flags.
enum class CopyDirection : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice, PeerToPeer };
enum class CopyRoute : uint8_t { Direct, Pinned, Staged, Pageable };

/// One event of a session; 64 bytes.
struct Record {
  int64_t begin_ns = 0;  ///< steady clock (CLOCK_MONOTONIC), as time.monotonic_ns()
  int64_t end_ns = 0;
  NativeEvent device_begin = nullptr;  ///< timing events of an op (device timing)
  NativeEvent device_end = nullptr;
  uint64_t bytes = 0;    ///< Alloc, Free, Segment*, Copy
  uint64_t address = 0;  ///< Alloc, Free, Segment*: the buffer; Op, Copy: the stream
  int64_t shapes = -1;   ///< Op: offset of its shapes in the shape arena, -1 when none
  uint32_t id = 0;       ///< Op: decision; Range, Mark: name; Wait, Copy: source line
  uint16_t thread = 0;   ///< small per-session-stable thread number, from 1
  RecordKind kind = RecordKind::Op;
  uint8_t flags = 0;     ///< Wait: Cause; Copy: direction | route << 2 | blocking << 4
  DeviceType device_type = DeviceType::CPU;
  uint8_t device_index = 0;
  uint16_t op = 0xffff;  ///< Wait, Copy, Alloc: the op in flight on the thread, if any
};

/// A source line of the Python program (or "" when none was found).
struct SourceLine {
  std::string file;
  int line = 0;
  std::string function;
};
/// Set by the bindings: finds the user's Python line; called only for waits and copies.
using SourceLocator = SourceLine (*)();
void set_source_locator(SourceLocator locator);

struct Options {
  bool device_time = true;
  bool shapes = true;
  bool memory = true;
  bool nvtx = false;
  size_t max_records = size_t{1} << 21;
  size_t max_timed_ops = size_t{1} << 18;  ///< ops given device events (events cost memory)
};

/// What a finished session hands back. Device times are resolved: device_begin_ns and
/// device_end_ns are steady-clock nanoseconds (0 where the op was not timed).
struct Result {
  std::vector<Record> records;
  std::vector<int64_t> device_begin_ns, device_end_ns;  ///< parallel to records
  /// How far device times may sit from the host clock: half the widest of the devices'
  /// anchor windows (Note in profiler_session.cpp), 0 with no device time.
  int64_t device_clock_error_ns = 0;
  std::vector<int64_t> shapes;  ///< arena: per op, count, then (ndim, dims...) each
  std::vector<DecisionRecord> decisions;
  std::vector<std::string> names;  ///< range and mark names
  std::vector<std::string> op_names;  ///< by op id, for Wait/Copy/Alloc op fields
  std::vector<SourceLine> lines;
  std::vector<uint64_t> thread_ids;  ///< OS thread ids, by thread number - 1
  uint64_t dropped = 0;     ///< records that did not fit
  uint64_t untimed = 0;     ///< ops past max_timed_ops
  int64_t start_ns = 0, stop_ns = 0;
};

/// Starts a session; XpuRuntimeError when one is already recording.
void start(const Options& options);
/// Stops the session, waits for the devices it timed, and returns what it recorded.
/// XpuRuntimeError when none records.
Result stop();
bool recording();
/// NVTX without a session (XPURUNTIME_NVTX=1): ops and ranges emit NVTX ranges.
void set_nvtx(bool on);
bool nvtx_on();

int64_t now_ns();

// ---- Hooks (call only when mode() is nonzero) -----------------------------------------

/// The dispatcher's: an op about to run its kernel, and after it. decision_id comes from
/// decision_id(); the scope records even when the kernel throws.
class OpScope {
 public:
  OpScope(uint16_t op, uint32_t decision, const char* nvtx_name, const KernelCall& call);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  Record* record_ = nullptr;
  void* session_ = nullptr;
  uint16_t outer_op_;
  bool nvtx_ = false;
};
/// The session's number for a dispatcher decision, made by make() on the first op of a
/// session that uses it. cache/cache_id live in the decision (the fast path).
uint32_t session_number();
uint32_t add_decision(const DecisionRecord& record);
/// An op name that lives for the process (for NVTX messages).
const char* stable_op_name(uint16_t op);

/// Storage: a buffer was allocated / freed. note_alloc returns the session number to keep
/// in the storage (its free is recorded only for that session).
uint32_t note_alloc(const void* address, size_t bytes, Device device);
void note_free(uint32_t session, const void* address, size_t bytes, Device device);
/// The allocator's raw memory (segments) changed on a device.
void note_segment(bool allocated, const void* address, size_t bytes, Device device);
/// An observer for a device's allocator that records its segments while a session
/// records memory (lives for the process).
MemoryObserver* segment_observer(Device device);

/// A copy between host and device (or between devices): route comes from the backend;
/// blocking copies to the host are waits as well.
class CopyScope {
 public:
  CopyScope(Device dst, Device src, size_t bytes, uint64_t stream);
  ~CopyScope();
  void set_route(CopyRoute route) { route_ = route; }
  CopyScope(const CopyScope&) = delete;
  CopyScope& operator=(const CopyScope&) = delete;

 private:
  Device dst_, src_;
  size_t bytes_;
  uint64_t stream_;
  int64_t begin_ns_ = 0;
  CopyRoute route_ = CopyRoute::Direct;
  CopyRoute* outer_route_ = nullptr;
  bool on_ = false;
};
/// The route of the copy in flight on this thread (called by a backend's copy code).
void set_copy_route(CopyRoute route);

/// An explicit wait (stream, event or device synchronize) on device.
class WaitScope {
 public:
  WaitScope(Device device, Cause cause);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  Device device_;
  Cause cause_;
  int64_t begin_ns_ = 0;
  bool on_ = false;
};
/// A host read of a value that lives on the host already (a CPU tensor's item): listed
/// with the waits, of zero length, so code can be checked before it runs on a GPU.
void note_host_read(Device device);

/// Names why the host is about to wait, for records made inside (the outermost cause on a
/// thread wins: `__bool__` over the item() and the copy it calls).
class CauseScope {
 public:
  explicit CauseScope(Cause cause);
  ~CauseScope();
  CauseScope(const CauseScope&) = delete;
  CauseScope& operator=(const CauseScope&) = delete;

 private:
  Cause saved_;
};

/// User ranges (and NVTX ranges when NVTX is on).
void push_range(const std::string& name);
void pop_range();
void mark(const std::string& name);

}  // namespace xrt::profiler
