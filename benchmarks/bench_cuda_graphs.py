"""benchmarks/bench_cuda_graphs.py: the GPU's pace through CUDA graphs of tiny ops, ours and
PyTorch's, in the same run.

Each graph holds 100 launches of one op on 16 float32 (a 4x8 transpose for the strided row),
captured once and replayed. The time per op is the GPU's: a replay costs the host almost
nothing, so back-to-back tiny kernels are limited by how fast the GPU starts and finishes
each one, which depends on the kernel's size (Note [Grid-stride loops stay rolled] in
cpp/kernels/xrt/elementwise.cuh). Ratio: torch time / our time (above 1 we are faster).

    python benchmarks/bench_cuda_graphs.py
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import table  # noqa: E402

import torch  # noqa: E402

import xpuruntime as xrt  # noqa: E402

OPS = 100


def per_op(replay):
    """Best seconds per op over rounds of 20 replays, each round ending in a synchronize."""
    replay()
    xrt.cuda.synchronize()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(20):
            replay()
        xrt.cuda.synchronize()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / 20 / OPS)
    return best


def main():
    ta, tb, tc = (torch.rand(16, device="cuda") for _ in range(3))
    tm = torch.rand(4, 8, device="cuda")
    a, b, c, m = (xrt.from_dlpack(t) for t in (ta, tb, tc, tm))
    cases = [
        ("a + b", lambda: a + b, lambda: ta + tb),
        ("c += a", lambda: c.__iadd__(a), lambda: tc.add_(ta)),
        ("a + 1.0", lambda: a + 1.0, lambda: ta + 1.0),
        ("exp(a)", lambda: xrt.exp(a), lambda: torch.exp(ta)),
        ("astype float64", lambda: xrt.astype(a, xrt.float64), lambda: ta.to(torch.float64)),
        ("zeros(16)", lambda: xrt.zeros(16, device="cuda"),
         lambda: torch.zeros(16, device="cuda")),
        ("m.T + 1.0 (strided)", lambda: m.T + 1.0, lambda: tm.T + 1.0),
        ("sum(a)", lambda: xrt.sum(a), lambda: torch.sum(ta)),
    ]
    side = torch.cuda.Stream()  # torch warms up on a side stream, as its docs ask
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _, _, theirs in cases:
            theirs()
    torch.cuda.current_stream().wait_stream(side)
    rows = []
    for name, ours, theirs in cases:
        ours()
        xrt.cuda.synchronize()
        graph = xrt.cuda.CUDAGraph()
        with xrt.cuda.graph(graph):
            kept = [ours() for _ in range(OPS)]
        torch_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(torch_graph):
            torch_kept = [theirs() for _ in range(OPS)]
        mine, peer = per_op(graph.replay), per_op(torch_graph.replay)
        rows.append((name, f"{mine * 1e6:.3f} us", f"{peer * 1e6:.3f} us", f"{peer / mine:.2f}x"))
        del kept, torch_kept
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(table(rows, [f"graph of {OPS} ops, per op", "xpuruntime", "torch", "torch/ours"]))


if __name__ == "__main__":
    main()
