"""tools/ncu_rows.py: the kernels behind issue 18's slow rows, for Nsight Compute.

Runs each case's call for xpuruntime, PyTorch and CuPy a few times to warm up, then once
between cudaProfilerStart and cudaProfilerStop, after a line naming the case and library, so
that

    ncu --profile-from-start off --clock-control none --metrics ... python3 tools/ncu_rows.py

profiles exactly one call per library and case. The timings are the benchmarks' job
(bench_cuda_reductions.py, bench_cuda_sets.py, bench_cuda_sort.py).

    python3 tools/ncu_rows.py [--only sum0,cumsum,nonzero,unique,sort]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "benchmarks"))
import xpuruntime as xrt
from common import optional

torch, cupy = optional("torch"), optional("cupy")

_cudart = None


def profiler(on):
    global _cudart
    if _cudart is None:
        _cudart = torch.cuda.cudart() if torch is not None else None
    if _cudart is not None:
        (_cudart.cudaProfilerStart if on else _cudart.cudaProfilerStop)()


def on_device(host):
    out = {"xpuruntime": xrt.asarray(host, device=xrt.Device("cuda"))}
    if torch is not None:
        out["torch"] = torch.from_numpy(np.ascontiguousarray(host)).cuda()
    if cupy is not None:
        out["cupy"] = cupy.asarray(host)
    return out


def cases(rng, only):
    if "sum0" in only:
        a = on_device(rng.random((16384, 16384), dtype=np.float32))
        yield "sum0", {"xpuruntime": lambda: xrt.sum(a["xpuruntime"], axis=0),
                       "torch": lambda: torch.sum(a["torch"], dim=0),
                       "cupy": lambda: cupy.sum(a["cupy"], axis=0)}
        del a
    if "cumsum" in only:
        c = on_device(rng.random(1 << 24, dtype=np.float32))
        yield "cumsum", {"xpuruntime": lambda: xrt.cumulative_sum(c["xpuruntime"]),
                         "torch": lambda: torch.cumsum(c["torch"], 0),
                         "cupy": lambda: cupy.cumsum(c["cupy"])}
    if "nonzero" in only:
        b = on_device(np.random.default_rng(1).random(10**7) < 0.5)
        yield "nonzero", {"xpuruntime": lambda: xrt.nonzero(b["xpuruntime"]),
                          "torch": lambda: torch.nonzero(b["torch"], as_tuple=True),
                          "cupy": lambda: cupy.nonzero(b["cupy"])}
    if "unique" in only:
        u = on_device(rng.integers(0, 10**6, size=10**7).astype(np.int32))
        yield "unique", {"xpuruntime": lambda: xrt.unique_counts(u["xpuruntime"]),
                         "torch": lambda: torch.unique(u["torch"], sorted=True,
                                                       return_counts=True),
                         "cupy": lambda: cupy.unique(u["cupy"], return_counts=True)}
    if "sort" in only:
        s = on_device(rng.standard_normal(1 << 24).astype(np.float32))
        yield "sort", {"xpuruntime": lambda: xrt.sort(s["xpuruntime"], stable=False),
                       "torch": lambda: torch.sort(s["torch"], stable=False),
                       "cupy": lambda: cupy.sort(s["cupy"])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="sum0,cumsum,nonzero,unique,sort")
    only = set(parser.parse_args().only.split(","))
    rng = np.random.default_rng(0)
    for name, calls in cases(rng, only):
        for lib, call in calls.items():
            if lib != "xpuruntime" and {"torch": torch, "cupy": cupy}[lib] is None:
                continue
            for _ in range(3):
                call()
            xrt.cuda.synchronize()
            if torch is not None:
                torch.cuda.synchronize()
            print(f"== {name} {lib}", flush=True)
            profiler(True)
            call()
            xrt.cuda.synchronize()
            if torch is not None:
                torch.cuda.synchronize()
            profiler(False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
