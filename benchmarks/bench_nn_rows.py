"""benchmarks/bench_nn_rows.py: xpuruntime.nn's row ops (softmax, layer_norm, rms_norm)
against PyTorch and against the same op composed from xpuruntime's own max/exp/sum/mean
(what the native engine ran before), measured in the same run on the same data.

Cases: attention-sized softmax (batch 8, 12 heads, 512 x 512) and a transformer's layer and
RMS norms (8 x 512 tokens, d = 768), float32 (and float16 on CUDA); on the CPU smaller ones
(4 heads, 64 x 64; 64 tokens, d = 256: the native engine benchmark's transformer). Each call
is timed as a user sees it (the result's allocation included); on CUDA the device is
synchronised once per run of calls. Prints microseconds per call and the ratios peer time /
xpuruntime time (above 1: xpuruntime is faster).

    python benchmarks/bench_nn_rows.py [--device cpu|cuda]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import optional, per_call, table  # noqa: E402

import xpuruntime as xrt  # noqa: E402

torch = optional("torch")


def composed_softmax(x):
    e = xrt.exp(xrt.subtract(x, xrt.max(x, axis=-1, keepdims=True)))
    return xrt.divide(e, xrt.sum(e, axis=-1, keepdims=True))


def composed_layer_norm(x, w, b):
    mean = xrt.mean(x, axis=-1, keepdims=True)
    centred = xrt.subtract(x, mean)
    var = xrt.mean(xrt.multiply(centred, centred), axis=-1, keepdims=True)
    inv = xrt.reciprocal(xrt.sqrt(xrt.add(var, 1e-5)))
    return xrt.add(xrt.multiply(xrt.multiply(centred, inv), w), b)


def cases(device, dtype):
    cuda = device != "cpu"
    rng = np.random.default_rng(0)
    scores = (8, 12, 512, 512) if cuda else (1, 4, 64, 64)
    tokens = (8, 512, 768) if cuda else (1, 64, 256)
    s = rng.standard_normal(scores).astype(np.float32)
    h = rng.standard_normal(tokens).astype(np.float32)
    w = rng.standard_normal(tokens[-1]).astype(np.float32)
    b = rng.standard_normal(tokens[-1]).astype(np.float32)
    dev = xrt.Device(device)
    xd = getattr(xrt, dtype)
    xs, xh, xw, xb = (xrt.astype(xrt.asarray(a, device=dev), xd) for a in (s, h, w, b))
    calls = {
        f"softmax {scores}": {"xpuruntime": lambda: xrt.nn.softmax(xs),
                              "composed": lambda: composed_softmax(xs)},
        f"layer_norm {tokens}": {"xpuruntime": lambda: xrt.nn.layer_norm(xh, tokens[-1], xw, xb),
                                 "composed": lambda: composed_layer_norm(xh, xw, xb)},
        f"rms_norm {tokens}": {"xpuruntime": lambda: xrt.nn.rms_norm(xh, tokens[-1], xw,
                                                                      eps=1e-6)},
    }
    if torch is not None:
        td = getattr(torch, dtype)
        ts, th, tw, tb = (torch.from_numpy(a).to(device).to(td) for a in (s, h, w, b))
        calls[f"softmax {scores}"]["torch"] = lambda: torch.softmax(ts, -1)
        calls[f"layer_norm {tokens}"]["torch"] = lambda: torch.nn.functional.layer_norm(
            th, (tokens[-1],), tw, tb)
        if hasattr(torch.nn.functional, "rms_norm"):
            calls[f"rms_norm {tokens}"]["torch"] = lambda: torch.nn.functional.rms_norm(
                th, (tokens[-1],), tw, 1e-6)
    return calls


def timed(fn, device):
    if device == "cpu":
        return per_call(fn, repeat=5, budget=0.5)

    def run():
        for _ in range(20):
            fn()
        xrt.cuda.synchronize()
        if torch is not None:
            torch.cuda.synchronize()
    return per_call(run, repeat=5, budget=0.5) / 20


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    dtypes = ["float32"] + (["float16"] if args.device != "cpu" else [])
    rows = []
    for dtype in dtypes:
        for name, calls in cases(args.device, dtype).items():
            t = {lib: timed(fn, args.device) for lib, fn in calls.items()}
            ours = t["xpuruntime"]
            cells = [f"{name} {dtype}", f"{ours * 1e6:.1f}"]
            for peer in ("torch", "composed"):
                cells += ([f"{t[peer] * 1e6:.1f}", f"{t[peer] / ours:.2f}"] if peer in t
                          else ["-", "-"])
            rows.append(cells)
    print(f"device {args.device}" + (f", {xrt.cuda.get_device_name(0)}"
                                     if args.device != "cpu" and hasattr(xrt.cuda,
                                                                         "get_device_name")
                                     else f", {xrt.num_threads()} CPU threads"))
    print(table(rows, ("case", "xrt us", "torch us", "torch/xrt", "composed us",
                       "composed/xrt")))
    print("ratios are peer time / xpuruntime time: above 1, xpuruntime is faster")


if __name__ == "__main__":
    main()
