"""benchmarks/common.py: timing helpers shared by the benchmark scripts."""

import time


def per_call(fn, *, number=None, repeat=7, budget=0.2):
    """Best mean seconds per call of fn() over `repeat` runs of `number` calls."""
    fn()
    if number is None:  # calibrate so that one run takes about budget/repeat seconds
        number, elapsed = 1, 0.0
        while True:
            start = time.perf_counter()
            for _ in range(number):
                fn()
            elapsed = time.perf_counter() - start
            if elapsed > budget / repeat or number >= 1 << 22:
                break
            number *= 4
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def table(rows, headers):
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)
