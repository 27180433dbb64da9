"""python/xpuruntime/profiler/_torch.py: one trace, one clock, with torch.profiler.

torch.profiler's Chrome trace gives "ts" in microseconds of the wall clock (CLOCK_REALTIME)
after its "baseTimeNanoseconds"; ours are CLOCK_MONOTONIC. A profile samples the distance
between the two clocks when it stops (the middle of two wall-clock reads around one
monotonic read), which moves our events onto torch's clock. Our processes keep their own
pids, offset so they never collide with torch's.
"""

import json
import os
import tempfile
import time

PID_OFFSET = 1 << 20


def clock_offset_ns():
    """CLOCK_REALTIME minus CLOCK_MONOTONIC, now (nanoseconds)."""
    best = None
    for _ in range(5):
        a = time.time_ns()
        m = time.monotonic_ns()
        b = time.time_ns()
        if best is None or b - a < best[0]:
            best = (b - a, (a + b) // 2 - m)
    return best[1]


def _load_torch_trace(torch_trace):
    if isinstance(torch_trace, dict):
        return torch_trace
    if isinstance(torch_trace, (str, os.PathLike)):
        with open(os.fspath(torch_trace), encoding="utf-8") as f:
            return json.load(f)
    if hasattr(torch_trace, "export_chrome_trace"):  # a finished torch.profiler.profile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "torch_trace.json")
            torch_trace.export_chrome_trace(path)
            with open(path, encoding="utf-8") as f:
                return json.load(f)
    raise TypeError("merge_torch_trace: torch_trace must be a torch.profiler.profile, the path "
                    f"of its Chrome trace or the loaded dict, not {type(torch_trace).__name__}")


def merge_torch_trace(prof, torch_trace, path=None):
    """Our profile's events inside torch.profiler's Chrome trace, on torch's clock; the
    merged dict, also written to ``path`` when given."""
    from ._profile import profile
    if not isinstance(prof, profile):
        raise TypeError(f"merge_torch_trace: expected an xpuruntime profile, got "
                        f"{type(prof).__name__}")
    trace = _load_torch_trace(torch_trace)
    if "traceEvents" not in trace:
        raise ValueError("merge_torch_trace: the torch trace has no traceEvents")
    base_ns = int(trace.get("baseTimeNanoseconds", 0))
    shift_us = (prof.clock_offset_ns - base_ns) / 1e3
    ours = prof.chrome_trace()["traceEvents"]
    merged = list(trace["traceEvents"])
    for e in ours:
        e = dict(e)
        e["pid"] = PID_OFFSET + e["pid"]
        if e["ph"] != "M":
            e["ts"] = e["ts"] + shift_us
        if "id" in e:
            e["id"] = PID_OFFSET + e["id"]
        merged.append(e)
    out = dict(trace)
    out["traceEvents"] = merged
    if path is not None:
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            json.dump(out, f)
    return out
