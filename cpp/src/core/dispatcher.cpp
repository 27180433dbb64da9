// cpp/src/core/dispatcher.cpp: the per-thread decision cache in front of the registry.
//
// Note [Decision cache]: a decision depends on (op, device, dtypes), on the policy in force
// and on the registered kernels. The first three form the hash key; the policy's version
// (globally unique, renewed on every change) and the registry's epoch are stored in the
// entry and compared on each hit, so a change anywhere invalidates lazily, without locks.
// The cache is per thread: no synchronisation on the hot path, and per-thread policy
// scopes need nothing special.
#include "xpuruntime/dispatcher.h"

#include <bit>
#include <chrono>
#include <cstdio>
#include <unordered_map>

#include "core/per_thread.h"
#include "core/replay.h"
#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/profiler.h"

namespace xrt {
namespace {

struct CachedDecision {
  uint64_t policy_version = 0;
  uint64_t registry_epoch = 0;
  OpId op = 0;
  Device device;
  DTypeSignature signature;
  std::vector<KernelRef> candidates;  // in the order to try; one when pinned
  DecisionReason reason = DecisionReason::FirstSupported;
  std::string detail;
  bool pinned = false;
  bool timed = false;  // BestPerformance with several candidates
  struct Timed { int index; std::string detail; };
  std::unordered_map<uint64_t, Timed> best;  // by shape class
  // The profiler's number for this decision in its session (Note [Profiler cost]): found
  // here with three compares, so an op records without a lookup.
  uint32_t profile_session = 0;
  uint32_t profile_id = 0;
  const KernelInfo* profile_kernel = nullptr;
  const std::string* profile_why = nullptr;
};

// Note [Last decision per op]: a thread calls one op with the same dtypes and device over
// and over. Each op therefore remembers its thread's last decision and that decision's key;
// a call with the same key (and the policy version and registry epoch still current) takes
// it without hashing into the cache. The cache owns the decisions; an entry replaced there
// is replaced here too (one op's decisions are only ever its own: the key holds the op).
// The thread's state is a PerThread (Note [Per-thread state on the hot path]).
struct ThreadState {
  std::unordered_map<uint64_t, std::unique_ptr<CachedDecision>> cache;
  std::vector<std::vector<DecisionRecord>> logs;
  struct Last {
    uint64_t key = 0;
    CachedDecision* decision = nullptr;
  };
  std::vector<Last> last;  // by OpId
};
ThreadState& thread_state() { return PerThread<ThreadState>::get(); }

Device call_device(const KernelCall& call) {
  if (call.num_outputs > 0) return call.outputs[0].device();
  return call.inputs[0]->device();
}

// (op, device, the call's first DTypeSignature::kMax dtypes: inputs, then outputs) in one
// word, read from the call directly (no DTypeSignature built on a hit).
uint64_t cache_key(OpId op, Device device, const KernelCall& call) {
  constexpr int kMax = DTypeSignature::kMax;
  uint64_t dtypes = 0;
  int count = 0;
  for (int i = 0; i < call.num_inputs && count < kMax; ++i, ++count)
    dtypes = (dtypes << 5) | static_cast<uint64_t>(call.inputs[i]->dtype());
  for (int i = 0; i < call.num_outputs && count < kMax; ++i, ++count)
    dtypes = (dtypes << 5) | static_cast<uint64_t>(call.outputs[i].dtype());
  dtypes <<= 5 * (kMax - count);
  uint64_t key = op;
  key = (key << 2) | static_cast<uint64_t>(device.type);
  key = (key << 8) | static_cast<uint64_t>(device.index & 0xff);
  key = (key << 3) | static_cast<uint64_t>(count);
  return (key << (5 * kMax)) | dtypes;
}

// Sizes rounded up to powers of two: calls in one class share a timing.
uint64_t shape_class(const KernelCall& call) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < call.num_inputs; ++i) {
    const Dims& shape = call.inputs[i]->shape();
    h = (h ^ static_cast<uint64_t>(shape.size() + 64)) * 1099511628211ull;
    for (int64_t d : shape) h = (h ^ std::bit_width(static_cast<uint64_t>(d))) * 1099511628211ull;
  }
  return h;
}

std::string names_of(const std::vector<KernelRef>& kernels) {
  std::string s;
  for (const auto& k : kernels) s += (s.empty() ? "" : ", ") + k->name;
  return s.empty() ? "none" : s;
}

std::unique_ptr<CachedDecision> decide(OpId op, Device device, const DTypeSignature& sig,
                                       const KernelPolicy& policy, uint64_t version,
                                       uint64_t epoch) {
  auto& registry = KernelRegistry::global();
  std::string op_name = registry.op_name(op);
  auto kernels = registry.kernels(op, device.type);
  std::vector<KernelRef> supported;
  for (const auto& k : kernels)
    if (!k->supports || k->supports(sig)) supported.push_back(k);

  auto d = std::make_unique<CachedDecision>();
  d->policy_version = version;
  d->registry_epoch = epoch;
  d->op = op;
  d->device = device;
  d->signature = sig;
  std::string where = "'" + op_name + "' on " + device.str() + " for (" + sig.str() + ")";
  // Note [Pins and devices]: a pin scoped to a device type ("cuda:matmul") comes first and
  // must hold there. An unscoped pin ("matmul") applies on the device types that have its
  // kernel: a GPU policy (matmul='cublaslt') leaves CPU matmuls to the strategy, and the
  // decision's detail says that the pin did not apply.
  std::string type_name = device.str().substr(0, device.str().find(':'));
  std::optional<std::string> pin = policy.get(type_name + ":" + op_name);
  bool scoped = pin.has_value();
  if (!pin) pin = policy.get(op_name);
  std::string skipped;
  if (pin && !scoped) {
    bool here = false, elsewhere = false;
    for (const auto& k : kernels) here |= k->name == *pin;
    for (int t = 0; t < kNumDeviceTypes && !here; ++t)
      for (const auto& k : registry.kernels(op, static_cast<DeviceType>(t)))
        elsewhere |= k->name == *pin;
    if (!here && elsewhere) {
      skipped = "the pin " + op_name + "='" + *pin + "' does not apply on " + type_name +
                " (no such kernel there); ";
      pin.reset();
    }
  }
  if (pin) {
    KernelRef pinned;
    for (const auto& k : kernels)
      if (k->name == *pin) pinned = k;
    if (!pinned)
      throw UnsupportedOperationError("the kernel policy pins " + where + " to kernel '" +
                                      *pin + "', which is not registered; registered: " +
                                      names_of(kernels));
    if (pinned->supports && !pinned->supports(sig))
      throw UnsupportedOperationError("the kernel policy pins " + where + " to kernel '" +
                                      *pin + "', which does not support these dtypes; "
                                      "kernels that do: " + names_of(supported));
    d->candidates = {pinned};
    d->pinned = true;
    d->reason = DecisionReason::Pinned;
    d->detail = "pinned by the kernel policy (" + (scoped ? type_name + ":" : "") + op_name +
                "='" + *pin + "')";
    return d;
  }
  if (supported.empty())
    throw UnsupportedOperationError("no kernel supports " + where + "; registered: " +
                                    names_of(kernels));
  d->candidates = supported;
  if (policy.auto_strategy() == AutoStrategy::BestPerformance && supported.size() > 1) {
    d->timed = true;
    d->reason = DecisionReason::BestPerformance;
    d->detail = skipped + "BestPerformance: timing " + names_of(supported);
  } else {
    d->reason = DecisionReason::FirstSupported;
    d->detail = skipped + "FirstSupported: first of [" + names_of(supported) + "] by priority";
  }
  return d;
}

CachedDecision& lookup(ThreadState& state, OpId op, const KernelCall& call) {
  const PolicyRef& policy = current_policy();
  uint64_t version = policy->version();
  uint64_t epoch = KernelRegistry::global().epoch();
  Device device = call_device(call);
  uint64_t key = cache_key(op, device, call);
  if (op < state.last.size()) {  // Note [Last decision per op]
    const ThreadState::Last& last = state.last[op];
    if (last.key == key && last.decision && last.decision->policy_version == version &&
        last.decision->registry_epoch == epoch)
      return *last.decision;
  } else {
    state.last.resize(size_t{op} + 1);
  }
  auto& cache = state.cache;
  auto it = cache.find(key);
  if (it != cache.end() && it->second->policy_version == version &&
      it->second->registry_epoch == epoch) {
    state.last[op] = {key, it->second.get()};
    return *it->second;
  }
  // Decide before touching the cache: a decision that throws (a pin nothing honours) must
  // not leave an empty entry behind for the next call to dereference.
  auto decision = decide(op, device, DTypeSignature::of(call), *policy, version, epoch);
  auto& slot = cache[key];
  slot = std::move(decision);
  state.last[op] = {key, slot.get()};
  return *slot;
}

bool accepts(const KernelInfo& k, const KernelCall& call) {
  return !k.accepts || k.accepts(call);
}

// Note: device kernels run asynchronously, so a run on a device is timed between two waits
// for the device (otherwise only the cost of queueing it would be measured).
double seconds_of_run(const KernelInfo& k, const KernelCall& call) {
  Device device = call_device(call);
  const Backend& b = backend(device);
  b.synchronize(device);
  auto start = std::chrono::steady_clock::now();
  k.run(call);
  b.synchronize(device);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Note: timing writes into scratch outputs, so in-place calls (outputs aliasing inputs)
// are timed without disturbing their inputs.
const CachedDecision::Timed& time_candidates(CachedDecision& d, const KernelCall& call) {
  std::vector<Tensor> scratch;
  for (int i = 0; i < call.num_outputs; ++i)
    scratch.push_back(Tensor::empty(call.outputs[i].shape(), call.outputs[i].dtype(),
                                    call.outputs[i].device()));
  KernelCall trial = call;
  trial.outputs = scratch.data();
  int best = -1;
  double best_seconds = 0;
  std::string report;
  // Note: kernels of negative priority are last resorts (the CUDA host fallback): they are
  // timed only when no other kernel accepts the call.
  bool any_regular = false;
  for (const auto& k : d.candidates) any_regular |= k->priority >= 0 && accepts(*k, trial);
  for (size_t i = 0; i < d.candidates.size(); ++i) {
    const KernelInfo& k = *d.candidates[i];
    if ((any_regular && k.priority < 0) || !accepts(k, trial)) continue;
    double seconds = seconds_of_run(k, trial);  // warm-up, and a first estimate
    int repeats = seconds < 1e-3 ? 5 : 2;
    for (int r = 0; r < repeats; ++r) seconds = std::min(seconds, seconds_of_run(k, trial));
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, " %.3g us", seconds * 1e6);
    report += (report.empty() ? "" : ", ") + k.name + buffer;
    if (best < 0 || seconds < best_seconds) { best = static_cast<int>(i); best_seconds = seconds; }
  }
  if (best < 0)
    throw UnsupportedOperationError("no kernel accepts this call of '" +
                                    KernelRegistry::global().op_name(d.op) + "'");
  std::string detail = "BestPerformance: fastest of [" + report + "] for this shape class";
  return d.best.emplace(shape_class(call), CachedDecision::Timed{best, detail}).first->second;
}

// The kernel for this call, and the sentence that explains it.
const KernelInfo& choose(CachedDecision& d, const KernelCall& call, const std::string** why) {
  *why = &d.detail;
  if (d.timed) {
    auto it = d.best.find(shape_class(call));
    const CachedDecision::Timed& t =
        it != d.best.end() ? it->second : time_candidates(d, call);
    const KernelInfo& k = *d.candidates[static_cast<size_t>(t.index)];
    if (accepts(k, call)) { *why = &t.detail; return k; }
  }
  for (const auto& k : d.candidates)
    if (accepts(*k, call)) return *k;
  std::string op = KernelRegistry::global().op_name(d.op);
  if (d.pinned)
    throw UnsupportedOperationError("the kernel policy pins '" + op + "' to '" +
                                    d.candidates[0]->name +
                                    "', which does not accept these inputs (shapes or layout)");
  throw UnsupportedOperationError("no kernel of '" + op + "' accepts these inputs; tried " +
                                  names_of(d.candidates));
}

DecisionRecord make_record(const CachedDecision& d, const KernelInfo& k, const std::string& why) {
  DecisionRecord r;
  r.op = KernelRegistry::global().op_name(d.op);
  r.device = d.device.str();
  r.dtypes = d.signature.str();
  r.kernel = k.name;
  r.reason = d.reason;
  r.detail = why;
  for (const auto& c : d.candidates) r.candidates.push_back(c->name);
  if (&k != d.candidates.front().get() && d.reason == DecisionReason::FirstSupported) {
    r.reason = DecisionReason::Fallback;
    r.detail = "fallback: " + d.candidates.front()->name +
               " does not accept these inputs; " + k.name + " does";
  }
  return r;
}

}  // namespace

DTypeSignature DTypeSignature::of(const KernelCall& call) {
  DTypeSignature sig;
  sig.num_inputs = call.num_inputs;
  for (int i = 0; i < call.num_inputs && sig.count < kMax; ++i)
    sig.dtypes[sig.count++] = call.inputs[i]->dtype();
  for (int i = 0; i < call.num_outputs && sig.count < kMax; ++i)
    sig.dtypes[sig.count++] = call.outputs[i].dtype();
  return sig;
}

std::string DTypeSignature::str() const {
  std::string s;
  for (int i = 0; i < count; ++i) {
    if (i == num_inputs) s += " ->";
    if (i > 0 && i != num_inputs) s += ",";
    if (i > 0) s += " ";
    s += std::string(dtype_info(dtypes[i]).name);
  }
  return s;
}

namespace {
// The profiled path of dispatch (Note [Profiler cost]): off, dispatch never comes here.
template <class Run>
void run_profiled(CachedDecision& d, const KernelInfo& k, const std::string* why,
                  const KernelCall& call, const Run& run) {
  uint32_t session = profiler::session_number();
  if (session && (d.profile_session != session || d.profile_kernel != &k ||
                  d.profile_why != why)) {
    d.profile_id = profiler::add_decision(make_record(d, k, *why));
    d.profile_session = session;
    d.profile_kernel = &k;
    d.profile_why = why;
  }
  const char* nvtx_name = profiler::nvtx_on() ? profiler::stable_op_name(d.op) : nullptr;
  profiler::OpScope scope(d.op, session ? d.profile_id : 0, nvtx_name, call);
  run();
}

// A call's decision, its kernel and why; recorded for an open explain() when `record`.
struct Selection {
  CachedDecision& decision;
  const KernelInfo& kernel;
  const std::string* why;
};

Selection select(ThreadState& state, OpId op, const KernelCall& call, bool record) {
  CachedDecision& d = lookup(state, op, call);
  const std::string* why;
  const KernelInfo& k = choose(d, call, &why);
  if (record && !state.logs.empty()) state.logs.back().push_back(make_record(d, k, *why));
  return {d, k, why};
}

}  // namespace

void dispatch(OpId op, const KernelCall& call) {
  Selection s = select(thread_state(), op, call, true);
  if (profiler::mode()) [[unlikely]]
    return run_profiled(s.decision, s.kernel, s.why, call, [&] { s.kernel.run(call); });
  s.kernel.run(call);
}

void dispatch_keeping_replay(OpId op, const KernelCall& call) {
  uint64_t generation = replay_generation();  // before the decision (Note [Stale replays])
  ThreadState& state = thread_state();
  Selection s = select(state, op, call, true);
  if (profiler::mode()) [[unlikely]]
    return run_profiled(s.decision, s.kernel, s.why, call, [&] { s.kernel.run(call); });
  s.kernel.run(call);
  // Note [Replayed calls] (core/replay.cpp): only the kernel any later call of this key
  // would choose, the decision's first candidate, and not a BestPerformance timing; and
  // not while a log would miss the calls that repeat it.
  if (s.kernel.plan_replay && !s.decision.timed && state.logs.empty() &&
      &s.kernel == s.decision.candidates.front().get())
    keep_replay(op, call, s.decision.candidates.front(), generation);
}

void run_selected(OpId op, const KernelCall& call,
                  const std::function<void(const KernelInfo&)>& body) {
  Selection s = select(thread_state(), op, call, true);
  if (profiler::mode()) [[unlikely]]
    return run_profiled(s.decision, s.kernel, s.why, call, [&] { body(s.kernel); });
  body(s.kernel);
}

KernelRef select_kernel(OpId op, const KernelCall& call, bool record) {
  Selection s = select(thread_state(), op, call, record);
  for (const auto& c : s.decision.candidates)
    if (c.get() == &s.kernel) return c;
  return nullptr;
}

std::vector<DecisionRecord> cached_decisions() {
  std::vector<DecisionRecord> out;
  for (const auto& [key, d] : thread_state().cache) {
    if (!d || d->candidates.empty()) continue;
    if (d->timed && !d->best.empty()) {
      for (const auto& [cls, t] : d->best)
        out.push_back(make_record(*d, *d->candidates[static_cast<size_t>(t.index)], t.detail));
    } else {
      out.push_back(make_record(*d, *d->candidates.front(), d->detail));
    }
  }
  return out;
}

void push_explain_log() {
  thread_state().logs.emplace_back();
  thread_replays_stale();
}

std::vector<DecisionRecord> pop_explain_log() {
  ThreadState& state = thread_state();
  if (state.logs.empty()) return {};
  auto records = std::move(state.logs.back());
  state.logs.pop_back();
  thread_replays_stale();
  return records;
}

double time_decision_lookup(OpId op, const KernelCall& call, int iterations) {
  const KernelInfo* sink = nullptr;
  auto start = std::chrono::steady_clock::now();
  ThreadState& state = thread_state();
  for (int i = 0; i < iterations; ++i) sink = &select(state, op, call, false).kernel;
  auto end = std::chrono::steady_clock::now();
  if (!sink) return 0;
  return std::chrono::duration<double, std::nano>(end - start).count() / iterations;
}

double time_dispatch(OpId op, const KernelCall& call, int iterations, bool hook) {
  const Backend& b = backend(call_device(call));
  Device device = call_device(call);
  b.synchronize(device);
  auto start = std::chrono::steady_clock::now();
  if (hook) {
    for (int i = 0; i < iterations; ++i) dispatch(op, call);
  } else {
    ThreadState& state = thread_state();
    for (int i = 0; i < iterations; ++i) select(state, op, call, true).kernel.run(call);
  }
  auto end = std::chrono::steady_clock::now();
  b.synchronize(device);
  return std::chrono::duration<double, std::nano>(end - start).count() / iterations;
}

}  // namespace xrt
