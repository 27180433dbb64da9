// cpp/src/cuda/host_costs.cpp: what the pieces every CUDA op pays cost the host, measured in
// C++ (benchmarks/bench_cuda_host_cost.py prints them beside whole ops).
//
// Note [Host cost behind a busy GPU]: a long loop of launches measures the host only while
// the GPU keeps up. On the H100 and H200 machines here, back-to-back tiny kernels of one
// stream take the GPU 3.5-6 us each, about what the host needs to issue them: the launch
// queue fills, and then every launch waits for a slot, so the loop measures the GPU. Each
// launching piece is therefore timed in bursts of kBurst calls, issued while a spin kernel
// holds the stream (the GPU starts none of them until the burst is over), the best burst
// counting. Pieces that launch nothing are timed in plain loops.
//
// Note [Where the host time of a tiny op goes]: instruction fetch, more than instructions.
// callgrind with its cache model, over 2,050 `a + b` of 16 floats on an H100 host
// (2026-11-27), per op: the driver's launch ran 7,963 instructions and missed the 32 KB L1
// instruction cache 642 times; our code (binding, dispatch, allocation, the launch's
// arguments) ran about 3,440 and missed 273 times; Python and libc about 1,800 and 80. The
// driver's code evicts ours between two ops, so nearly every 64-byte line of our path is
// fetched again from L2 each time: about 13 instructions per miss, the code run once per
// line. The time of our part therefore follows the number of distinct code lines an op
// runs, not its loops: fewer functions and less code on the path, not faster ones. (Built
// with -Os instead of -O3, the files of that path came out 216 KB smaller in all, and the
// A/B on one host could not tell them apart: launches alone moved by 0.9 us between
// processes there.) Data misses were few: 45 reads per op, 10 of them ours.
//
// The same count on an H200 host after the operators got C slots (Note [Operator slots]),
// the result object its direct construction, the allocation its skipped activate and
// binary_on its short path (2026-11-27, against the code before): our module 3,076
// instructions and 227 misses per op (was 3,579 and 269), Python 533 and 24 (715 and 38),
// libc 39 misses (42), the driver 635 (643). 335 misses outside the driver, against 395.
// Ours by function (a symbol build, before binary_on's short path): ElementwiseKernel::run
// 22, binary_on 18 of its own, CachingAllocator::allocate 17 (each op splits a 512-byte
// block from a free one, and the free merges it back), Tensor::empty 11, the dispatcher's
// lookup 9, launch 8.
//
// The allocation's share, measured on H100 hosts in C++ as `add` minus `add_inplace` (the
// result's allocation, Tensor and free): 0.14-0.56 us a call before Note [Refiling a free
// block], 0.25-0.30 after (2026-11-27, four processes each, alternating, on one host); a
// cached malloc+free pair alone went from 77-92 to 43 ns on a 2-core VM. `a + b` from
// Python then took 4.00 us on an H100 host whose bare cuLaunchKernel took 3.37, and
// 4.13 / 5.13 us in two later runs there (launch 3.13 / 3.61): the host's own noise is of
// the size of our part.
//
// Tried and measured later (2026-11-27, instructions per turn of a CPU `a + b` loop with
// the result's free, callgrind): pooled Tensor objects (Note [Pooled Tensor objects] in
// bind_tensor.cpp) 2,924 -> 2,580; the dispatcher's last decision per op and its thread
// state without TLS guards (Note [Last decision per op] in dispatcher.cpp) -> 2,437. On
// an H100 host, the Python part of a CUDA `a + b` (Python less the C++ `add`) went from
// 0.54-0.67 to 0.21-0.50 us with pooling (five alternating processes each). Not kept:
// GCC's hot attribute on the path's 45 functions, which gathers them in .text.hot: the
// CPU path touched as many distinct cache lines as before (162), and on an H100 host our
// part did not drop (four alternating processes each).
//
// Hidden symbols (Note [Hidden symbols] in CMakeLists.txt, 2026-11-27): the layers' ~6,900
// exported functions went to 147 and the module's PLT from 2,700 entries to 643, so calls
// inside the module are direct and GCC inlines across them. One H100 host, the build before
// and after alternating (two rounds each, `a + b` timed as a loop's statement): our part
// 1.029 / 1.038 -> 0.974 / 0.986 us, in C++ 0.821 / 0.776 -> 0.775 / 0.696; `a + b` 3.54 /
// 3.56 -> 3.33 / 3.36 us. On the 2-core VM (CPU tensors): a + b 190 -> 175 ns, a + 1.0
// 358 -> 305, exp 214 -> 188, sum 243 -> 215.
//
// Counted without a GPU (tools/cuda_host_instructions.sh CACHE=1: callgrind's cache model,
// each fake launch evicting our code as the driver's does), 2026-11-27: a CUDA `a + b` ran
// 3,273 instructions with 313 L1 instruction misses outside the driver (our module 245,
// Python 36, libc 22, libstdc++ 8). Storage headers from a per-thread list (Note [Pooled
// storage headers] in core/storage.cpp) and a futex mutex in the caching allocator (Note
// [Light mutex] in core/light_mutex.h) took libc off the path: 3,066 and 285. Replayed
// calls (Note [Replayed calls] in core/replay.cpp): 2,430 and about 215. One H100
// host, the session's first and last builds alternating in seven processes each (2 s of
// warm-up, bursts as bench_cuda_host_cost.py times them): our part of `a + b` 1.03 -> 0.79
// us median (0.47-0.86 for the new build), `xrt.add(a, b)` 1.09 -> 0.77, `exp(a)` 0.85 ->
// 0.70; the bare launch there cost 2.75 us.
//
// Later the same day: replays of host scalars and in-place operators, and remembered
// reduction kernels (Note [Reduction kernels remembered] in reduce_launch.cpp). Our module's
// L1 instruction misses a call: `a + 1.0` 369 -> 234, `a += b` -> 66, `sum(a)` 470 -> ~360
// (`a + b` 174). The session's first and last builds alternating in six processes each on
// two H100 hosts, our part's median: `a + 1.0` 1.38 -> 0.94 and 1.23 -> 1.04 us, `a += b`
// 0.63 -> 0.41 and 0.63 -> 0.53, `sum(a)` 1.55 -> 1.19 (first host), `a + b` 0.80 -> 0.73
// and 0.80 -> 0.80 (its code did not change). On a third, noisier host
// (bare launch 2.9-3.7 us within one process) seven processes each could not tell the
// builds apart. Kept small blocks in the caching allocator (`a + b` 174 -> 149 misses with
// everything else) stay out: one unexplained illegal-address failure of the CUDA suite when
// they were first tried, though three full runs with them passed this time, and no gain
// the noisy host's timing could show.
//
// 2026-11-28: replays check one generation (Note [Stale replays] in core/replay.cpp), binary()
// its devices inline, the allocation its device lookups inline: our module's misses for
// `a + b` 174 -> 164 (1,979 -> 1,869 instructions), `a += b` 66 -> 59. On three H100 hosts
// our part of `a + b` then measured 0.74 us (median of six processes, the previous build
// 0.83 in the same rounds), 0.51 and 0.81 (bench_cuda_host_cost.py's same-round row): the
// spread between hosts and processes (bare launches of 2.6-3.9 us within one run) is
// larger than what the change took.
//
// Later on 2026-11-28, at the same code: 20 processes on three H100 hosts (each 2 s of
// warm-up, then bursts as above) put our part of `a + b` at 0.57-1.10 us, median 0.73, 13 of
// them at or under 0.8. Two levers tried again and not kept, each against that build in
// alternating processes on one host: kept small blocks (Note [Blocks kept whole], `git show
// 3a07727 -- cpp/`) passed the full CUDA suite (4,821 tests; the illegal address of their
// first trial did not come back: four full runs have passed) but measured 0.73 us median
// against 0.65 (four processes each); the hot attribute on about 60 functions of the paths
// (above) measured 0.86 against 0.75 (eight each), and callgrind's misses moved 164 ->
// 157-163 with the layout.
#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cuda/allocator.h"
#include "cuda/driver.h"
#include "cuda/jit.h"
#include "cuda/runtime.h"
#include "xpuruntime/cuda/libraries.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"

namespace xrt::cuda {
namespace {

constexpr int kBurst = 200;

// An elementwise launch's arguments (DenseArgs<4>: four pointers, n, the host values).
struct Args96 {
  void* ptr[4];
  long long n;
  alignas(16) unsigned long long values[3][2];
};
static_assert(sizeof(Args96) == 96, "DenseArgs<4>'s layout");

const char* const kSpinSource = R"(
extern "C" __global__ void xrt_spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
)";

}  // namespace

HostCosts measure_host_costs(int count, const std::function<void()>& burst, int burst_ops) {
  if (count <= 0) throw ValueError("count must be positive");
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point start) {
    return std::chrono::duration<double, std::nano>(clock::now() - start).count();
  };
  auto per_call = [&](auto&& body) {
    body();  // first call outside the timing (compiles, creates, warms)
    auto start = clock::now();
    for (int i = 0; i < count; ++i) body();
    return since(start) / count;
  };
  int device = current_device();
  activate(device);
  CUstream stream = current_stream(device);
  CUfunction spin = jit_function(device, {kSpinSource, {}}, "xrt_spin");
  // 3 ms: longer than a burst takes to issue, at 15 us a call
  unsigned long long spin_ns = 3000000;
  void* spin_args[] = {&spin_ns};
  int rounds = std::max(5, count / (10 * kBurst));
  // Note [Host cost behind a busy GPU]. The bodies take turns round by round, so that none
  // gains from running later (the host's clock settles while a process runs). A body is one
  // call, made kBurst times a burst, or a whole burst of `ops` calls (the caller's burst).
  struct Timed {
    std::function<void()> body;
    int calls = kBurst;  // calls of body per burst
    int ops = kBurst;    // what the burst's time is divided by
  };
  auto behind_busy_gpu = [&](const std::vector<Timed>& bodies) {
    std::vector<double> best(bodies.size(), std::numeric_limits<double>::infinity());
    for (const Timed& t : bodies) t.body();
    for (int r = 0; r < rounds; ++r) {
      for (size_t k = 0; k < bodies.size(); ++k) {
        XRT_CU(cuStreamSynchronize, stream);
        launch(spin, {1}, {1}, 0, stream, spin_args);
        auto start = clock::now();
        for (int i = 0; i < bodies[k].calls; ++i) bodies[k].body();
        best[k] = std::min(best[k], since(start) / bodies[k].ops);
      }
    }
    XRT_CU(cuStreamSynchronize, stream);
    return best;
  };

  CUfunction nothing = jit_function(
      device, {"extern \"C\" __global__ void xrt_empty(float* a, const float* b, long long n) {}", {}},
      "xrt_empty");
  float* a = nullptr;
  long long n = 16;
  void* args[] = {&a, &a, &n};
  CUfunction nothing96 = jit_function(
      device, {"struct A { void* p[4]; long long n; alignas(16) unsigned long long v[3][2]; };\n"
               "extern \"C\" __global__ void xrt_empty96(A a) {}", {}},
      "xrt_empty96");
  Args96 args96{};
  void* params96[] = {&args96};
  size_t bytes96 = sizeof args96;
  void* extra[] = {reinterpret_cast<void*>(1), &args96,  // CU_LAUNCH_PARAM_BUFFER_POINTER
                   reinterpret_cast<void*>(2), &bytes96,  // CU_LAUNCH_PARAM_BUFFER_SIZE
                   nullptr};                              // CU_LAUNCH_PARAM_END
  auto ex = driver().cuLaunchKernelEx;
  CUlaunchConfig config{1, 1, 1, 128, 1, 1, 0, stream, nullptr, 0};

  // The same launch of a kernel that does the add (what our add kernel does, without our
  // code around it): whether the driver takes longer for a kernel with a body.
  CUfunction add96 = jit_function(
      device, {"struct A { void* p[4]; long long n; alignas(16) unsigned long long v[3][2]; };\n"
               "extern \"C\" __global__ void xrt_add96(A a) {\n"
               "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i < a.n) ((float*)a.p[0])[i] = ((const float*)a.p[1])[i] + "
               "((const float*)a.p[2])[i];\n}", {}},
      "xrt_add96");
  Tensor x = xrt::empty(Dims{16}, DType::Float32, Device::cuda(device));
  Tensor y = xrt::empty(Dims{16}, DType::Float32, Device::cuda(device));
  Args96 add_args{{x.data(), x.data(), y.data(), nullptr}, 16, {}};
  void* add_params[] = {&add_args};

  // The whole ops without Python (what a binding adds is the Python time less these) take
  // turns with the bare launches round by round: their differences are free of the host's
  // drift between rounds.
  HostCosts costs;
  std::vector<Timed> launch_bodies = {
      {[&] { launch(nothing, {1}, {128}, 0, stream, args); }},
      {[&] { XRT_CU(cuLaunchKernel, nothing96, 1, 1, 1, 128, 1, 1, 0, stream, params96, nullptr); }},
      {[&] { XRT_CU(cuLaunchKernel, nothing96, 1, 1, 1, 128, 1, 1, 0, stream, nullptr, extra); }},
      {[&] {
        if (ex) check(ex(&config, nothing96, params96, nullptr), "cuLaunchKernelEx");
      }},
      {[&] { launch(add96, {1}, {128}, 0, stream, add_params); }},
      {[&] { binary_inplace(BinaryOp::add, x, y); }},
      {[&] { (void)binary(BinaryOp::add, x, y); }}};
  if (burst) {
    if (burst_ops <= 0 || burst_ops > 4 * kBurst)
      throw ValueError("burst_ops must be in [1, " + std::to_string(4 * kBurst) + "]");
    launch_bodies.push_back({burst, 1, burst_ops});
  }
  std::vector<double> launches = behind_busy_gpu(launch_bodies);
  costs.launch_ns = launches[0];
  costs.launch_args96_ns = launches[1];
  costs.launch_extra_ns = launches[2];
  if (ex) costs.launch_ex_ns = launches[3];
  costs.launch_add96_ns = launches[4];
  costs.add_inplace_ns = launches[5];
  costs.add_ns = launches[6];
  if (burst) costs.burst_op_ns = launches[7];
  // The GPU's own time per launch, back to back (what a long loop of launches measures).
  XRT_CU(cuStreamSynchronize, stream);
  costs.launch_loop_ns = per_call([&] { launch(nothing, {1}, {128}, 0, stream, args); });
  XRT_CU(cuStreamSynchronize, stream);

  costs.activate_ns = per_call([&] { activate(device); });
  costs.current_stream_ns = per_call([&] { (void)current_stream(device); });
  costs.allocate_free_ns = per_call([&] { (void)allocate_storage(64, device, stream); });
  costs.empty_ns =
      per_call([&] { (void)xrt::empty(Dims{16}, DType::Float32, Device::cuda(device)); });
  return costs;
}

}  // namespace xrt::cuda
