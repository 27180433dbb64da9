"""benchmarks/sweep_cuda_svdvals.py: where Xgesvd and gesvdj cross over for svdvals on CUDA.

    python benchmarks/sweep_cuda_svdvals.py [--quick] [--runs 3] [--only 512x512,4096x1024]

Note [SVD drivers on CUDA] chooses the cuSOLVER routine for the singular values alone by
shape. This sweep measures the choice instead of assuming it: for square, tall (2:1, 4:1,
wide 1:2) and batched matrices in float32 and float64, it times ours pinned to each routine
("gesvd", "gesvdj"), ours with the default kernel, PyTorch (Jacobi by default) and CuPy
(gesvd), on the same Gaussian inputs shared through DLPack, and prints per case the faster
routine and the default kernel's ratio against each peer (peer time / ours: above 1 we win).
Timing: one warm-up call each, then `runs` rounds in which the libraries take turns, each call
between device synchronisations; the median counts.
"""

import argparse
import statistics
import time

import torch
import xpuruntime as xrt
from common import optional, table

cupy = optional("cupy")


def timed(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def pinned(kernel):
    def call(x):
        with xrt.kernel_policy(svd=kernel):
            return xrt.linalg.svdvals(x)
    return call


def measure(shape, dtype, runs):
    """Median milliseconds per library on one Gaussian input of shape and dtype."""
    g = torch.Generator(device="cuda").manual_seed(0)
    t = torch.randn(shape, device="cuda", dtype=dtype, generator=g)
    x = xrt.from_dlpack(t)
    calls = {"gesvd": lambda: pinned("cusolver_gesvd")(x),
             "gesvdj": lambda: pinned("cusolver_gesvdj")(x),
             "ours": lambda: xrt.linalg.svdvals(x),
             "torch": lambda: torch.linalg.svdvals(t)}
    if cupy is not None:
        c = cupy.from_dlpack(t)
        calls["cupy"] = lambda: cupy.linalg.svd(c, compute_uv=False)
    for fn in calls.values():
        fn()
    times = {k: [] for k in calls}
    for _ in range(runs):
        for k, fn in calls.items():
            times[k].append(timed(fn))
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def cases(quick):
    squares = (64, 128, 256, 512, 1024) if quick else (
        32, 64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072)
    out = []
    for dtype in (torch.float32, torch.float64):
        for n in squares:
            out.append(((n, n), dtype))
        for m, n in ((1024, 512), (2048, 1024), (4096, 1024), (512, 1024), (8192, 512)):
            if not quick or m <= 2048:
                out.append(((m, n), dtype))
        for stack in ((8, 256, 256), (16, 512, 512), (64, 128, 128), (4, 1024, 1024)):
            if not quick or stack[1] <= 256:
                out.append((stack, dtype))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated shapes, e.g. 512x512")
    args = parser.parse_args()
    only = {part for part in args.only.split(",") if part}
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}"
          + (f", cupy {cupy.__version__}" if cupy else ""))
    rows = []
    for shape, dtype in cases(args.quick):
        if only and "x".join(map(str, shape)) not in only:
            continue
        ms = measure(shape, dtype, args.runs)
        best = "gesvdj" if ms["gesvdj"] < ms["gesvd"] else "gesvd"
        rows.append(("x".join(map(str, shape)), str(dtype)[6:], f"{ms['gesvd']:.2f}",
                     f"{ms['gesvdj']:.2f}", best, f"{ms['ours']:.2f}", f"{ms['torch']:.2f}",
                     f"{ms['torch'] / ms['ours']:.2f}",
                     f"{ms['cupy'] / ms['ours']:.2f}" if "cupy" in ms else "-"))
        print(*rows[-1], flush=True)
    print(table(rows, ["shape", "dtype", "gesvd ms", "gesvdj ms", "faster", "ours ms",
                       "torch ms", "torch/ours", "cupy/ours"]))


if __name__ == "__main__":
    main()
