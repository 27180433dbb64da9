"""benchmarks/bench_manipulation.py: concat against NumPy's concatenate, 1e3..1e7 elements,
and the host cost of the view functions on a 16-element array. Prints ratios (NumPy time /
ours: above 1 means faster than NumPy); asserts nothing.

    python benchmarks/bench_manipulation.py [--quick] [--threads N]

NumPy and xpuruntime run alternately, round by round, and each keeps its best round, so
load from other processes on the machine hits both sides alike.
"""

import argparse

import numpy as np

import xpuruntime as xrt
from common import best_of_rounds, per_call, table


CASES = [  # (pieces, piece shape for n elements, axis)
    (2, lambda n: (n // 2,), 0),
    (4, lambda n: (n // 4,), 0),
    (2, lambda n: (n // 200, 100), 0),
    (2, lambda n: (100, n // 200), 1),
]


def concat_rows(sizes, dtype, rounds):
    rows = []
    for n in sizes:
        for pieces, shape, axis in CASES:
            rng = np.random.default_rng(0)
            arrays = [rng.random(shape(n)).astype(dtype) for _ in range(pieces)]
            tensors = [xrt.asarray(a) for a in arrays]
            number = max(1, min(2000, 2_000_000 // n))
            ours, numpy_ = best_of_rounds(
                [lambda: xrt.concat(tensors, axis=axis),
                 lambda: np.concatenate(arrays, axis=axis)], rounds, number)
            rows.append((f"{n:.0e}", dtype, f"{pieces} x {shape(n)}", axis,
                         f"{numpy_ * 1e6:.1f}", f"{ours * 1e6:.1f}", f"{numpy_ / ours:.2f}"))
    return rows


def host_rows():
    a, n = xrt.asarray(np.arange(16.0)), np.arange(16.0)
    a2, n2 = xrt.reshape(a, (4, 4)), n.reshape(4, 4)
    cases = [
        ("reshape", lambda: xrt.reshape(a, (4, 4)), lambda: np.reshape(n, (4, 4))),
        ("permute_dims", lambda: xrt.permute_dims(a2, (1, 0)),
         lambda: np.permute_dims(n2, (1, 0))),
        ("expand_dims", lambda: xrt.expand_dims(a, 0), lambda: np.expand_dims(n, 0)),
        ("squeeze", lambda: xrt.squeeze(a2, ()), lambda: np.squeeze(n2, ())),
        ("broadcast_to", lambda: xrt.broadcast_to(a, (4, 16)),
         lambda: np.broadcast_to(n, (4, 16))),
        ("flip", lambda: xrt.flip(a), lambda: np.flip(n)),
        ("concat 2 x 16", lambda: xrt.concat([a, a]), lambda: np.concatenate([n, n])),
        ("stack 2 x 16", lambda: xrt.stack([a, a]), lambda: np.stack([n, n])),
        ("zeros_like", lambda: xrt.zeros_like(a), lambda: np.zeros_like(n)),
    ]
    rows = []
    for name, ours_fn, numpy_fn in cases:
        ours, numpy_ = per_call(ours_fn), per_call(numpy_fn)
        rows.append((name, f"{ours * 1e9:.0f} ns", f"{numpy_ * 1e9:.0f} ns",
                     f"{numpy_ / ours:.2f}"))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, help="threads of the CPU kernels")
    args = parser.parse_args()
    if args.threads:
        xrt.set_num_threads(args.threads)
    sizes = [10**3, 10**5, 10**7] if args.quick else [10**3, 10**4, 10**5, 10**6, 10**7]
    rounds = 3 if args.quick else 7
    print(f"threads: {xrt.num_threads()}")
    print(table(host_rows(), ["host cost", "xpuruntime", "NumPy", "NumPy / ours"]))
    print()
    rows = []
    for dtype in ("float32", "float64"):
        rows += concat_rows(sizes, dtype, rounds)
    print(table(rows, ["n", "dtype", "pieces", "axis", "NumPy us", "ours us", "NumPy / ours"]))


if __name__ == "__main__":
    main()
