"""benchmarks/bench_profiler.py: what the profiler costs per tiny op: off, on without device
timing, on with device timing; on CPU and on CUDA (when there is a GPU), beside
torch.profiler's cost on the same loop (when torch is installed).

Two measures:
- C++ loop: add(a, b) dispatched from C++ into a preallocated output (no Python), with the
  profiler's test left out ("no hook") and in, and with the profiler recording. This is the
  per-op cost of the hook itself.
- Python loop: ``a + b`` from Python, as users run it, unprofiled and inside a profile;
  and torch's ``a + b`` unprofiled and inside torch.profiler. The overheads (profiled minus
  unprofiled, per op) are compared as a ratio: xpuruntime / torch. Rows ": stop" give the
  cost, per op recorded, of ending the session (device times read, records decoded into
  Python objects; torch's key_averages for torch), which is paid after the region.

Goals (issue 14): off adds < 10 ns; on, host only, <= 0.3 us; on with device timing <= 1 us
and below torch.profiler's cost per op.

    python benchmarks/bench_profiler.py [--ops N] [--repeat R]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import xpuruntime as xrt  # noqa: E402


def best_ns_per_op(run, ops, repeat):
    """Best of `repeat` runs of run() (which does `ops` ops), in ns per op."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        run()
        best = min(best, (time.perf_counter_ns() - start) / ops)
    return best


def xrt_loop(a, b, ops):
    def run():
        for _ in range(ops):
            a + b
    return run


def inside_profile(run, ops, repeat, **options):
    """(ns per op of run() timed inside one profile, ns per op of stopping it: reading the
    device times and decoding the records)."""
    prof = xrt.profile(max_records=(repeat + 1) * ops * 4, **options)
    with prof:
        t = best_ns_per_op(run, ops, repeat)
        start = time.perf_counter_ns()
    return t, (time.perf_counter_ns() - start) / (ops * repeat)


def cpp_rows(device, ops, repeat):
    a = xrt.ones((1,), device=device)
    cpp = xrt._core._time_dispatch
    cpp(a, a, 1000)  # warm up the decision cache and the kernel
    no_hook = min(cpp(a, a, ops, False) for _ in range(repeat))
    off = min(cpp(a, a, ops, True) for _ in range(repeat))
    rows = [(device, "C++ loop", "no hook", f"{no_hook:.1f}", ""),
            (device, "C++ loop", "off", f"{off:.1f}", f"{off - no_hook:+.1f}")]
    modes = [("on, host only", dict(device_time=False))]
    if device != "cpu":
        modes.append(("on, device timing", dict(device_time=True)))
    for label, options in modes:
        best = float("inf")
        for _ in range(repeat):
            with xrt.profile(**options):
                best = min(best, cpp(a, a, ops, True))
        rows.append((device, "C++ loop", label, f"{best:.1f}", f"{best - off:+.1f}"))
    return rows


def python_rows(device, ops, repeat, torch):
    a = xrt.ones((1,), device=device)
    run = xrt_loop(a, a, ops)
    run()
    base = best_ns_per_op(run, ops, repeat)
    rows = [(device, "python a + b", "off", f"{base:.1f}", "")]
    overheads = {}
    # torch.profiler records neither shapes nor memory by default: "lean" is like for like.
    modes = [("on, host only", dict(device_time=False)),
             ("on, host only, lean", dict(device_time=False, record_shapes=False, memory=False))]
    if device != "cpu":
        modes.append(("on, device timing", dict(device_time=True)))
        modes.append(("on, device timing, lean",
                      dict(device_time=True, record_shapes=False, memory=False)))
    for label, options in modes:
        inside_profile(run, ops, 1, **options)  # warm: the event pool fills on first use
        t, stop = inside_profile(run, ops, repeat, **options)
        overheads[label] = t - base
        rows.append((device, "python a + b", label, f"{t:.1f}", f"{t - base:+.1f}"))
        rows.append((device, "python a + b", label + ": stop", f"{stop:.1f}", ""))
    if torch is None:
        return rows, overheads, None
    from torch.profiler import ProfilerActivity, profile
    tdev = "cuda" if device != "cpu" else "cpu"
    ta = torch.ones(1, device=tdev)

    def trun():
        for _ in range(ops):
            ta + ta
        if tdev == "cuda":
            torch.cuda.synchronize()
    trun()
    tbase = best_ns_per_op(trun, ops, repeat)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if tdev == "cuda" else [])

    with profile(activities=activities):
        trun()
    with profile(activities=activities) as tp:
        tprof = best_ns_per_op(trun, ops, repeat)
        start = time.perf_counter_ns()
    tp.key_averages()  # torch processes its events lazily; count that in its stop
    tstop = (time.perf_counter_ns() - start) / (ops * repeat)
    rows.append((device, "torch a + b", "off", f"{tbase:.1f}", ""))
    rows.append((device, "torch a + b", "torch.profiler", f"{tprof:.1f}", f"{tprof - tbase:+.1f}"))
    rows.append((device, "torch a + b", "torch.profiler: stop", f"{tstop:.1f}", ""))
    return rows, overheads, tprof - tbase


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=20000, help="ops per timed run")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    devices = ["cpu"] + (["cuda:0"] if xrt.cuda.is_available() else [])
    print(f"bench_profiler: {a.ops} tiny ops per run, best of {a.repeat}; "
          f"torch {'%s' % torch.__version__ if torch else 'not installed'}")
    if xrt.cuda.is_available():
        print(f"GPU: {xrt.cuda.get_device_properties(0).name}")
    rows, ratios = [], []
    for device in devices:
        rows += cpp_rows(device, a.ops * 5, a.repeat)
        prows, overheads, torch_overhead = python_rows(device, a.ops, a.repeat, torch)
        rows += prows
        if torch_overhead:
            for label, ours in overheads.items():
                ratios.append(f"{device}: profiler overhead per op, {label}: xpuruntime "
                              f"{ours:.0f} ns vs torch.profiler {torch_overhead:.0f} ns "
                              f"(ratio {ours / torch_overhead:.3f})")
    headers = ("device", "loop", "profiler", "ns/op", "added ns/op")
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    for line in ratios:
        print(line)


if __name__ == "__main__":
    main()
