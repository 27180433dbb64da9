"""benchmarks/bench_foundation.py: the foundation's targets, measured against the peers in
one run (NumPy, and PyTorch when installed). Prints ratios; asserts nothing.

    python benchmarks/bench_foundation.py [--quick]

Targets (issue "Foundation"): host cost of a + b on 16 float32 <= 1.3x NumPy; DLPack imports
and exports <= 1 us each; dispatcher decision lookup < 100 ns; matmul 1024^3 float32 with
the openblas and native kernels beside NumPy.
"""

import argparse
import platform
import sys

import numpy as np

import xpuruntime as xrt
from common import per_call, table

try:
    import torch
except ImportError:
    torch = None


def host_cost(rows):
    a, b = xrt.ones(16, dtype=xrt.float32), xrt.ones(16, dtype=xrt.float32)
    na, nb = np.ones(16, np.float32), np.ones(16, np.float32)
    ours = per_call(lambda: a + b)
    numpy_ = per_call(lambda: na + nb)
    rows.append(("a + b, 16 float32", f"{ours * 1e9:.0f} ns", f"NumPy {numpy_ * 1e9:.0f} ns",
                 f"{ours / numpy_:.2f}x NumPy", "<= 1.3x"))
    if torch is not None:
        ta, tb = torch.ones(16), torch.ones(16)
        t = per_call(lambda: ta + tb)
        rows.append(("  (PyTorch a + b)", f"{t * 1e9:.0f} ns", "", f"{ours / t:.2f}x PyTorch", ""))
    ours_s = per_call(lambda: a + 1.0)
    numpy_s = per_call(lambda: na + 1.0)
    rows.append(("a + 1.0, 16 float32", f"{ours_s * 1e9:.0f} ns", f"NumPy {numpy_s * 1e9:.0f} ns",
                 f"{ours_s / numpy_s:.2f}x NumPy", ""))


def dlpack(rows):
    t = xrt.ones((4, 4), dtype=xrt.float32)
    n = np.ones((4, 4), np.float32)
    cases = [("np.from_dlpack(tensor)", lambda: np.from_dlpack(t), None),
             ("xrt.from_dlpack(numpy)", lambda: xrt.from_dlpack(n),
              ("np.from_dlpack(numpy)", lambda: np.from_dlpack(n)))]
    if torch is not None:
        tt = torch.ones(4, 4)
        cases.append(("torch.from_dlpack(tensor)", lambda: torch.from_dlpack(t),
                      ("torch.from_dlpack(numpy)", lambda: torch.from_dlpack(n))))
        cases.append(("xrt.from_dlpack(torch)", lambda: xrt.from_dlpack(tt),
                      ("np.from_dlpack(torch)", lambda: np.from_dlpack(tt))))
    for name, fn, peer in cases:
        ours = per_call(fn)
        peer_text = ratio = ""
        if peer:
            p = per_call(peer[1])
            peer_text, ratio = f"{peer[0]} {p * 1e6:.2f} us", f"{ours / p:.2f}x"
        rows.append((name, f"{ours * 1e6:.2f} us", peer_text, ratio, "<= 1 us"))


def lookup(rows):
    a = xrt.ones(16, dtype=xrt.float32)
    ns = min(xrt._core._time_decision_lookup(a, a, 1_000_000) for _ in range(5))
    rows.append(("dispatcher decision lookup", f"{ns:.0f} ns", "", "", "< 100 ns"))


def matmul(rows, n):
    rng = np.random.default_rng(0)
    na = rng.standard_normal((n, n), dtype=np.float32)
    nb = rng.standard_normal((n, n), dtype=np.float32)
    a, b = xrt.asarray(na), xrt.asarray(nb)
    flops = 2.0 * n ** 3
    numpy_ = per_call(lambda: na @ nb, number=3, repeat=5)
    results = {}
    for kernel in ("openblas", "native"):
        with xrt.kernel_policy(matmul=kernel):
            results[kernel] = per_call(lambda: a @ b, number=3, repeat=5)
            err = np.abs(np.asarray(a @ b) - na @ nb).max()
        rows.append((f"matmul {n}^3 f32 [{kernel}]", f"{flops / results[kernel] / 1e9:.1f} GFLOP/s",
                     f"NumPy {flops / numpy_ / 1e9:.1f} GFLOP/s",
                     f"{numpy_ / results[kernel]:.2f}x NumPy speed", f"max |err| {err:.1e}"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller matmul")
    args = parser.parse_args()
    print(f"xpuruntime {xrt.__version__}, NumPy {np.__version__}, "
          f"PyTorch {torch.__version__ if torch else 'absent'}, Python {platform.python_version()}, "
          f"{xrt.num_threads()} CPU threads")
    rows = []
    host_cost(rows)
    dlpack(rows)
    lookup(rows)
    matmul(rows, 256 if args.quick else 1024)
    print(table(rows, ["what", "xpuruntime", "peer", "ratio", "goal / note"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
