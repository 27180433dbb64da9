"""benchmarks/bench_cuda_sort.py: CUDA sort and argsort against PyTorch and CuPy, measured
in the same run on the same data.

Cases: 1-D rows of 2^20, 2^24 and 2^26 keys of float32, int32, int64 and float64 (floats
normal, integers uniform over their whole range, so that every radix pass has work), sort
(torch.sort returns values and indices, cupy.sort values) and argsort; descending and
stable=True/False on float32; batches of rows (256 x 65536, 16 x 2^20) sorted along the
last axis. Then xpuruntime's previous radix sort (XPURUNTIME_CUDA_SORT=lsd4) on a few
cases, and shapes of the onesweep pass (XPURUNTIME_CUDA_SORT=onesweep:ITEMS:MIN_BLOCKS).

Each library's call is timed as a user sees it (the result's allocation included): calls
are queued back to back and the device is synchronized once per run; the libraries take
turns, and the median of several runs is kept. Ratios are library time / xpuruntime time
(above 1: xpuruntime is faster). Every xpuruntime result is checked against PyTorch's
stable sort on the device before it is timed.

    python benchmarks/bench_cuda_sort.py [--repeat 5] [--runs 3] [--quick]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import median_seconds, on_device, optional, table, with_sort_setting  # noqa: E402

import xpuruntime as xrt  # noqa: E402

torch, cupy = optional("torch"), optional("cupy")

LIBS = ("xpuruntime", "torch", "cupy")


def host_data(dtype, shape, rng):
    if dtype.startswith("int"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    return rng.standard_normal(shape, dtype=np.float64).astype(dtype)


def check(op, x, t, descending):
    """xpuruntime's result equals torch's stable sort (values or indices), on the device."""
    if torch is None:
        return "-"
    values, indices = torch.sort(t, dim=-1, descending=descending, stable=True)
    fn = xrt.argsort if op == "argsort" else xrt.sort
    got = torch.from_dlpack(fn(x, axis=-1, descending=descending))
    want = indices if op == "argsort" else values
    return "ok" if torch.equal(got, want) else "WRONG"


def calls_for(op, a, descending=False, stable=True, cupy_ok=True):
    """{library: call} for one case; cupy has no descending sort."""
    x = a["xpuruntime"]
    fn = xrt.argsort if op == "argsort" else xrt.sort
    calls = {"xpuruntime": lambda: fn(x, axis=-1, descending=descending, stable=stable)}
    if "torch" in a:
        t = a["torch"]
        if op == "argsort":
            calls["torch"] = lambda: torch.argsort(t, dim=-1, descending=descending, stable=stable)
        else:
            calls["torch"] = lambda: torch.sort(t, dim=-1, descending=descending, stable=stable)
    if "cupy" in a and cupy_ok and not descending:
        c = a["cupy"]
        calls["cupy"] = (lambda: cupy.argsort(c, axis=-1)) if op == "argsort" else (
            lambda: cupy.sort(c, axis=-1))
    return calls


def report(rows, row, headers):
    rows.append(row)
    print(table([row], headers).splitlines()[-1], flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2^20 and 2^24 only, no sweep")
    args = parser.parse_args()
    if not xrt.cuda.is_available():
        print("CUDA unavailable:", xrt.cuda.why_unavailable())
        return
    rng = np.random.default_rng(0)
    headers = ["case", "check", "xrt ms", "torch ms", "cupy ms", "torch/xrt", "cupy/xrt"]
    rows = []

    def measure(name, op, a, **kw):
        status = check(op, a["xpuruntime"], a.get("torch"), kw.get("descending", False))
        t = median_seconds(calls_for(op, a, **kw), args.repeat, args.runs)
        ms = [f"{t[lib] * 1e3:.3f}" if lib in t else "-" for lib in LIBS]
        ratios = [f"{t[lib] / t['xpuruntime']:.2f}" if lib in t else "-" for lib in LIBS[1:]]
        report(rows, [name, status] + ms + ratios, headers)

    print(table([], headers))
    exponents = (20, 24) if args.quick else (20, 24, 26)
    for dtype in ("float32", "int32", "int64", "float64"):
        for e in exponents:
            a = on_device(host_data(dtype, (1 << e,), rng))
            for op in ("sort", "argsort"):
                measure(f"{op} {dtype} 2^{e}", op, a)
            del a
    a = on_device(host_data("float32", (1 << 24,), rng))
    for op in ("sort", "argsort"):
        measure(f"{op} float32 2^24 descending", op, a, descending=True)
        measure(f"{op} float32 2^24 stable=False", op, a, stable=False)
    del a
    for shape in ((256, 65536), (16, 1 << 20)):
        for dtype in ("float32", "int64"):
            a = on_device(host_data(dtype, shape, rng))
            for op in ("sort", "argsort"):
                measure(f"{op} {dtype} {shape[0]}x{shape[1]}", op, a)
            del a
    print()
    print(table(rows, headers))
    print("\nratios are library time / xpuruntime time: above 1, xpuruntime is faster "
          "(goal: >= 1.0 against torch and cupy)")

    # Before and after: the 4-bit radix sort this one replaces, in the same run.
    print("\nxpuruntime's previous sort (XPURUNTIME_CUDA_SORT=lsd4) against the onesweep sort")
    old_headers = ["case", "onesweep ms", "lsd4 ms", "lsd4/onesweep", "torch/lsd4"]
    old_rows = []
    for dtype, e in (("float32", 20), ("float32", 24), ("int64", 24)):
        a = on_device(host_data(dtype, (1 << e,), rng))
        for op in ("sort", "argsort"):
            calls = calls_for(op, a, cupy_ok=False)
            calls["lsd4"] = with_sort_setting("lsd4", calls["xpuruntime"])
            t = median_seconds(calls, args.repeat, args.runs)
            torch_ratio = f"{t['torch'] / t['lsd4']:.2f}" if "torch" in t else "-"
            report(old_rows, [f"{op} {dtype} 2^{e}", f"{t['xpuruntime'] * 1e3:.3f}",
                              f"{t['lsd4'] * 1e3:.3f}", f"{t['lsd4'] / t['xpuruntime']:.2f}",
                              torch_ratio], old_headers)
        del a
    if args.quick:
        return
    # The onesweep pass's shape, ITEMS:MIN_BLOCKS (items per thread, launch bound in blocks
    # per multiprocessor, 0 for none); the defaults are 16:5 for value sorts of keys of up
    # to 32 bits, 16:0 when indices travel with them, 14:0 for value sorts of 64-bit keys
    # and 16:2 for their argsorts.
    print("\nonesweep pass shapes (XPURUNTIME_CUDA_SORT=onesweep:ITEMS:MIN_BLOCKS): "
          "ms (torch/xrt)")
    sweep = (
        ("float32", 20, "sort", ("16:5", "16:0", "12:5", "8:0")),
        ("float32", 24, "sort", ("16:5", "16:0", "16:4", "12:5", "20:5", "20:0")),
        ("float32", 24, "argsort", ("16:0", "16:3", "12:0", "12:4", "18:0")),
        ("int64", 24, "sort", ("14:0", "12:0", "12:4", "16:0", "8:0", "8:5")),
        ("int64", 24, "argsort", ("16:2", "16:0", "16:3", "12:0", "8:0")),
        ("float32", 26, "sort", ("16:5", "16:0", "20:5")),
    )
    for dtype, e, op, settings in sweep:
        a = on_device(host_data(dtype, (1 << e,), rng))
        base = calls_for(op, a, cupy_ok=False)
        calls = {"torch": base["torch"]} if "torch" in base else {}
        for setting in settings:
            calls[setting] = with_sort_setting(f"onesweep:{setting}", base["xpuruntime"])
        t = median_seconds(calls, args.repeat, args.runs)
        cells = []
        for setting in settings:
            ratio = f" ({t['torch'] / t[setting]:.2f})" if "torch" in t else ""
            cells.append(f"{setting} {t[setting] * 1e3:.3f}{ratio}")
        print(f"{op} {dtype} 2^{e}: " + ", ".join(cells), flush=True)
        del a

if __name__ == "__main__":
    main()
