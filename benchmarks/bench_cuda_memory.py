"""benchmarks/bench_cuda_memory.py: the CUDA allocator and host<->device copies, against
PyTorch and CuPy in the same run. Prints ratios; asserts nothing.

    python benchmarks/bench_cuda_memory.py [--quick]

Targets (issue 4): a cached 4 MB allocation+free <= 1 us (PyTorch 4.8 us, CuPy 4.2 us on
the H100 here); pinned copies >= 50 GB/s each way (PyTorch 54.5 GB/s).
"""

import argparse
import os
import subprocess
import sys

import numpy as np

import xpuruntime as xrt
from common import per_call, table

try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None

try:
    import xpuruntime_testing
except ImportError:  # the test-only module (XRT_BUILD_TEST_MODULE)
    xpuruntime_testing = None

MiB = 1 << 20
_core = xrt._core


def sync():
    xrt.cuda.synchronize(0)


def allocation(rows):
    n = MiB  # float32: 4 MiB
    ours = per_call(lambda: xrt.empty((n,), dtype=xrt.float32, device="cuda:0"))
    native = _core._cuda._time_malloc_free(0, 4 * MiB, 200000)
    peers = {}
    if torch is not None:
        peers["PyTorch"] = per_call(lambda: torch.empty(n, dtype=torch.float32, device="cuda"))
    if cupy is not None:
        peers["CuPy"] = per_call(lambda: cupy.empty(n, dtype=cupy.float32))
    ratio = ", ".join(f"{t / ours:.1f}x faster than {name} ({t * 1e6:.2f} us)"
                      for name, t in peers.items())
    rows.append(("4 MB empty()+free, Python", f"{ours * 1e6:.2f} us", ratio, "<= 1 us"))
    rows.append(("  allocate+free in C++ (Storage)", f"{native * 1e6:.3f} us", "", ""))
    if xpuruntime_testing is not None:
        fake = xpuruntime_testing.FakeAllocator(1 << 30)
        algorithm = fake.time_malloc_free(4 * MiB, 200000)
        rows.append(("  the algorithm alone (fake device)", f"{algorithm * 1e6:.3f} us", "", ""))
    code = ("import sys; sys.path.insert(0, %r); import xpuruntime as xrt; from common import "
            "per_call; print(per_call(lambda: xrt.empty((%d,), dtype=xrt.float32, "
            "device='cuda:0')))" % (os.path.dirname(os.path.abspath(__file__)), n))
    env = dict(os.environ, XPURUNTIME_CUDA_ALLOCATOR="stream_ordered")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode == 0:
        t = float(out.stdout.split()[-1])
        rows.append(("  stream-ordered mode, Python", f"{t * 1e6:.2f} us",
                     f"{t / ours:.1f}x the caching mode", ""))
    else:
        rows.append(("  stream-ordered mode", "failed", out.stderr.strip()[-200:], ""))


def bandwidth(nbytes, seconds):
    return f"{nbytes / seconds / 1e9:.1f} GB/s"


def copies(rows, nbytes, quick):
    n = nbytes
    repeat = 3 if quick else 7
    gpu = xrt.empty((n,), dtype=xrt.uint8, device="cuda:0")
    pinned = xrt.cuda.empty_pinned((n,), dtype=xrt.uint8)
    np.from_dlpack(pinned)[...] = 1
    pageable = xrt.empty((n,), dtype=xrt.uint8)
    np.from_dlpack(pageable)[...] = 1

    def h2d(src):
        _core._cuda.copy_into(gpu, src)
        sync()

    def d2h(dst):
        _core._cuda.copy_into(dst, gpu)

    label = f"{n // MiB} MiB"
    results = {}
    results["pinned H2D"] = per_call(lambda: h2d(pinned), repeat=repeat)
    results["pinned D2H"] = per_call(lambda: d2h(pinned), repeat=repeat)
    results["pageable H2D, staged"] = per_call(lambda: h2d(pageable), repeat=repeat)
    results["pageable D2H, staged"] = per_call(lambda: d2h(pageable), repeat=repeat)
    _core._cuda.set_staging_streaming_stores(False)
    results["pageable H2D, staged, memcpy"] = per_call(lambda: h2d(pageable), repeat=repeat)
    _core._cuda.set_staging_streaming_stores(True)
    _core._cuda.set_staging_threshold((1 << 64) - 1)
    results["pageable H2D, driver"] = per_call(lambda: h2d(pageable), repeat=repeat)
    results["pageable D2H, driver"] = per_call(lambda: d2h(pageable), repeat=repeat)
    _core._cuda.set_staging_threshold(0)
    results["to_device('cuda:0'), pageable"] = per_call(
        lambda: (pageable.to_device("cuda:0"), sync()), repeat=repeat)
    results["to_device('cpu'), new pageable"] = per_call(
        lambda: gpu.to_device("cpu"), repeat=repeat)

    peers = {}
    if torch is not None:
        tg = torch.empty(n, dtype=torch.uint8, device="cuda")
        tp = torch.ones(n, dtype=torch.uint8).pin_memory()
        tq = torch.ones(n, dtype=torch.uint8)
        peers["pinned H2D"] = per_call(
            lambda: (tg.copy_(tp, non_blocking=True), torch.cuda.synchronize()), repeat=repeat)
        peers["pinned D2H"] = per_call(
            lambda: (tp.copy_(tg, non_blocking=True), torch.cuda.synchronize()), repeat=repeat)
        peers["pageable H2D, staged"] = per_call(
            lambda: (tg.copy_(tq), torch.cuda.synchronize()), repeat=repeat)
        peers["pageable D2H, staged"] = per_call(lambda: tq.copy_(tg), repeat=repeat)
        for way in ("H2D", "D2H"):
            for how in ("driver", "staged, memcpy"):
                if f"pageable {way}, {how}" in results:
                    peers[f"pageable {way}, {how}"] = peers[f"pageable {way}, staged"]
        peers["to_device('cuda:0'), pageable"] = per_call(
            lambda: (tq.cuda(), torch.cuda.synchronize()), repeat=repeat)
        peers["to_device('cpu'), new pageable"] = per_call(lambda: tg.cpu(), repeat=repeat)
    for what, t in results.items():
        peer = peers.get(what)
        versus = f"{peer / t:.2f}x PyTorch ({bandwidth(n, peer)})" if peer else ""
        goal = ">= 50 GB/s" if what.startswith("pinned") else ""
        rows.append((f"{label} {what}", bandwidth(n, t), versus, goal))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if not xrt.cuda.is_available():
        print("CUDA unavailable:", xrt.cuda.why_unavailable())
        return
    rows = []
    allocation(rows)
    for size in ([256] if args.quick else [4, 8, 32, 256]):
        copies(rows, size * MiB, args.quick)
    print(table(rows, ["what", "xpuruntime", "versus", "goal"]))
    versions = [f"numpy {np.__version__}"]
    if torch is not None:
        versions.append(f"torch {torch.__version__}")
    if cupy is not None:
        versions.append(f"cupy {cupy.__version__}")
    print("peers:", ", ".join(versions), "| allocator:", xrt.cuda.get_allocator())


if __name__ == "__main__":
    main()
