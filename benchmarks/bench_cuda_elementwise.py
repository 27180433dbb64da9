"""benchmarks/bench_cuda_elementwise.py: elementwise kernels on CUDA against PyTorch and CuPy,
measured in the same run; prints times, bandwidth and ratios (needs a GPU, torch, cupy).

- bandwidth: add of two 2**28 float32 (reads 2, writes 1), and multiply, exp, where at 2**20
  and 2**28; device time from CUDA events around repeated launches on the default stream
  (xpuruntime, PyTorch and CuPy all use the legacy default stream here).
- host cost: a 16-element add called in a loop without synchronising, per call.

Operands are created by PyTorch and shared with xpuruntime and CuPy through DLPack, so all
three read the same memory. Out-of-place results include each library's allocation; the
in-place rows (`x += y`) isolate the kernel where an allocator is not caching yet, and the
"kernel" column gives xpuruntime's kernel time alone, from the CUDA profiler (CUPTI via
torch.profiler, which records every kernel of the process).

    python benchmarks/bench_cuda_elementwise.py [--repeat 20]
"""

import argparse
import time

import cupy as cp
import torch

import xpuruntime as xrt
from common import event_ms as device_ms


def host_us(fn, calls=20000):
    """Host time of one fn() call in µs, without waiting for the device (best of 3)."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls * 1e6)
        torch.cuda.synchronize()
    return best


def kernel_ms(fn, prefix="xrt_ew_", calls=10):
    """Device time of the kernels named prefix* per fn() call, from the profiler; None when
    the profiler is unavailable."""
    try:
        from torch.profiler import ProfilerActivity, profile
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        total = 0.0
        for e in prof.key_averages():
            if e.key.startswith(prefix):
                total += getattr(e, "device_time_total", None) or e.cuda_time_total
        return total / calls / 1e3 if total else None
    except Exception as error:  # noqa: BLE001 - a measurement, not a test
        print("profiler unavailable:", error)
        return None


def row(name, bytes_moved, times):
    line = f"{name:34s}"
    for lib, ms in times.items():
        line += f" {lib} {ms * 1e3:9.1f} us"
        if bytes_moved:
            line += f" {bytes_moved / ms / 1e9:5.2f} TB/s"
    ours = "xrt kernel" if "xrt kernel" in times else "xrt"
    if ours in times:
        for peer in ("torch", "cupy"):
            if peer in times:
                line += f" | {ours}/{peer} speed {times[peer] / times[ours]:.3f}x"
    print(line, flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"cupy {cp.__version__}")
    for log_n in (20, 28):
        n = 1 << log_n
        ta = torch.rand(n, device="cuda")
        tb = torch.rand(n, device="cuda")
        tc = ta > 0.5
        xa, xb, xc = (xrt.from_dlpack(t) for t in (ta, tb, tc))
        ca, cb, cc = (cp.from_dlpack(t) for t in (ta, tb, tc))
        f4 = 4 * n
        cases = {
            "add": (3 * f4, lambda: xa + xb, lambda: ta + tb, lambda: ca + cb),
            "add in place": (3 * f4, lambda: xa.__iadd__(xb), lambda: ta.add_(tb),
                             lambda: ca.__iadd__(cb)),
            "multiply": (3 * f4, lambda: xa * xb, lambda: ta * tb, lambda: ca * cb),
            "exp": (2 * f4, lambda: xrt.exp(xa), lambda: torch.exp(ta), lambda: cp.exp(ca)),
            "exp in place": (2 * f4, None, lambda: torch.exp(ta, out=tb),
                             lambda: cp.exp(ca, out=cb)),
            "where": (3 * f4 + n, lambda: xrt.where(xc, xa, xb), lambda: torch.where(tc, ta, tb),
                      lambda: cp.where(cc, ca, cb)),
        }
        for name, (moved, fx, ft, fc) in cases.items():
            times = {}
            if fx:
                times["xrt"] = device_ms(fx, args.repeat)
                kernel = kernel_ms(fx)
                if kernel:
                    times["xrt kernel"] = kernel
            times["torch"] = device_ms(ft, args.repeat)
            times["cupy"] = device_ms(fc, args.repeat)
            row(f"{name} 2^{log_n} float32", moved, times)
        del xa, xb, xc, ca, cb, cc
    # A row vector (a bias) or a column (per-row values) broadcast over a matrix: the rows
    # layout (Note [Rows layout] in cpp/src/cuda/elementwise_kernel.cpp).
    for dtype, size in ((torch.float32, 4), (torch.float16, 2)):
        rows, cols = 8192, 4096
        tm = torch.rand(rows, cols, device="cuda", dtype=dtype)
        tr = torch.rand(cols, device="cuda", dtype=dtype)
        tcol = torch.rand(rows, 1, device="cuda", dtype=dtype)
        xm, xr, xcol = (xrt.from_dlpack(t) for t in (tm, tr, tcol))
        cm, cr, ccol = (cp.from_dlpack(t) for t in (tm, tr, tcol))
        moved = 2 * rows * cols * size
        for name, fx, ft, fc in (
                ("add a row vector", lambda: xm + xr, lambda: tm + tr, lambda: cm + cr),
                ("multiply by a column", lambda: xm * xcol, lambda: tm * tcol,
                 lambda: cm * ccol)):
            times = {"xrt": device_ms(fx, args.repeat), "torch": device_ms(ft, args.repeat),
                     "cupy": device_ms(fc, args.repeat)}
            row(f"{name} {rows}x{cols} {str(dtype)[6:]}", moved, times)
        del xm, xr, xcol, cm, cr, ccol
    # Host cost of a tiny op.
    ta, tb = torch.rand(16, device="cuda"), torch.rand(16, device="cuda")
    xa, xb = xrt.from_dlpack(ta), xrt.from_dlpack(tb)
    ca, cb = cp.from_dlpack(ta), cp.from_dlpack(tb)
    host = {"xrt": host_us(lambda: xa + xb), "torch": host_us(lambda: ta + tb),
            "cupy": host_us(lambda: ca + cb)}
    print("host cost of a 16-element add: " + ", ".join(f"{k} {v:.2f} us" for k, v in host.items())
          + f" | torch/xrt {host['torch'] / host['xrt']:.2f}x, cupy/xrt {host['cupy'] / host['xrt']:.2f}x")
    inplace = {"xrt": host_us(lambda: xa.__iadd__(xb)), "torch": host_us(lambda: ta.add_(tb)),
               "cupy": host_us(lambda: ca.__iadd__(cb))}
    print("host cost of a 16-element += : " + ", ".join(f"{k} {v:.2f} us" for k, v in inplace.items())
          + f" | torch/xrt {inplace['torch'] / inplace['xrt']:.2f}x")


if __name__ == "__main__":
    main()
