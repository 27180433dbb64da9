"""benchmarks/bench_indexing.py: indexing against NumPy in one run: boolean masks, integer
arrays, take, nonzero, setitem, and the host cost of basic indexing. Prints ratios (ours /
NumPy: below 1 is faster); asserts nothing.

    python benchmarks/bench_indexing.py [--quick] [--dtype float64]

Target (issue 3): mask and integer-array indexing at least as fast as NumPy for 1e3..1e7
elements; x[0], x[1:3], x[..., None] close to NumPy's host cost.
"""

import argparse

import numpy as np

import xpuruntime as xrt
from common import per_call, table


def ratio_row(name, ours_fn, numpy_fn, budget):
    ours, theirs = per_call(ours_fn, budget=budget), per_call(numpy_fn, budget=budget)
    unit, scale = ("us", 1e6) if theirs < 1e-3 else ("ms", 1e3)
    return (name, f"{ours * scale:.2f} {unit}", f"{theirs * scale:.2f} {unit}",
            f"{ours / theirs:.2f}x")


def host_cost(rows, budget):
    a = np.ones((8, 8))
    t = xrt.asarray(a)
    for name, key in [("x[0]", 0), ("x[1:3]", slice(1, 3)), ("x[..., None]", (Ellipsis, None)),
                      ("x[1, -1]", (1, -1))]:
        rows.append(ratio_row(name + " (8x8)", lambda: t[key], lambda: a[key], budget))
    rows.append(ratio_row("x[1:3] = 1.0 (8x8)", lambda: t.__setitem__(slice(1, 3), 1.0),
                          lambda: a.__setitem__(slice(1, 3), 1.0), budget))


def sized(rows, n, dtype, budget):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(dtype)
    t = xrt.asarray(a)
    dense, sparse = rng.random(n) < 0.5, rng.random(n) < 0.05
    idx = rng.integers(0, n, size=n)
    sorted_idx = np.sort(idx)
    td, ts, ti, tsi = (xrt.asarray(v) for v in (dense, sparse, idx, sorted_idx))
    k = f"{n:.0e}"
    rows.append(ratio_row(f"x[mask 50%] {k}", lambda: t[td], lambda: a[dense], budget))
    rows.append(ratio_row(f"x[mask 5%] {k}", lambda: t[ts], lambda: a[sparse], budget))
    rows.append(ratio_row(f"x[int64 random] {k}", lambda: t[ti], lambda: a[idx], budget))
    rows.append(ratio_row(f"x[int64 sorted] {k}", lambda: t[tsi], lambda: a[sorted_idx], budget))
    rows.append(ratio_row(f"take(x, idx) {k}", lambda: xrt.take(t, ti),
                          lambda: np.take(a, idx), budget))
    rows.append(ratio_row(f"nonzero(mask 50%) {k}", lambda: xrt.nonzero(td),
                          lambda: np.nonzero(dense), budget))
    b, tb = a.copy(), xrt.asarray(a.copy())
    rows.append(ratio_row(f"x[mask 50%] = 0 {k}", lambda: tb.__setitem__(td, 0.0),
                          lambda: b.__setitem__(dense, 0.0), budget))
    values = a[dense]
    tv = xrt.asarray(values)
    rows.append(ratio_row(f"x[mask 50%] = v {k}", lambda: tb.__setitem__(td, tv),
                          lambda: b.__setitem__(dense, values), budget))
    rows.append(ratio_row(f"x[idx] = v {k}", lambda: tb.__setitem__(ti, t),
                          lambda: b.__setitem__(idx, a), budget))
    m = a[: n // 8 * 8].reshape(-1, 8)
    tm, rows_idx = xrt.asarray(m), rng.integers(0, len(m), size=len(m))
    tr = xrt.asarray(rows_idx)
    rows.append(ratio_row(f"x2d[rows] (.,8) {k}", lambda: tm[tr], lambda: m[rows_idx], budget))
    row_mask = rng.random(len(m)) < 0.5
    trm = xrt.asarray(row_mask)
    rows.append(ratio_row(f"x2d[row mask] (.,8) {k}", lambda: tm[trm], lambda: m[row_mask],
                          budget))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--dtype", default="float64")
    args = parser.parse_args()
    budget = 0.05 if args.quick else 0.3
    rows = []
    host_cost(rows, budget)
    for n in (10**3, 10**5, 10**7) if args.quick else (10**3, 10**4, 10**5, 10**6, 10**7):
        sized(rows, n, args.dtype, budget)
    print(f"xpuruntime {xrt.__version__}, NumPy {np.__version__}, {xrt.num_threads()} threads, "
          f"{args.dtype}")
    print(table(rows, ["case", "xpuruntime", "NumPy", "ratio"]))


if __name__ == "__main__":
    main()
