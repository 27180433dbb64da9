// cpp/src/cuda/graph.cpp: stream capture into a CUDA graph, instantiation and replay.
#include "cuda/graph.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <string>

#include "cuda/allocator.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908;

std::atomic<uint64_t> next_graph_id{1};
std::array<std::atomic<int>, kMaxDevices> captures_on_device{};

// The graphs capturing now, for graph_capturing().
std::mutex capturing_mutex;
std::vector<Graph*>& capturing_graphs() {
  static auto* graphs = new std::vector<Graph*>();
  return *graphs;
}

void set_capturing(Graph* g, bool on) {
  std::lock_guard lock(capturing_mutex);
  auto& graphs = capturing_graphs();
  auto it = std::find(graphs.begin(), graphs.end(), g);
  if (on && it == graphs.end()) graphs.push_back(g);
  if (!on && it != graphs.end()) graphs.erase(it);
}

}  // namespace

void refuse_while_capturing(int device, const char* what) {
  if (device >= 0 && device < kMaxDevices && captures_on_device[device].load() > 0)
    throw CudaError(std::string(what) + " cannot run while a CUDA graph is capturing on cuda:" +
                    std::to_string(device) + ": a host wait cannot be captured; do it before "
                    "capture_begin() or after capture_end()");
}

void refuse_if_capturing(CUstream stream, const char* what) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  XRT_CU(cuStreamIsCapturing, stream, &status);
  if (status != CU_STREAM_CAPTURE_STATUS_NONE)
    throw CudaError(std::string(what) + " cannot run on a stream that is capturing a CUDA "
                    "graph: a graph cannot hold host copies or host waits (item(), bool(), "
                    "to_device('cpu'), asarray of host data); do them before or after the "
                    "capture");
}

RelaxedCaptureMode::RelaxedCaptureMode() {
  driver().cuThreadExchangeStreamCaptureMode(&previous_);
}

RelaxedCaptureMode::~RelaxedCaptureMode() {
  driver().cuThreadExchangeStreamCaptureMode(&previous_);
}

Graph::Graph() : id_(next_graph_id.fetch_add(1)) {}

Graph::~Graph() {
  try {
    reset();
  } catch (...) {
  }
}

void Graph::capture_begin(CaptureMode mode) {
  if (capturing_) throw ValueError("capture_begin(): this graph is already capturing");
  if (exec_) throw ValueError("capture_begin(): this graph holds a capture; reset() it first");
  int device = current_device();
  Stream stream = current(device);
  if (is_default_stream(native(stream)))
    throw ValueError("capture_begin(): a CUDA graph cannot be captured from a default stream; "
                     "use `with xpuruntime.cuda.graph(g):` (it captures on a side stream) or "
                     "make a Stream current first");
  activate(device);
  begin_capture_pool(device, id_, native(stream));
  CUstreamCaptureMode cu_mode = mode == CaptureMode::Global ? CU_STREAM_CAPTURE_MODE_GLOBAL
                                : mode == CaptureMode::ThreadLocal
                                    ? CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
                                    : CU_STREAM_CAPTURE_MODE_RELAXED;
  CUresult r = driver().cuStreamBeginCapture(native(stream), cu_mode);
  if (r != CUDA_SUCCESS) {
    end_capture_pool(device, id_);
    release_capture_pool(device, id_);
    check(r, "cuStreamBeginCapture");
  }
  device_ = device;
  stream_ = stream;
  capturing_ = true;
  captures_on_device[device].fetch_add(1);
  set_capturing(this, true);
}

void Graph::capture_end() {
  if (!capturing_) throw ValueError("capture_end() without capture_begin()");
  activate(device_);
  CUgraph graph = nullptr;
  CUresult r = driver().cuStreamEndCapture(native(stream_), &graph);
  if (r == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) check(r, "cuStreamEndCapture");
  capturing_ = false;
  set_capturing(this, false);
  captures_on_device[device_].fetch_sub(1);
  end_capture_pool(device_, id_);
  stream_ = Stream();
  graph_ = graph;
  if (r != CUDA_SUCCESS) {
    discard();
    check(r, "cuStreamEndCapture (an operation during the capture invalidated it)");
  }
  CUgraphExec exec = nullptr;
  r = driver().cuGraphInstantiateWithFlags(&exec, graph, 0);
  exec_ = exec;
  if (r != CUDA_SUCCESS) {
    exec_ = nullptr;
    discard();
    check(r, "cuGraphInstantiateWithFlags");
  }
}

void Graph::replay() {
  if (!exec_) throw ValueError("replay(): this graph holds no capture");
  activate(device_);
  XRT_CU(cuGraphLaunch, static_cast<CUgraphExec>(exec_), current_stream(device_));
}

void Graph::reset() {
  if (capturing_) {
    // Ends the capture and drops what it held (an exception inside a `with graph` block).
    activate(device_);
    CUgraph graph = nullptr;
    driver().cuStreamEndCapture(native(stream_), &graph);
    capturing_ = false;
    set_capturing(this, false);
    captures_on_device[device_].fetch_sub(1);
    end_capture_pool(device_, id_);
    stream_ = Stream();
    graph_ = graph;
  }
  discard();
}

void Graph::discard() {
  if (device_ < 0) return;
  const DriverApi& api = driver();
  activate(device_);
  if (exec_) api.cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
  if (graph_) api.cuGraphDestroy(static_cast<CUgraph>(graph_));
  exec_ = nullptr;
  graph_ = nullptr;
  release_capture_pool(device_, id_);
  device_ = -1;
  kept_.clear();  // after the pool: a foreign pool may hold memory our kernels also read
}

// Note [Foreign work in our graphs]: another library's kernels may run inside our capture
// (the PyTorch adapter's attention and norm kernels, run by the native engine, allocate
// with torch's caching allocator on our capturing stream). Their replays write and read the
// addresses that library handed out during the capture, so that memory must not go to
// anyone else until the graph is discarded; as our own allocations come from the graph's
// private pool, theirs must come from a pool of theirs that nothing else draws from. The
// library makes that pool while the capture runs and keeps it with the graph (keep()); the
// graph drops it when it is discarded, after its own pool. graph_capturing() finds the
// graph from the capturing stream, the one thing such code knows.
std::shared_ptr<void> Graph::kept(const std::string& key) const {
  for (const auto& [k, thing] : kept_)
    if (k == key) return thing;
  return nullptr;
}

void Graph::keep(const std::string& key, std::shared_ptr<void> thing) {
  if (!capturing_ && !exec_)
    throw ValueError("keep(): the graph holds no capture to keep '" + key + "' with");
  for (auto& [k, kept] : kept_)
    if (k == key) {
      kept = std::move(thing);
      return;
    }
  kept_.emplace_back(key, std::move(thing));
}

Graph* graph_capturing(void* stream) {
  std::lock_guard lock(capturing_mutex);
  for (Graph* g : capturing_graphs())
    if (g->capturing() && g->capture_stream().handle() == stream) return g;
  return nullptr;
}

size_t Graph::num_nodes() const {
  if (!graph_) return 0;
  size_t count = 0;
  XRT_CU(cuGraphGetNodes, static_cast<CUgraph>(graph_), nullptr, &count);
  return count;
}

}  // namespace xrt::cuda
