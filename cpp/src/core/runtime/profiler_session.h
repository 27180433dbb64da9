// cpp/src/core/runtime/profiler_session.h: what the profiler's hooks (profiler.cpp) share
// with its session (profiler_session.cpp): the session, claiming and committing records,
// the per-thread state of the op in flight, interned lines and names, pooled events.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "xpuruntime/dispatcher.h"
#include "xpuruntime/profiler.h"

namespace xrt::profiler::detail {

inline constexpr uint16_t kNoOp = 0xffff;

/// One recording (Note [Profiler buffer] in profiler_session.cpp).
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

extern std::atomic<Session*> active;

// The calling thread's op in flight, the op that ran last (what a size read follows), the
// cause a caller named for the next wait, and the route slot of the copy in flight.
extern thread_local uint16_t current_op;
extern thread_local uint16_t last_op;
extern thread_local Cause current_cause;
extern thread_local CopyRoute* current_route;

/// The recording session when the mode has kRecord and `bits`, else null.
inline Session* session_if(uint32_t bits) {
  if ((mode() & (kRecord | bits)) != (kRecord | bits)) return nullptr;
  return active.load(std::memory_order_acquire);
}
/// A fresh record (its defaults: no shapes, events, bytes or address; on the CPU) stamped
/// with the thread and its op in flight; null when the buffer is full. Commit it once
/// written.
Record* claim(Session& s);
inline void commit(Session& s) { s.committed.fetch_add(1, std::memory_order_release); }

inline void set_device(Record& r, Device d) {
  r.device_type = d.type;
  r.device_index = static_cast<uint8_t>(d.index);
}
inline Device device_of(const Record& r) {
  return Device{r.device_type, static_cast<int16_t>(r.device_index)};
}
inline uint32_t device_key(Device d) {
  return uint32_t(d.type) << 16 | uint32_t(uint16_t(d.index));
}

/// The user's Python line, interned in the session's table (0 without a locator).
uint32_t intern_line(Session& s);
uint32_t intern_name(Session& s, const std::string& name);

/// Timing events, pooled per device for the process (creating one costs microseconds).
NativeEvent take_event(Device d);
void give_back(Device d, NativeEvent e);

}  // namespace xrt::profiler::detail
