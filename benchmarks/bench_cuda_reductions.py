"""benchmarks/bench_cuda_reductions.py: CUDA reductions and scans against PyTorch and CuPy,
measured in the same run on the same data.

Cases (float32): sum of 2^28 elements, sum over each axis of a 16384 x 16384 matrix, max
and argmax of 2^28, cumulative_sum of 2^24. Each library's call is timed as a user sees
it (allocation of the result included): calls are queued back to back and the device is
synchronized once per run; the libraries take turns, and the median of several runs is
kept. Prints the bandwidth
(bytes read, plus bytes written for the scan, per second) and the ratios
library time / xpuruntime time (above 1: xpuruntime is faster). The issue's goal for
reductions is at least 1.05 against PyTorch.

    python benchmarks/bench_cuda_reductions.py [--repeat 20] [--runs 5]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import median_seconds, on_device, optional, table  # noqa: E402

import xpuruntime as xrt  # noqa: E402

torch, cupy = optional("torch"), optional("cupy")


def cases():
    """(name, bytes moved, {library: call on the 2^28 array})."""
    square = {"xpuruntime": lambda x: xrt.reshape(x, (16384, 16384)),
              "torch": lambda x: x.view(16384, 16384),
              "cupy": lambda x: x.reshape(16384, 16384)}
    yield ("sum 2^28", 4 << 28, {
        "xpuruntime": lambda x: xrt.sum(x), "torch": lambda x: torch.sum(x),
        "cupy": lambda x: cupy.sum(x)})
    yield ("max 2^28", 4 << 28, {
        "xpuruntime": lambda x: xrt.max(x), "torch": lambda x: torch.max(x),
        "cupy": lambda x: cupy.max(x)})
    yield ("argmax 2^28", 4 << 28, {
        "xpuruntime": lambda x: xrt.argmax(x), "torch": lambda x: torch.argmax(x),
        "cupy": lambda x: cupy.argmax(x)})
    for axis in (0, 1):
        yield (f"sum axis={axis} 16384^2", 4 << 28, {
            "xpuruntime": lambda x, a=axis, m=square["xpuruntime"]: xrt.sum(m(x), axis=a),
            "torch": lambda x, a=axis, m=square["torch"]: torch.sum(m(x), dim=a),
            "cupy": lambda x, a=axis, m=square["cupy"]: cupy.sum(m(x), axis=a)})
    n = 1 << 24
    yield ("cumulative_sum 2^24", 2 * 4 * n, {
        "xpuruntime": lambda x: xrt.cumulative_sum(x[:n]),
        "torch": lambda x: torch.cumsum(x[:n], 0),
        "cupy": lambda x: cupy.cumsum(x[:n])})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not xrt.cuda.is_available():
        print("CUDA unavailable:", xrt.cuda.why_unavailable())
        return
    arrays = on_device(np.random.default_rng(0).random(1 << 28, dtype=np.float32))
    rows = []
    for name, nbytes, calls in cases():
        t = median_seconds({lib: (lambda f=calls[lib], x=x: f(x)) for lib, x in arrays.items()},
                    args.repeat, args.runs)
        row = [name] + [f"{nbytes / t[lib] / 1e12:.2f}" if lib in t else "-"
                        for lib in ("xpuruntime", "torch", "cupy")]
        row += [f"{t[lib] / t['xpuruntime']:.3f}" if lib in t else "-"
                for lib in ("torch", "cupy")]
        rows.append(row)
        print(table([row], ["case", "xrt TB/s", "torch TB/s", "cupy TB/s",
                            "torch/xrt", "cupy/xrt"]).splitlines()[-1], flush=True)
    print()
    print(table(rows, ["case", "xrt TB/s", "torch TB/s", "cupy TB/s", "torch/xrt",
                       "cupy/xrt"]))
    print("\nratios are library time / xpuruntime time: above 1, xpuruntime is faster "
          "(goal for reductions: >= 1.05 against torch)")


if __name__ == "__main__":
    main()
