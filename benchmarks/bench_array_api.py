"""benchmarks/bench_array_api.py: the Array API namespace on CPU against NumPy, same run.

For each op and size (1e2 ... 1e7 elements) it times NumPy and xpuruntime on the same data
and prints the ratio NumPy time / xpuruntime time (above 1: xpuruntime is faster). Timings
interleave the two libraries and keep the best of several runs, which is what survives a
noisy machine. Writes a PNG of ratio versus size per op (matplotlib) next to a JSON of the
numbers.

    python benchmarks/bench_array_api.py                # all ops, sizes 1e2..1e7
    python benchmarks/bench_array_api.py --ops add sum --sizes 1e3 1e6
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import per_call, table  # noqa: E402

import xpuruntime as xrt  # noqa: E402

GOALS = {  # the goals, as ratios NumPy / xpuruntime
    "tiny op": 1 / 1.3, "elementwise (large)": 1.5, "reductions": 1.0, "matmul": 0.95,
    "sort": 1.0,
}


def _pair(n, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dtype)
    return a, xrt.asarray(a)


def _square(n):
    """A 2-D shape with about n elements (rows x cols)."""
    rows = max(1, int(round(n ** 0.5)))
    return rows, max(1, n // rows)


def cases(n):
    """(op, numpy callable, xpuruntime callable) for about n elements."""
    a, xa = _pair(n)
    b, xb = _pair(n, seed=1)
    mask = a > 0
    xmask = xrt.asarray(mask)
    shape = _square(n)
    m2, xm2 = a[: shape[0] * shape[1]].reshape(shape), None
    xm2 = xrt.asarray(np.ascontiguousarray(m2))
    idx = np.random.default_rng(2).integers(0, n, size=n)
    xidx = xrt.asarray(idx)
    k = max(1, int(round(n ** (1 / 3))))  # matmul of k x k matrices: about n elements each
    ma, mb = _pair(k * k)[0].reshape(k, k), _pair(k * k, seed=3)[0].reshape(k, k)
    xma, xmb = xrt.asarray(ma), xrt.asarray(mb)
    halves = (a[: n // 2], a[n // 2:])
    xhalves = (xrt.asarray(halves[0]), xrt.asarray(halves[1]))
    yield "add", lambda: a + b, lambda: xa + xb
    yield "multiply", lambda: a * b, lambda: xa * xb
    yield "exp", lambda: np.exp(a), lambda: xrt.exp(xa)
    yield "where", lambda: np.where(mask, a, b), lambda: xrt.where(xmask, xa, xb)
    yield "sum", lambda: np.sum(a), lambda: xrt.sum(xa)
    yield "sum axis=0", lambda: np.sum(m2, axis=0), lambda: xrt.sum(xm2, axis=0)
    yield "sum axis=-1", lambda: np.sum(m2, axis=-1), lambda: xrt.sum(xm2, axis=-1)
    yield "max", lambda: np.max(a), lambda: xrt.max(xa)
    yield "max axis=0", lambda: np.max(m2, axis=0), lambda: xrt.max(xm2, axis=0)
    yield "max axis=-1", lambda: np.max(m2, axis=-1), lambda: xrt.max(xm2, axis=-1)
    yield "mean", lambda: np.mean(a), lambda: xrt.mean(xa)
    yield "mean axis=0", lambda: np.mean(m2, axis=0), lambda: xrt.mean(xm2, axis=0)
    yield "mean axis=-1", lambda: np.mean(m2, axis=-1), lambda: xrt.mean(xm2, axis=-1)
    yield f"matmul {k}x{k}", lambda: ma @ mb, lambda: xma @ xmb
    yield "sort", lambda: np.sort(a), lambda: xrt.sort(xa)
    yield "x[mask]", lambda: a[mask], lambda: xa[xmask]
    yield "x[int array]", lambda: a[idx], lambda: xa[xidx]
    yield "concat", lambda: np.concatenate(halves), lambda: xrt.concat(xhalves)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=float, default=[1e2, 1e3, 1e4, 1e5, 1e6, 1e7])
    parser.add_argument("--ops", nargs="*", default=None, help="op names (prefix match)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    results = {}  # op -> {size: ratio}
    rows = []
    for size in args.sizes:
        n = int(size)
        for op, np_fn, xrt_fn in cases(n):
            base = op.split(" ")[0]
            if args.ops and not any(op.startswith(o) or base == o for o in args.ops):
                continue
            try:
                t_np = per_call(np_fn, repeat=args.repeat, budget=0.1)
                t_x = per_call(xrt_fn, repeat=args.repeat, budget=0.1)
                t_np = min(t_np, per_call(np_fn, repeat=args.repeat, budget=0.1))
            except Exception as e:  # a missing function must show, not stop the run
                rows.append([op, n, "-", "-", f"error: {type(e).__name__}: {e}"])
                continue
            label = op if not op.startswith("matmul") else "matmul"
            results.setdefault(label, {})[n] = t_np / t_x
            rows.append([op, n, f"{t_np * 1e6:.2f}", f"{t_x * 1e6:.2f}", f"{t_np / t_x:.2f}"])
    print(f"xpuruntime {xrt.__version__}, NumPy {np.__version__}, threads {xrt.num_threads()}")
    print(table(rows, ["op", "n", "numpy us", "xrt us", "numpy/xrt"]))
    print("goals (numpy/xrt):", ", ".join(f"{k} >= {v:.2f}" for k, v in GOALS.items()))

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "array_api.json"), "w") as f:
        json.dump({op: {str(n): r for n, r in v.items()} for op, v in results.items()}, f, indent=1)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install '.[bench]'): no plot written")
        return
    fig, ax = plt.subplots(figsize=(10, 6))
    for op, by_size in sorted(results.items()):
        sizes = sorted(by_size)
        ax.plot(sizes, [by_size[s] for s in sizes], marker="o", label=op)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("elements")
    ax.set_ylabel("NumPy time / xpuruntime time (above 1: xpuruntime faster)")
    ax.set_title(f"xpuruntime vs NumPy on CPU ({xrt.num_threads()} threads)")
    ax.legend(fontsize=7, ncol=3)
    path = os.path.join(args.out, "array_api.png")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print("plot:", path)


if __name__ == "__main__":
    main()
