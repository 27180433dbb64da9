"""tools/sweep_tile_items.py: the CUDA scans' tile size (items per thread,
XPURUNTIME_CUDA_TILE_ITEMS; set, it also puts nonzero on its ballot rows of that many
items) swept on the issue's rows, with PyTorch and CuPy timed in the same run:
cumulative_sum of 2^24 float32 and nonzero of 1e7 bool (half set), then nonzero's default
(runs of 16, Note [Nonzero by runs]). Prints microseconds per call (the host's wait for
nonzero's count included) and the ratios.

    python tools/sweep_tile_items.py [--items 8,12,16,20,24,28,32]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "benchmarks"))
import xpuruntime as xrt
from common import optional, timed

torch, cupy = optional("torch"), optional("cupy")


def best_us(fn, calls=50, runs=7):
    """Best of `runs` means of `calls` queued calls, in microseconds."""
    fn()
    return min(timed(fn, calls) for _ in range(runs)) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="8,12,16,20,24,28,32")
    items = [int(v) for v in parser.parse_args().items.split(",")]
    rng = np.random.default_rng(0)
    c = rng.random(1 << 24, dtype=np.float32)
    b = np.random.default_rng(1).random(10**7) < 0.5
    xc, xb = xrt.asarray(c, device="cuda:0"), xrt.asarray(b, device="cuda:0")
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
        rows.append((n, best_us(lambda: xrt.cumulative_sum(xc)),
                     best_us(lambda: xrt.nonzero(xb))))
    os.environ.pop("XPURUNTIME_CUDA_TILE_ITEMS")
    assert np.array_equal(np.asarray(xrt.nonzero(xb)[0].to_device("cpu")), expected_b)
    runs = best_us(lambda: xrt.nonzero(xb))
    peers = {}
    if torch is not None:
        tc, tb = torch.from_numpy(c).cuda(), torch.from_numpy(b).cuda()
        peers["torch"] = (best_us(lambda: torch.cumsum(tc, 0)),
                          best_us(lambda: torch.nonzero(tb, as_tuple=True)))
    if cupy is not None:
        cc, cb = cupy.asarray(c), cupy.asarray(b)
        peers["cupy"] = (best_us(lambda: cupy.cumsum(cc)), best_us(lambda: cupy.nonzero(cb)))
    print("items  cumsum us  nonzero us  " + "  ".join(
        f"{p}/xrt cumsum  {p}/xrt nonzero" for p in peers))
    for n, tc_, tn_ in rows:
        ratios = "  ".join(f"{peers[p][0] / tc_:14.3f}  {peers[p][1] / tn_:15.3f}" for p in peers)
        print(f"{n:5d}  {tc_:9.1f}  {tn_:10.1f}  {ratios}")
    for p, (pc, pn) in peers.items():
        print(f"{p}: cumsum {pc:.1f} us, nonzero {pn:.1f} us")
    print(f"nonzero by runs (the default): {runs:.1f} us" + "".join(
        f", {p}/xrt {peers[p][1] / runs:.3f}" for p in peers))


if __name__ == "__main__":
    main()
