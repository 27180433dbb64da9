"""benchmarks/bench_cuda_sets.py: CUDA masks, nonzero, unique, isin and repeat against
PyTorch and CuPy, measured in the same run on the same data.

Cases: x[mask] of 1e6 and 1e8 float32 (mask density 50%), nonzero of 1e7 bool, x[mask] = 0 on
1e8 float32, unique of 1e7 int32 with 1e3 and 1e6 distinct values (with counts), isin of 1e7
int32 against 1e4, repeat of 1e7 float32 by 3; unique_counts and unique_inverse also with the
previous 4-bit radix sort (XPURUNTIME_CUDA_SORT=lsd4), for comparison. Each library's call is
timed as a user sees it (allocations, and the host's wait for a data-dependent size, included):
calls are queued back to back and the device is synchronized once per run; the libraries take
turns, and the median of several runs is kept. Prints milliseconds per call and the ratios
library time / xpuruntime time (above 1: xpuruntime is faster).

    python benchmarks/bench_cuda_sets.py [--repeat 10] [--runs 5]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import median_seconds, on_device, optional, table, with_sort_setting  # noqa: E402

import xpuruntime as xrt  # noqa: E402

torch, cupy = optional("torch"), optional("cupy")

LIBRARIES = ("xpuruntime", "torch", "cupy")


def cases(rng):
    """(name, {library: argument-free call}) with the data already on the device."""
    for n in (10**6, 10**8):
        x = on_device(rng.random(n, dtype=np.float32))
        m = on_device(rng.random(n) < 0.5)
        yield f"x[mask] {n:.0e} f32", {lib: (lambda x=x[lib], m=m[lib]: x[m]) for lib in x}
        if n == 10**8:
            def assign(x, m):
                x[m] = 0
            yield f"x[mask] = 0 {n:.0e} f32", {
                lib: (lambda x=x[lib], m=m[lib]: assign(x, m)) for lib in x}
        del x, m
    b = on_device(np.random.default_rng(1).random(10**7) < 0.5)
    yield "nonzero 1e7 bool", {
        "xpuruntime": lambda: xrt.nonzero(b["xpuruntime"]),
        "torch": lambda: torch.nonzero(b["torch"], as_tuple=True),
        "cupy": lambda: cupy.nonzero(b["cupy"])}
    for distinct in (10**3, 10**6):
        u = on_device(rng.integers(0, distinct, size=10**7).astype(np.int32))
        yield f"unique_counts 1e7 i32, {distinct:.0e} values", {
            "xpuruntime": lambda u=u: xrt.unique_counts(u["xpuruntime"]),
            "torch": lambda u=u: torch.unique(u["torch"], sorted=True, return_counts=True),
            "cupy": lambda u=u: cupy.unique(u["cupy"], return_counts=True)}
        yield "  the same, 4-bit radix sort (lsd4)", {
            "xpuruntime": with_sort_setting("lsd4", lambda u=u: xrt.unique_counts(u["xpuruntime"])),
            "torch": lambda u=u: torch.unique(u["torch"], sorted=True, return_counts=True)}
    f = on_device((rng.integers(0, 10**6, size=10**7) / 7).astype(np.float32))
    yield "unique_inverse 1e7 f32, 1e6 values", {
        "xpuruntime": lambda: xrt.unique_inverse(f["xpuruntime"]),
        "torch": lambda: torch.unique(f["torch"], sorted=True, return_inverse=True),
        "cupy": lambda: cupy.unique(f["cupy"], return_inverse=True)}
    yield "  the same, 4-bit radix sort (lsd4)", {
        "xpuruntime": with_sort_setting("lsd4", lambda: xrt.unique_inverse(f["xpuruntime"])),
        "torch": lambda: torch.unique(f["torch"], sorted=True, return_inverse=True)}
    a = on_device(rng.integers(0, 10**5, size=10**7).astype(np.int32))
    t = on_device(rng.integers(0, 10**5, size=10**4).astype(np.int32))
    yield "isin 1e7 vs 1e4 i32", {
        "xpuruntime": lambda: xrt.isin(a["xpuruntime"], t["xpuruntime"]),
        "torch": lambda: torch.isin(a["torch"], t["torch"]),
        "cupy": lambda: cupy.isin(a["cupy"], t["cupy"])}
    r = on_device(rng.random(10**7, dtype=np.float32))
    yield "repeat 1e7 f32 by 3", {
        "xpuruntime": lambda: xrt.repeat(r["xpuruntime"], 3),
        "torch": lambda: torch.repeat_interleave(r["torch"], 3),
        "cupy": lambda: cupy.repeat(r["cupy"], 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not xrt.cuda.is_available():
        print("CUDA unavailable:", xrt.cuda.why_unavailable())
        return
    headers = ["case", "xrt ms", "torch ms", "cupy ms", "torch/xrt", "cupy/xrt"]
    rows = []
    for name, calls in cases(np.random.default_rng(0)):
        calls = {lib: fn for lib, fn in calls.items()
                 if lib == "xpuruntime" or {"torch": torch, "cupy": cupy}[lib] is not None}
        t = median_seconds(calls, args.repeat, args.runs)
        row = [name] + [f"{t[lib] * 1e3:.3f}" if lib in t else "-" for lib in LIBRARIES]
        row += [f"{t[lib] / t['xpuruntime']:.2f}" if lib in t else "-"
                for lib in ("torch", "cupy")]
        rows.append(row)
        print(table([row], headers).splitlines()[-1], flush=True)
    print()
    print(table(rows, headers))
    print("\nratios are library time / xpuruntime time: above 1, xpuruntime is faster")


if __name__ == "__main__":
    main()
