"""benchmarks/bench_cuda_fft.py: the fft extension on CUDA against torch.fft and cupy.fft,
measured in the same run on the same data (all three run cuFFT underneath).

Cases: c2c and inverse c2c of 2^24 complex64 values; rfft of a 4096 x 4096 float32 matrix
along its last axis (4096 transforms); a 2-d fft of a 4096 x 4096 complex64 matrix
(xpuruntime's fftn runs one axis at a time; "torch per-axis" times torch doing the same, two
1-d transforms, to show what the per-axis passes cost against a 2-d plan); irfft back to
4096 x 4096 float32; and a 1024-point fft, whose time is mostly the host's cost per call.

Each call is timed as a user sees it (the result's allocation included): calls are queued
back to back, the device is synchronized once per round, libraries take turns and the
median of the rounds is kept. Prints microseconds per call and the ratios
library time / xpuruntime time (above 1: xpuruntime is faster).

    python benchmarks/bench_cuda_fft.py [--repeat 20] [--runs 7]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import median_seconds, on_device, optional, table  # noqa: E402

import xpuruntime as xrt  # noqa: E402

torch, cupy = optional("torch"), optional("cupy")

LIBRARIES = ("xpuruntime", "torch", "cupy")


def complex_values(rng, shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def cases(rng):
    """(name, repeat factor, {library: array}, {library: call})."""
    vector = on_device(complex_values(rng, 1 << 24))
    yield ("fft c2c complex64 2^24", 1, vector, {
        "xpuruntime": lambda x: xrt.fft.fft(x),
        "torch": lambda x: torch.fft.fft(x),
        "cupy": lambda x: cupy.fft.fft(x)})
    yield ("ifft c2c complex64 2^24", 1, vector, {
        "xpuruntime": lambda x: xrt.fft.ifft(x),
        "torch": lambda x: torch.fft.ifft(x),
        "cupy": lambda x: cupy.fft.ifft(x)})
    del vector

    real = on_device(rng.standard_normal((4096, 4096)).astype(np.float32))
    yield ("rfft float32 4096x4096 axis=-1", 1, real, {
        "xpuruntime": lambda x: xrt.fft.rfft(x, axis=-1),
        "torch": lambda x: torch.fft.rfft(x, dim=-1),
        "cupy": lambda x: cupy.fft.rfft(x, axis=-1)})
    del real

    square = on_device(complex_values(rng, (4096, 4096)))
    fft2 = {"xpuruntime": lambda x: xrt.fft.fftn(x),
            "torch": lambda x: torch.fft.fft2(x),
            "cupy": lambda x: cupy.fft.fft2(x)}
    yield ("fft2 complex64 4096x4096", 1, square, fft2)
    if torch is not None:
        yield ("fft2 complex64 4096x4096 (torch per-axis)", 1,
               {"xpuruntime": square["xpuruntime"], "torch": square["torch"]},
               {"xpuruntime": fft2["xpuruntime"],
                "torch": lambda x: torch.fft.fft(torch.fft.fft(x, dim=-1), dim=0)})
    del square

    half = on_device(complex_values(rng, (4096, 2049)))
    yield ("irfft complex64 4096x2049 -> 4096x4096", 1, half, {
        "xpuruntime": lambda x: xrt.fft.irfft(x, n=4096, axis=-1),
        "torch": lambda x: torch.fft.irfft(x, n=4096, dim=-1),
        "cupy": lambda x: cupy.fft.irfft(x, n=4096, axis=-1)})
    del half

    small = on_device(complex_values(rng, 1024))
    yield ("fft complex64 1024 (host cost)", 50, small, {
        "xpuruntime": lambda x: xrt.fft.fft(x),
        "torch": lambda x: torch.fft.fft(x),
        "cupy": lambda x: cupy.fft.fft(x)})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if not xrt.cuda.is_available():
        print("CUDA unavailable:", xrt.cuda.why_unavailable())
        return
    print(f"cuFFT {xrt.cuda.cufft_version()}", flush=True)
    headers = ["case", "xrt us", "torch us", "cupy us", "torch/xrt", "cupy/xrt"]
    rows = []
    for name, factor, arrays, calls in cases(np.random.default_rng(0)):
        bound = {lib: (lambda f=calls[lib], x=arrays[lib]: f(x)) for lib in calls
                 if lib in arrays}
        t = median_seconds(bound, args.repeat * factor, args.runs, warmups=2)
        row = [name] + [f"{t[lib] * 1e6:.1f}" if lib in t else "-" for lib in LIBRARIES]
        row += [f"{t[lib] / t['xpuruntime']:.3f}" if lib in t else "-"
                for lib in ("torch", "cupy")]
        rows.append(row)
        print(table([row], headers).splitlines()[-1], flush=True)
    print()
    print(table(rows, headers))
    print("\nratios are library time / xpuruntime time: above 1, xpuruntime is faster")
    info = xrt.cuda.cufft_plan_cache_info()
    print(f"plan cache: {info}")


if __name__ == "__main__":
    main()
