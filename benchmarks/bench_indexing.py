"""benchmarks/bench_indexing.py: indexing against NumPy: boolean masks, integer arrays, take,
nonzero, setitem for 1e3..1e7 float64 elements, and the host cost of basic indexing. Prints
ratios (NumPy time / ours: above 1 means faster than NumPy); asserts nothing.

    python benchmarks/bench_indexing.py [--quick] [--threads N] [--clock wall|cpu]

NumPy and xpuruntime run alternately, round by round, and each keeps its best round, so load
from other processes hits both sides alike. On a crowded machine, `--threads 1 --clock cpu`
(this thread's CPU time) compares the kernels themselves; with more threads only wall time
counts the workers.

Target (issue 3): mask and integer-array indexing at least as fast as NumPy for 1e3..1e7
elements; x[0], x[1:3], x[..., None] close to NumPy's host cost.
"""

import argparse
import time

import numpy as np

import xpuruntime as xrt
from common import table

CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def best_of_rounds(fns, rounds, number, clock):
    """Best mean seconds per call of each fn, the fns taking turns round by round."""
    best = [float("inf")] * len(fns)
    for fn in fns:
        fn()
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = clock()
            for _ in range(number):
                fn()
            best[i] = min(best[i], (clock() - start) / number)
    return best


def setter(target, key, value):
    def assign():
        target[key] = value
    return assign


def host_cases():
    a = np.ones((8, 8))
    t = xrt.asarray(a)
    cases = [(name, lambda k=key: t[k], lambda k=key: a[k]) for name, key in [
        ("x[0]", 0), ("x[1:3]", slice(1, 3)), ("x[..., None]", (Ellipsis, None)),
        ("x[1, -1]", (1, -1))]]
    cases.append(("x[1:3] = 1.0", setter(t, slice(1, 3), 1.0), setter(a, slice(1, 3), 1.0)))
    return [(name + " (8x8)", ours, theirs, 20000) for name, ours, theirs in cases]


def sized_cases(n):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n)
    t = xrt.asarray(a)
    dense, sparse = rng.random(n) < 0.5, rng.random(n) < 0.05
    idx = rng.integers(0, n, size=n)
    ordered = np.sort(idx)
    td, ts, ti, to = (xrt.asarray(v) for v in (dense, sparse, idx, ordered))
    b, tb = a.copy(), xrt.asarray(a.copy())
    values, tv = a[dense], xrt.asarray(a[dense])
    m = a[: n // 8 * 8].reshape(-1, 8)
    rows = rng.integers(0, len(m), size=len(m))
    row_mask = rng.random(len(m)) < 0.5
    tm, tr, trm = xrt.asarray(m), xrt.asarray(rows), xrt.asarray(row_mask)
    cases = [
        ("x[mask 50%]", lambda: t[td], lambda: a[dense]),
        ("x[mask 5%]", lambda: t[ts], lambda: a[sparse]),
        ("x[int64 random]", lambda: t[ti], lambda: a[idx]),
        ("x[int64 sorted]", lambda: t[to], lambda: a[ordered]),
        ("take(x, idx)", lambda: xrt.take(t, ti), lambda: np.take(a, idx)),
        ("nonzero(mask 50%)", lambda: xrt.nonzero(td), lambda: np.nonzero(dense)),
        ("x[mask 50%] = 0", setter(tb, td, 0.0), setter(b, dense, 0.0)),
        ("x[mask 50%] = v", setter(tb, td, tv), setter(b, dense, values)),
        ("x[idx] = x", setter(tb, ti, t), setter(b, idx, a)),
        ("x2d[rows], rows of 8", lambda: tm[tr], lambda: m[rows]),
        ("x2d[row mask], rows of 8", lambda: tm[trm], lambda: m[row_mask]),
    ]
    number = max(1, min(2000, 2_000_000 // n))
    return [(f"{name} {n:.0e}", ours, theirs, number) for name, ours, theirs in cases]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    args = parser.parse_args()
    if args.threads:
        xrt.set_num_threads(args.threads)
    rounds = 3 if args.quick else 7
    sizes = (10**3, 10**5, 10**7) if args.quick else (10**3, 10**4, 10**5, 10**6, 10**7)
    cases = host_cases()
    for n in sizes:
        cases += sized_cases(n)
    rows = []
    for name, ours_fn, numpy_fn, number in cases:
        ours, theirs = best_of_rounds([ours_fn, numpy_fn], rounds, number, CLOCKS[args.clock])
        scale, unit = (1e9, "ns") if theirs < 1e-5 else (1e6, "us")
        rows.append((name, f"{theirs * scale:.0f} {unit}", f"{ours * scale:.0f} {unit}",
                     f"{theirs / ours:.2f}"))
    print(f"xpuruntime {xrt.__version__}, NumPy {np.__version__}, {xrt.num_threads()} threads, "
          f"{args.clock} clock, float64")
    print(table(rows, ["case", "NumPy", "xpuruntime", "NumPy / ours"]))


if __name__ == "__main__":
    main()
