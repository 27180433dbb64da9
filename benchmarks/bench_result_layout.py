"""benchmarks/bench_result_layout.py: elementwise ops on transposed and permuted operands
(Note [Result layout] in cpp/src/core/ops.cpp), against NumPy and PyTorch on the CPU and
against PyTorch and CuPy on CUDA, in one run. Prints times and ratios (peer time / ours:
above 1 means faster than the peer); asserts nothing.

    python benchmarks/bench_result_layout.py [--n 4096] [--cpu-only]

The CPU side times each op as the best of several calls (the peers alternate with us); the
CUDA side by CUDA events around repeated launches on the legacy default stream, with every
library reading the same memory (shared through DLPack). CuPy and PyTorch are optional.
"""

import argparse

import numpy as np

import xpuruntime as xrt
from common import best_of_rounds, event_ms


def cases(xp_m, xp_n, xp_t3, add_one, exp, permute, to_half):
    """(name, fn) of the measured ops over one library's operands."""
    return [
        ("astype(m.T, float16)", lambda: to_half(xp_m.T)),
        ("m.T + 1.0", lambda: add_one(xp_m.T)),
        ("m.T + n.T", lambda: xp_m.T + xp_n.T),
        ("m + n.T (row-major result)", lambda: xp_m + xp_n.T),
        ("exp(m.T)", lambda: exp(xp_m.T)),
        ("permute(t, (2, 0, 1)) * 2.0", lambda: permute(xp_t3) * 2.0),
        ("m[:, ::2].T + 1.0", lambda: add_one(xp_m[:, ::2].T)),
        ("m[:, ::2] * n[:, 1::2]", lambda: xp_m[:, ::2] * xp_n[:, 1::2]),
    ]


def run_cpu(n):
    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    b = np.random.default_rng(1).random((n, n), dtype=np.float32)
    c = np.random.default_rng(2).random((16, n // 4, n // 4), dtype=np.float32)
    libs = [("xpuruntime", cases(xrt.asarray(a), xrt.asarray(b), xrt.asarray(c),
                                 lambda v: v + 1.0, xrt.exp,
                                 lambda t: xrt.permute_dims(t, (2, 0, 1)),
                                 lambda v: xrt.astype(v, xrt.float16))),
            ("numpy", cases(a, b, c, lambda v: v + np.float32(1.0), np.exp,
                            lambda t: t.transpose(2, 0, 1), lambda v: v.astype(np.float16)))]
    try:
        import torch
        libs.append(("torch", cases(torch.from_numpy(a), torch.from_numpy(b),
                                    torch.from_numpy(c), lambda v: v + 1.0, torch.exp,
                                    lambda t: t.permute(2, 0, 1),
                                    lambda v: v.to(torch.float16))))
    except ImportError:
        pass
    print(f"CPU, float32, m and n {n}x{n}, t (16, {n // 4}, {n // 4}); ms, ratio = peer / ours")
    for i, (name, _) in enumerate(libs[0][1]):
        times = [t * 1e3 for t in best_of_rounds([lib[1][i][1] for lib in libs], rounds=5)]
        line = f"  {name:30s} ours {times[0]:8.2f}"
        for (lib, _), t in zip(libs[1:], times[1:]):
            line += f"  {lib} {t:8.2f} ({t / times[0]:5.2f}x)"
        print(line, flush=True)


def run_cuda(n):
    import torch
    try:
        import cupy as cp
    except ImportError:
        cp = None

    tm, tn = torch.rand(n, n, device="cuda"), torch.rand(n, n, device="cuda")
    t3 = torch.rand(16, n // 4, n // 4, device="cuda")
    libs = [("xpuruntime", cases(xrt.from_dlpack(tm), xrt.from_dlpack(tn), xrt.from_dlpack(t3),
                                 lambda v: v + 1.0, xrt.exp,
                                 lambda t: xrt.permute_dims(t, (2, 0, 1)),
                                 lambda v: xrt.astype(v, xrt.float16))),
            ("torch", cases(tm, tn, t3, lambda v: v + 1.0, torch.exp,
                            lambda t: t.permute(2, 0, 1), lambda v: v.to(torch.float16)))]
    if cp is not None:
        libs.append(("cupy", cases(cp.from_dlpack(tm), cp.from_dlpack(tn), cp.from_dlpack(t3),
                                   lambda v: v + 1.0, cp.exp,
                                   lambda t: t.transpose(2, 0, 1),
                                   lambda v: v.astype(cp.float16))))
    print(f"CUDA ({torch.cuda.get_device_name()}), float32, m and n {n}x{n}; "
          "device us, ratio = peer / ours")
    for i, (name, _) in enumerate(libs[0][1]):
        times = [event_ms(lib[1][i][1]) * 1e3 for lib in libs]
        line = f"  {name:30s} ours {times[0]:8.1f}"
        for (lib, _), t in zip(libs[1:], times[1:]):
            line += f"  {lib} {t:8.1f} ({t / times[0]:5.2f}x)"
        print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--cpu-only", action="store_true")
    args = parser.parse_args()
    run_cpu(args.n)
    if not args.cpu_only and xrt.cuda.is_available():
        for n in (args.n, 2 * args.n):
            run_cuda(n)


if __name__ == "__main__":
    main()
