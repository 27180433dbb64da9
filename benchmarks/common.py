"""benchmarks/common.py: timing helpers shared by the benchmark scripts."""

import os
import statistics
import sys
import time


def per_call(fn, *, number=None, repeat=7, budget=0.2):
    """Best mean seconds per call of fn() over `repeat` runs of `number` calls."""
    fn()
    if number is None:  # calibrate so that one run takes about budget/repeat seconds
        number, elapsed = 1, 0.0
        while True:
            start = time.perf_counter()
            for _ in range(number):
                fn()
            elapsed = time.perf_counter() - start
            if elapsed > budget / repeat or number >= 1 << 22:
                break
            number *= 4
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def best_of_rounds(fns, rounds, number=1):
    """Best mean seconds per call of each fn, the fns taking turns round by round (so that
    load from other processes reaches them alike)."""
    best = [float("inf")] * len(fns)
    for fn in fns:
        fn()
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[i] = min(best[i], (time.perf_counter() - start) / number)
    return best


def event_ms(fn, repeat=15, inner=5):
    """Median device milliseconds of one fn() call: torch CUDA events around `inner` calls
    on the legacy default stream (which xpuruntime, torch and CuPy use unless told
    otherwise), `repeat` times."""
    import torch

    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / inner)
    return statistics.median(times)


def table(rows, headers):
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


# ---- device timing, shared by the bench_cuda_* scripts ----------------------------------


_SPIN = r"""
extern "C" __global__ void bench_spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
}
"""
_spin = []


def host_time(fn, *, per=1, burst=200, rounds=60):
    """Best seconds per call of fn() over `rounds` bursts of `burst` calls, each issued while
    a spin kernel holds the GPU, so that no call waits for it (Note [Host cost behind a busy
    GPU] in cpp/src/cuda/host_costs.cpp). The spin runs on the legacy default stream, which
    xpuruntime, torch and CuPy use unless told otherwise. `per` divides (a call that runs
    several ops)."""
    import numpy as np
    import xpuruntime as xrt

    if not _spin:
        _spin.append(xrt.RawKernel(_SPIN, "bench_spin"))
    fn()
    best = float("inf")
    for _ in range(rounds):
        xrt.cuda.synchronize()
        _spin[0]((1,), (1,), (np.uint64(4_000_000),))  # 4 ms: more than a burst takes
        start = time.perf_counter()
        for _ in range(burst):
            fn()
        best = min(best, (time.perf_counter() - start) / burst)
    xrt.cuda.synchronize()
    return best / per


def optional(module):
    """The module, or None when it is not installed (the peers are optional)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def on_device(host):
    """The NumPy array host on the GPU in each library installed: name -> array."""
    import xpuruntime as xrt

    arrays = {"xpuruntime": xrt.asarray(host, device="cuda:0")}
    if (torch := optional("torch")) is not None:
        arrays["torch"] = torch.from_numpy(host).cuda()
    if (cupy := optional("cupy")) is not None:
        arrays["cupy"] = cupy.asarray(host)
    return arrays


def synchronize():
    """Waits for xpuruntime's device work and that of the peers loaded (torch, cupy)."""
    import xpuruntime as xrt

    xrt.cuda.synchronize()
    if "torch" in sys.modules:
        sys.modules["torch"].cuda.synchronize()
    if "cupy" in sys.modules:
        sys.modules["cupy"].cuda.Device().synchronize()


def timed(fn, repeat):
    """Mean seconds of `repeat` queued calls, the device synchronized before and after."""
    synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    synchronize()
    return (time.perf_counter() - start) / repeat


def median_seconds(calls, repeat, runs, warmups=1):
    """Median per library over `runs` rounds; each round times every library in turn, so
    that clock and temperature drift reach them alike. Each call runs `warmups` times
    first (compiles, plans, allocator caches)."""
    for fn in calls.values():
        for _ in range(warmups):
            fn()
    times = {lib: [] for lib in calls}
    for _ in range(runs):
        for lib, fn in calls.items():
            times[lib].append(timed(fn, repeat))
    return {lib: statistics.median(t) for lib, t in times.items()}


def with_sort_setting(setting, fn):
    """fn run with XPURUNTIME_CUDA_SORT=setting (read by the CUDA sorts on every call)."""
    def call():
        os.environ["XPURUNTIME_CUDA_SORT"] = setting
        try:
            return fn()
        finally:
            del os.environ["XPURUNTIME_CUDA_SORT"]
    return call
