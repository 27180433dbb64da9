"""benchmarks/bench_cuda_jit.py: the NVRTC JIT's costs, and copy/astype against the peers.

Prints (GPU needed):
  - the first call of a new kernel (NVRTC compile + module load + launch), a call that finds
    it in memory, and the first call in a new process that finds it on disk;
  - bandwidth of astype (float32 -> float16, contiguous) and of a transposed copy, as ratios
    against PyTorch and CuPy measured in the same run (above 1: xpuruntime is faster).

    python benchmarks/bench_cuda_jit.py
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import xpuruntime as xrt

FIRST_CALLS = """
import json, time
import xpuruntime as xrt
x = xrt.full((1024,), 1.5, dtype=xrt.float32, device="cuda")  # context, memset: no JIT
x.to_device("cpu")
times = []
for _ in range(3):
    start = time.perf_counter()
    y = xrt.astype(x, xrt.float16)
    y[:1].to_device("cpu")
    times.append(time.perf_counter() - start)
info = xrt.cuda.jit_cache_info()
print(json.dumps({"times": times, "compiles": info["compiles"], "disk_hits": info["disk_hits"]}))
"""


def first_calls():
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, XPURUNTIME_CACHE_DIR=folder, XPURUNTIME_DISABLE_KERNEL_CACHE="0")
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", FIRST_CALLS], env=env, check=True,
                                 capture_output=True, text=True).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
    cold, warm = runs
    print(f"first call, NVRTC compile + load: {cold['times'][0] * 1e3:8.2f} ms "
          f"(compiles {cold['compiles']})")
    print(f"later call, found in memory:      {cold['times'][2] * 1e3:8.2f} ms")
    print(f"new process, found on disk:       {warm['times'][0] * 1e3:8.2f} ms "
          f"(compiles {warm['compiles']}, disk hits {warm['disk_hits']})")


def best_of(run, sync, repeat=20):
    run()
    sync()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def bandwidth():
    try:
        import torch
    except ImportError:
        print("PyTorch missing: no bandwidth comparison")
        return
    try:
        import cupy
    except ImportError:
        cupy = None
    sync = torch.cuda.synchronize  # one primary context: waits for xpuruntime's work too
    n, side = 1 << 28, 1 << 14
    x = xrt.full((n,), 0.7, dtype=xrt.float32, device="cuda")
    m = xrt.full((side, side), 0.7, dtype=xrt.float32, device="cuda")
    t = torch.full((n,), 0.7, device="cuda")
    tm = torch.full((side, side), 0.7, device="cuda")
    c = cupy.full((n,), 0.7, dtype=cupy.float32) if cupy else None
    cm = cupy.full((side, side), 0.7, dtype=cupy.float32) if cupy else None
    cases = {
        "astype float32->float16, 2^28": (
            lambda: xrt.astype(x, xrt.float16), lambda: t.to(torch.float16),
            (lambda: c.astype(cupy.float16)) if cupy else None, n * 6),
        "transposed copy float32, 2^14 x 2^14": (
            lambda: xrt.astype(m.T, xrt.float32, copy=True), lambda: tm.t().contiguous(),
            (lambda: cupy.ascontiguousarray(cm.T)) if cupy else None, side * side * 8),
    }
    for name, (ours, theirs, cupys, nbytes) in cases.items():
        a, b = best_of(ours, sync), best_of(theirs, sync)
        line = f"{name}: xpuruntime {nbytes / a / 1e12:.2f} TB/s, vs PyTorch {b / a:.2f}x"
        if cupys:
            line += f", vs CuPy {best_of(cupys, sync) / a:.2f}x"
        print(line)


if __name__ == "__main__":
    if not xrt.cuda.is_available():
        sys.exit(f"CUDA unavailable: {xrt.cuda.why_unavailable()}")
    first_calls()
    bandwidth()
