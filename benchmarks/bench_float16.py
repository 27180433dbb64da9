"""benchmarks/bench_float16.py: float16 elementwise on the CPU against float32 (ours) and
against PyTorch's CPU float16, in one run. Prints times and ratios; asserts nothing.

    python benchmarks/bench_float16.py [--n 10000000] [--threads N]

Target (issue 17): a float16 add runs at float32 speed (F16C block conversions,
cpu/half_blocks.h); before, 16.4 ms where PyTorch took 4.0 ms on 10^7 elements.
"""

import argparse
import platform

import numpy as np

import xpuruntime as xrt
from common import per_call, table

try:
    import torch
except ImportError:
    torch = None

OPS = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "multiply": (lambda a, b: a * b, lambda a, b: a * b),
    "add scalar": (lambda a, b: a + 1.5, lambda a, b: a + 1.5),
    "less": (lambda a, b: a < b, lambda a, b: a < b),
    "exp": (lambda a, b: xrt.exp(a), lambda a, b: torch.exp(a)),
    "sqrt": (lambda a, b: xrt.sqrt(a), lambda a, b: torch.sqrt(a)),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        xrt.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    host = [rng.uniform(0.5, 2.0, args.n).astype(np.float32) for _ in range(2)]
    ours16 = [xrt.asarray(h.astype(np.float16)) for h in host]
    ours32 = [xrt.asarray(h) for h in host]
    theirs16 = [torch.from_numpy(h.astype(np.float16)) for h in host] if torch else None
    rows = []
    for name, (ours, theirs) in OPS.items():
        t16 = per_call(lambda: ours(*ours16), repeat=5)
        t32 = per_call(lambda: ours(*ours32), repeat=5)
        tt = per_call(lambda: theirs(*theirs16), repeat=5) if torch else float("nan")
        rows.append([name, f"{t16 * 1e3:.2f}", f"{t32 * 1e3:.2f}", f"{tt * 1e3:.2f}",
                     f"{t16 / t32:.2f}", f"{t16 / tt:.2f}"])
    print(f"{platform.processor() or platform.machine()}, {xrt.num_threads()} xpuruntime "
          f"threads, torch {torch.__version__ if torch else 'absent'} "
          f"({torch.get_num_threads() if torch else '-'} threads), n = {args.n}")
    print(table(rows, ["op", "ours f16 ms", "ours f32 ms", "torch f16 ms", "f16/f32",
                       "ours/torch f16"]))


if __name__ == "__main__":
    main()
