"""tools/sweep_tile_items.py: the CUDA scans' and nonzero's tile size (items per thread,
XPURUNTIME_CUDA_TILE_ITEMS) swept on the issue's rows, with PyTorch and CuPy timed in the
same run: cumulative_sum of 2^24 float32 and nonzero of 1e7 bool (half set). Prints
microseconds per call (the host's wait for nonzero's count included) and the ratios.

    python tools/sweep_tile_items.py [--items 8,12,16,20,24,28,32]
"""

import argparse
import os
import time

import numpy as np

import xpuruntime as xrt

try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None


def timed(fn, sync, calls=50, runs=7):
    fn()
    sync()
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="8,12,16,20,24,28,32")
    items = [int(v) for v in parser.parse_args().items.split(",")]
    rng = np.random.default_rng(0)
    c = rng.random(1 << 24, dtype=np.float32)
    b = np.random.default_rng(1).random(10**7) < 0.5
    xc, xb = xrt.asarray(c, device="cuda:0"), xrt.asarray(b, device="cuda:0")
    sync = xrt.cuda.synchronize
    expected_c, expected_b = None, None
    rows = []
    for n in items:
        os.environ["XPURUNTIME_CUDA_TILE_ITEMS"] = str(n)
        got_c, got_b = xrt.cumulative_sum(xc), xrt.nonzero(xb)[0]
        if expected_c is None:
            expected_c, expected_b = np.asarray(got_c.to_device("cpu")), np.asarray(
                got_b.to_device("cpu"))
        assert np.array_equal(np.asarray(got_b.to_device("cpu")), expected_b), n
        np.testing.assert_allclose(np.asarray(got_c.to_device("cpu")), expected_c, rtol=1e-5)
        rows.append((n, timed(lambda: xrt.cumulative_sum(xc), sync),
                     timed(lambda: xrt.nonzero(xb), sync)))
    os.environ.pop("XPURUNTIME_CUDA_TILE_ITEMS")
    peers = {}
    if torch is not None:
        tc, tb = torch.from_numpy(c).cuda(), torch.from_numpy(b).cuda()
        ts = torch.cuda.synchronize
        peers["torch"] = (timed(lambda: torch.cumsum(tc, 0), ts),
                          timed(lambda: torch.nonzero(tb, as_tuple=True), ts))
    if cupy is not None:
        cc, cb = cupy.asarray(c), cupy.asarray(b)
        cs = cupy.cuda.Device().synchronize
        peers["cupy"] = (timed(lambda: cupy.cumsum(cc), cs), timed(lambda: cupy.nonzero(cb), cs))
    print("items  cumsum us  nonzero us  " + "  ".join(
        f"{p}/xrt cumsum  {p}/xrt nonzero" for p in peers))
    for n, tc_, tn_ in rows:
        ratios = "  ".join(f"{peers[p][0] / tc_:14.3f}  {peers[p][1] / tn_:15.3f}" for p in peers)
        print(f"{n:5d}  {tc_:9.1f}  {tn_:10.1f}  {ratios}")
    for p, (pc, pn) in peers.items():
        print(f"{p}: cumsum {pc:.1f} us, nonzero {pn:.1f} us")


if __name__ == "__main__":
    main()
