"""benchmarks/bench_cuda_linalg.py: linalg on CUDA against torch.linalg and cupy.linalg in one
run. Prints milliseconds and the ratios peer / ours (above 1: xpuruntime is faster); asserts
nothing.

    python benchmarks/bench_cuda_linalg.py [--quick] [--repeat 5] [--only svd,cholesky]

Cases: solve 4096 (float32, float64; one right-hand side), cholesky, inv and qr of 4096 x 4096,
eigh of 2048 x 2048 (float32), det of 10000 8 x 8 matrices and solve of 10000 16 x 16 systems
(the batched routines); svd (reduced) of 2048 x 2048 (float32, float64), of 4096 x 1024 and
of 64 512 x 512 matrices, svdvals of 2048 x 2048 and 4096 x 1024, each also with our kernel
pinned to one cuSOLVER routine ("[gesvd]", "[gesvdj]"; ours alone). The inputs are made once
on the GPU by PyTorch and shared with xpuruntime and CuPy through DLPack (no copies), so
every library reads the same memory. Timing: one warm-up call each (kernel compiles,
handles, workspaces), then `repeat` rounds in which the libraries take turns; each call is
bracketed by device synchronisations (torch.cuda.synchronize waits for the whole device,
xpuruntime's and CuPy's work included); the median counts. Every op here that can raise
(solve, cholesky, inv, eigh, svd) reads its info codes back in all three libraries, so a
call includes one device-to-host wait.

Measured on an H200 (PyTorch 2.11 + cu130, CuPy 14.2), --repeat 3, peer / ours: solve 4096
f32 0.98 / 1.00, f64 0.98 / 1.00; inv 4096 1.02 / 0.99; eigh 2048 1.00 / 1.01; qr 4096
1.00 / 1.01; det of 10000 8x8 2.75 / 6.51; solve of 10000 16x16 0.91 / 1.33 (that run
predates the 8-byte errors check). A later run (--only svd,cholesky): cholesky 4096 1.09 /
2.61 (tiled transposes; 0.95 before); svd 2048 f32 1.04 / 1.34, f64 1.00 / 1.19, 4096 x 1024
1.01 / 2.29, 64 x 512^2 1.02 / 1.97; svdvals 2048 1.26 / 1.00. Before gesvdj (the [gesvd]
rows of that run): svd 2048 f32 0.78, f64 0.84, 4096 x 1024 0.44, 64 x 512^2 0.52. Jacobi's
tolerance was cuSOLVER's default then; with the dtype's epsilon (as PyTorch) gesvdj's
svdvals 2048 took 2% longer, and the svd rows were not measured again. svdvals 4096 x 1024
(gesvdj since): PyTorch 57.3 ms, ours [gesvd] 60.4, [gesvdj] 56.2. PyTorch calls gesvdj
(Jacobi) by default, CuPy gesvd; see Note [SVD drivers on CUDA] for ours.
"""

import argparse
import statistics
import time

import xpuruntime as xrt
from xpuruntime import linalg
from common import table

import torch

try:
    import cupy
except ImportError:
    cupy = None


def sync():
    torch.cuda.synchronize()


def timed(fn):
    sync()
    start = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - start


def inputs(kind, shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(shape, device="cuda", dtype=dtype, generator=g)
    n = shape[-1]
    if kind == "spd":
        a = a @ a.mT / n + torch.eye(n, device="cuda", dtype=dtype)
    elif kind == "symmetric":
        a = (a + a.mT) / 2
    elif kind == "regular":
        a = a + n ** 0.5 * torch.eye(n, device="cuda", dtype=dtype)
    return a.contiguous()


def pinned(kernel, fn):
    """fn under a policy that pins svd's kernel (Note [SVD drivers on CUDA])."""
    def call(*args):
        with xrt.kernel_policy(svd=kernel):
            return fn(*args)
    return call


def svd_cases(quick):
    """svd and svdvals: ours (the default kernel) against both peers, then ours with each
    cuSOLVER routine pinned (the same run's before and after: Xgesvd was the only one)."""
    mid, tall, stack = (512, (1024, 256), (16, 128, 128)) if quick else (
        2048, (4096, 1024), (64, 512, 512))
    f32, f64 = torch.float32, torch.float64
    reduced = (lambda x: linalg.svd(x, full_matrices=False),
               lambda x: torch.linalg.svd(x, full_matrices=False),
               cupy and (lambda x: cupy.linalg.svd(x, full_matrices=False)))
    values = (linalg.svdvals, torch.linalg.svdvals,
              cupy and (lambda x: cupy.linalg.svd(x, compute_uv=False)))
    rows = []
    for name, shape, dtype, fns in [
            (f"svd {mid} f32", (mid, mid), f32, reduced),
            (f"svd {mid} f64", (mid, mid), f64, reduced),
            (f"svd {tall[0]}x{tall[1]} f32", tall, f32, reduced),
            (f"svd {stack[0]} x {stack[1]}x{stack[2]} f32", stack, f32, reduced),
            (f"svdvals {mid} f32", (mid, mid), f32, values),
            (f"svdvals {tall[0]}x{tall[1]} f32", tall, f32, values)]:
        rows.append((name, ("plain", shape, dtype), None, fns))
        for kernel in ("cusolver_gesvd", "cusolver_gesvdj"):
            rows.append((f"{name} [{kernel[9:]}]", ("plain", shape, dtype), None,
                         (pinned(kernel, fns[0]), None, None)))
    return rows


def cases(quick):
    big, mid, batch = (1024, 512, 1000) if quick else (4096, 2048, 10000)
    f32, f64 = torch.float32, torch.float64
    return [
        # name, (kind, shape, dtype), rhs shape or None, (ours, torch, cupy)
        (f"solve {big} f32", ("regular", (big, big), f32), (big, 1),
         (linalg.solve, torch.linalg.solve, cupy and cupy.linalg.solve)),
        (f"solve {big} f64", ("regular", (big, big), f64), (big, 1),
         (linalg.solve, torch.linalg.solve, cupy and cupy.linalg.solve)),
        (f"cholesky {big} f32", ("spd", (big, big), f32), None,
         (linalg.cholesky, torch.linalg.cholesky, cupy and cupy.linalg.cholesky)),
        (f"inv {big} f32", ("regular", (big, big), f32), None,
         (linalg.inv, torch.linalg.inv, cupy and cupy.linalg.inv)),
        (f"eigh {mid} f32", ("symmetric", (mid, mid), f32), None,
         (linalg.eigh, torch.linalg.eigh, cupy and cupy.linalg.eigh)),
        (f"qr {big} f32", ("plain", (big, big), f32), None,
         (linalg.qr, torch.linalg.qr, cupy and cupy.linalg.qr)),
        (f"det {batch} x 8x8 f32", ("regular", (batch, 8, 8), f32), None,
         (linalg.det, torch.linalg.det, cupy and cupy.linalg.det)),
        (f"solve {batch} x 16x16 f32", ("regular", (batch, 16, 16), f32), (batch, 16, 1),
         (linalg.solve, torch.linalg.solve, cupy and cupy.linalg.solve)),
    ] + svd_cases(quick)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="",
                        help="comma-separated parts of case names to run (default: all)")
    args = parser.parse_args()
    only = [part for part in args.only.split(",") if part]
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"cupy {cupy.__version__ if cupy else 'absent'}")
    rows = []
    for seed, (name, (kind, shape, dtype), rhs, fns) in enumerate(cases(args.quick)):
        if only and not any(part in name for part in only):
            continue
        a = inputs(kind, shape, dtype, seed)
        b = None if rhs is None else inputs("plain", rhs, dtype, seed + 100)
        operands = {
            "ours": [xrt.from_dlpack(t) for t in (a, b) if t is not None],
            "torch": [t for t in (a, b) if t is not None],
        }
        if cupy is not None:
            operands["cupy"] = [cupy.from_dlpack(t) for t in (a, b) if t is not None]
        libraries = [lib for lib, fn in zip(("ours", "torch", "cupy"), fns)
                     if fn is not None and lib in operands]
        calls = {lib: (lambda fn=fn, ops=operands[lib]: fn(*ops))
                 for lib, fn in zip(("ours", "torch", "cupy"), fns) if lib in libraries}
        for lib in libraries:  # warm-up
            timed(calls[lib])
        times = {lib: [] for lib in libraries}
        for _ in range(args.repeat):
            for lib in libraries:
                times[lib].append(timed(calls[lib]))
        median = {lib: statistics.median(t) * 1e3 for lib, t in times.items()}
        row = [name, f"{median['ours']:.3f}"]
        for peer in ("torch", "cupy"):
            if peer in median:
                row += [f"{median[peer]:.3f}", f"{median[peer] / median['ours']:.2f}"]
            else:
                row += ["-", "-"]
        rows.append(row)
        print(" ".join(row), flush=True)
        del a, b, operands, calls
        torch.cuda.empty_cache()
    print()
    print(table(rows, ["case", "ours ms", "torch ms", "torch/ours", "cupy ms", "cupy/ours"]))


if __name__ == "__main__":
    main()
