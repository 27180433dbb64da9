"""python/xpuruntime/profiler/_cli.py: ``python -m xpuruntime profile script.py [args]``: runs
a script under the profiler, writes its Chrome trace and prints the top ops, the host waits
and the copies."""

import argparse
import os
import runpy
import sys


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m xpuruntime profile",
        description="Run a Python script under xpuruntime's profiler.")
    p.add_argument("script", help="the script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    p.add_argument("-o", "--output", default="trace.json",
                   help="Chrome trace to write (default: trace.json)")
    p.add_argument("--report", help="also write a one-page report (.html or .png)")
    p.add_argument("--sort-by", default="device_time",
                   choices=("device_time", "host_time", "count", "name"))
    p.add_argument("--group-by", default="op", choices=("op", "kernel", "shape"))
    p.add_argument("--top", type=int, default=15, help="rows of the summary (default 15)")
    p.add_argument("--no-device-time", action="store_true",
                   help="do not time ops on devices with events")
    p.add_argument("--nvtx", action="store_true", help="emit NVTX ranges too")
    return p


def main(argv):
    from . import profile

    a = _parser().parse_args(argv)
    if not os.path.isfile(a.script):
        raise ValueError(f"no such script: {a.script}")
    if a.top <= 0:
        raise ValueError("--top must be positive")
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [a.script] + a.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(a.script)))
    prof = profile(device_time=not a.no_device_time, nvtx=a.nvtx)
    status = 0
    try:
        with prof:
            try:
                runpy.run_path(a.script, run_name="__main__")
            except SystemExit as e:  # the script's exit status, after the trace is written
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    prof.export_chrome_trace(a.output)
    print(f"xpuruntime profile: {prof!r}", file=sys.stderr)
    print(prof.summary(sort_by=a.sort_by, group_by=a.group_by, limit=a.top), file=sys.stderr)
    syncs, transfers = prof.syncs(), prof.transfers()
    if syncs:
        print(f"\nhost waits ({len(syncs)}):", file=sys.stderr)
        for s in syncs[:a.top]:
            print(f"  {s.cause:<22} {s.device:<7} {s.wait_us:>9.1f} us  {s.source}",
                  file=sys.stderr)
    if transfers:
        print(f"\ncopies ({len(transfers)}):", file=sys.stderr)
        for t in transfers[:a.top]:
            print(f"  {t.direction:<16} {t.route:<8} {t.bytes:>12} B  {t.source}", file=sys.stderr)
    print(f"\ntrace: {a.output}", file=sys.stderr)
    if a.report:
        prof.report(a.report)
        print(f"report: {a.report}", file=sys.stderr)
    return status
