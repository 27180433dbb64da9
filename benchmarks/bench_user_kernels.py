"""benchmarks/bench_user_kernels.py: user kernels (RawKernel, ElementwiseKernel,
ReductionKernel) against CuPy's same classes on the same source, same run.

- Host cost: the host time per launch (tiny arrays), ours and CuPy's, in bursts issued while
  a spin kernel holds the GPU (common.host_time); goal (issue 15): ours <= 0.4x CuPy's.
  Beside it, a loop that never synchronises, which measures the GPU's pace once the launch
  queue is full. Under them, the floor: the CUDA driver's own launch of an empty kernel
  (cuLaunchKernelEx from C++, no Python, timed the same way), as a fraction of CuPy's
  RawKernel call. No launch from Python costs less than that.
- Device time: the same kernel on large arrays, timed as queued launches between
  synchronisations, reported as CuPy time / our time (goal >= 1.0).
- Exchange: xrt.from_dlpack of a torch CUDA tensor (through torch's C exchange table) beside
  the same import through __dlpack__ (copy=False), torch.from_dlpack and cupy.from_dlpack.

    python benchmarks/bench_user_kernels.py [--json out.json]
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import host_time, median_seconds, per_call, table  # noqa: E402

import xpuruntime as xrt  # noqa: E402

SCALE = r'''
extern "C" __global__ void scale(const float* x, float* y, float a, float b, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * a + b;
}
'''
EW = ("T x, T y", "T z", "z = x * y + (T)3", "ew_mad")
RED = ("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "rk_l2")


def host_costs(cp):
    """(name, ours, CuPy's, our loop, CuPy's loop): seconds per launch."""
    n = 16
    x = xrt.ones((n,), dtype=xrt.float32, device="cuda:0")
    y = xrt.empty((n,), dtype=xrt.float32, device="cuda:0")
    cx, cy = cp.ones(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)
    ours, theirs = xrt.RawKernel(SCALE, "scale"), cp.RawKernel(SCALE, "scale")
    a, b = np.float32(2), np.float32(1)
    ew, cew = xrt.ElementwiseKernel(*EW), cp.ElementwiseKernel(*EW)
    red, cred = xrt.ReductionKernel(*RED), cp.ReductionKernel(*RED)
    m = xrt.ones((4, 4), dtype=xrt.float32, device="cuda:0")
    cm = cp.ones((4, 4), dtype=cp.float32)
    cases = [
        ("RawKernel (2 arrays, 3 scalars)", lambda: ours((1,), (32,), (x, y, a, b, n)),
         lambda: theirs((1,), (32,), (cx, cy, a, b, n))),
        ("ElementwiseKernel, output allocated", lambda: ew(x, x), lambda: cew(cx, cx)),
        ("ElementwiseKernel, output passed", lambda: ew(x, x, y), lambda: cew(cx, cx, cy)),
        ("ReductionKernel axis=1", lambda: red(m, axis=1), lambda: cred(cm, axis=1)),
    ]
    rows = []
    for name, mine, cupys in cases:
        host = [host_time(mine), host_time(cupys)]
        loop = [per_call(mine), per_call(cupys)]
        xrt.cuda.synchronize()
        rows.append((name, host[0], host[1], loop[0], loop[1]))
    return rows


def device_times(cp):
    rows = []
    rng = np.random.default_rng(0)
    n = 1 << 24
    h = rng.standard_normal(n).astype(np.float32)
    x, y = xrt.asarray(h, device="cuda:0"), xrt.empty((n,), dtype=xrt.float32, device="cuda:0")
    cx, cy = cp.asarray(h), cp.empty(n, dtype=cp.float32)
    ours, theirs = xrt.RawKernel(SCALE, "scale"), cp.RawKernel(SCALE, "scale")
    g = ((n + 255) // 256,)
    a, b = np.float32(2), np.float32(1)
    rows.append(("RawKernel scale, 2^24 float32", median_seconds({
        "ours": lambda: ours(g, (256,), (x, y, a, b, n)),
        "cupy": lambda: theirs(g, (256,), (cx, cy, a, b, n))}, 20, 5)))
    ew, cew = xrt.ElementwiseKernel(*EW), cp.ElementwiseKernel(*EW)
    rows.append(("ElementwiseKernel, 2^24 contiguous", median_seconds({
        "ours": lambda: ew(x, x, y), "cupy": lambda: cew(cx, cx, cy)}, 20, 5)))
    m = rng.standard_normal((4096, 4096)).astype(np.float32)
    xm, cm = xrt.asarray(m, device="cuda:0"), cp.asarray(m)
    ym = xrt.empty((4096, 4096), dtype=xrt.float32, device="cuda:0")
    cym = cp.empty((4096, 4096), cp.float32)
    rows.append(("ElementwiseKernel, 4096^2 transposed input", median_seconds({
        "ours": lambda: ew(xm.mT, xm, ym), "cupy": lambda: cew(cm.T, cm, cym)}, 20, 5)))
    red, cred = xrt.ReductionKernel(*RED), cp.ReductionKernel(*RED)
    for axis in (1, 0):
        rows.append((f"ReductionKernel l2, 4096^2 axis={axis}", median_seconds({
            "ours": lambda: red(xm, axis=axis), "cupy": lambda: cred(cm, axis=axis)}, 10, 5)))
    return rows


def exchange_costs(cp):
    import torch

    t = torch.ones(64, 64, device="cuda")
    x = xrt.from_dlpack(t)
    rows = [("xrt.from_dlpack(torch), C exchange API", per_call(lambda: xrt.from_dlpack(t))),
            ("xrt.from_dlpack(torch, copy=False), __dlpack__",
             per_call(lambda: xrt.from_dlpack(t, copy=False))),
            ("torch.from_dlpack(xrt tensor)", per_call(lambda: torch.from_dlpack(x))),
            ("cupy.from_dlpack(torch)", per_call(lambda: cp.from_dlpack(t)))]
    torch.cuda.synchronize()
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args()
    import cupy as cp

    print(f"device: {xrt.cuda.get_device_properties(0).name}")
    host = host_costs(cp)
    print(table([(name, f"{o * 1e6:.2f} us", f"{c * 1e6:.2f} us", f"{o / c:.2f}x",
                  f"{lo * 1e6:.2f} / {lc * 1e6:.2f} us")
                 for name, o, c, lo, lc in host],
                ("host cost per launch", "xpuruntime", "CuPy", "ours / CuPy (goal <= 0.4)",
                 "loop: ours / CuPy")))
    pieces = xrt._core._cuda._host_costs(20000)
    bare = (pieces["launch_ex_ns"] if pieces["launch_ex_ns"] >= 0 else pieces["launch_ns"]) * 1e-9
    raw_cupy = host[0][2]
    print(f"floor: the driver's bare launch {bare * 1e6:.2f} us = {bare / raw_cupy:.2f}x CuPy's "
          f"RawKernel call; ours {host[0][1] * 1e6:.2f} us = bare + "
          f"{(host[0][1] - bare) * 1e6:.2f} us")
    dev = device_times(cp)
    print(table([(name, f"{t['ours'] * 1e6:.1f} us", f"{t['cupy'] * 1e6:.1f} us",
                  f"{t['cupy'] / t['ours']:.2f}x") for name, t in dev],
                ("device time per launch", "xpuruntime", "CuPy", "CuPy / ours (goal >= 1)")))
    exchange = exchange_costs(cp)
    print(table([(name, f"{t * 1e6:.2f} us") for name, t in exchange],
                ("DLPack import (64x64 float32 on CUDA)", "host time")))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"host": {n: {"ours": o, "cupy": c, "ours_loop": lo, "cupy_loop": lc}
                                for n, o, c, lo, lc in host},
                       "bare_launch": bare,
                       "device": {n: t for n, t in dev},
                       "exchange": dict(exchange)}, f, indent=1)


if __name__ == "__main__":
    main()
