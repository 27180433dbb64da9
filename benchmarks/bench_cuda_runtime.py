"""benchmarks/bench_cuda_runtime.py: host costs of the CUDA runtime against PyTorch and CuPy,
same run.

DLPack hand-offs (the issue's goal: torch.from_dlpack of our tensor <= 1 us), stream and
event calls, the current-stream context, and graph replay. Each row times the peers too and
prints the ratio peer time / our time (above 1: xpuruntime is faster). Needs a GPU, PyTorch
and CuPy.

    python benchmarks/bench_cuda_runtime.py
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import per_call, table  # noqa: E402

import xpuruntime as xrt  # noqa: E402


def us(seconds):
    return f"{seconds * 1e6:.2f} us"


def rows(torch, cupy):
    n = 1024
    x = xrt.asarray(np.arange(n, dtype=np.float32), device="cuda")
    c = cupy.arange(n, dtype=cupy.float32)
    t = torch.arange(n, dtype=torch.float32, device="cuda")
    h = np.arange(n, dtype=np.float32)
    xrt.cuda.synchronize()

    # Our share of torch.from_dlpack(x): __dlpack_device__ + __dlpack__ + capsule death.
    def our_export():
        x.__dlpack_device__()
        x.__dlpack__(stream=1, max_version=(1, 0))

    def cupy_export():
        c.__dlpack_device__()
        c.__dlpack__(stream=1, max_version=(1, 0))

    yield ("torch.from_dlpack(x)", lambda: torch.from_dlpack(x),
           {"of CuPy": lambda: torch.from_dlpack(c), "of NumPy": lambda: torch.from_dlpack(h)})
    yield ("x.__dlpack__ (producer side)", our_export, {"CuPy": cupy_export})
    yield ("from_dlpack(torch tensor)", lambda: xrt.from_dlpack(t),
           {"cupy.from_dlpack": lambda: cupy.from_dlpack(t)})

    s = xrt.cuda.Stream()
    ts, cs = torch.cuda.Stream(), cupy.cuda.Stream(non_blocking=True)

    def ours_enter_exit():
        with s:
            pass

    def torch_enter_exit():
        with torch.cuda.stream(ts):
            pass

    def cupy_enter_exit():
        with cs:
            pass

    yield ("with stream: (enter+exit)", ours_enter_exit,
           {"torch": torch_enter_exit, "CuPy": cupy_enter_exit})
    yield ("current_stream()", xrt.cuda.current_stream,
           {"torch": torch.cuda.current_stream, "CuPy": cupy.cuda.get_current_stream})
    yield ("Stream() (pooled)", xrt.cuda.Stream,
           {"torch": torch.cuda.Stream, "CuPy": lambda: cupy.cuda.Stream(non_blocking=True)})
    e, te, ce = xrt.cuda.Event(), torch.cuda.Event(), cupy.cuda.Event(disable_timing=True)
    yield ("event.record() + query()", lambda: (e.record(s), e.query()),
           {"torch": lambda: (te.record(ts), te.query()),
            "CuPy": lambda: (ce.record(cs), ce.done)})
    yield ("stream.wait_stream(other)", lambda: s.wait_stream(xrt.cuda.Stream.null),
           {"torch": lambda: ts.wait_stream(torch.cuda.default_stream())})

    # A graph of 100 tiny torch kernels on our capture stream, replayed (per op).
    tx = torch.zeros(16, device="cuda")
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        with torch.cuda.stream(torch.cuda.ExternalStream(xrt.cuda.current_stream().ptr)):
            for _ in range(100):
                tx.add_(1.0)
    tg = torch.cuda.CUDAGraph()
    with torch.cuda.graph(tg):
        for _ in range(100):
            tx.add_(1.0)

    # The same with our own op (x += 1.0: the scalar rides in the kernel's arguments).
    x16 = xrt.zeros(16, device="cuda")
    og = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(og):
        for _ in range(100):
            x16 += 1.0

    def replay(graph):
        def run():
            graph.replay()
            torch.cuda.synchronize()
        return run

    yield ("graph of 100 torch ops: replay+sync (per op)", (replay(g), 100),
           {"torch.cuda.graph": (replay(tg), 100)})
    yield ("graph of 100 xpuruntime ops: replay+sync (per op)", (replay(og), 100),
           {"torch.cuda.graph": (replay(tg), 100)})


def main():
    import cupy
    import torch

    if not xrt.cuda.is_available():
        print("CUDA unavailable:", xrt.cuda.why_unavailable())
        return 1
    print(xrt.cuda.get_device_properties(0), f"torch {torch.__version__}, "
          f"cupy {cupy.__version__}")
    out = []
    for name, ours, peers in rows(torch, cupy):
        ours, per = (ours if isinstance(ours, tuple) else (ours, 1))
        mine = per_call(ours) / per
        cells = [name, us(mine)]
        for peer, fn in peers.items():
            fn, per = (fn if isinstance(fn, tuple) else (fn, 1))
            theirs = per_call(fn) / per
            cells.append(f"{peer}: {us(theirs)} (x{theirs / mine:.2f})")
        out.append(cells + [""] * (4 - len(cells)))
    print(table(out, ["what", "xpuruntime", "peer 1 (ratio)", "peer 2 (ratio)"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
