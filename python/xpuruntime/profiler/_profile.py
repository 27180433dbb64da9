"""python/xpuruntime/profiler/_profile.py: ``profile``, the session users hold: it starts the
C++ recorder, stops it, decodes its records and answers questions about them (summary,
syncs, transfers) and writes them out (Chrome trace, report).
"""

import os
import threading
import time
import weakref

from .. import _core
from . import _records
from ._torch import clock_offset_ns as _clock_offset_ns

_p = _core._profiler
_p.set_package_dir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)

_SORT_KEYS = ("device_time", "host_time", "count", "name")
_GROUPS = ("op", "kernel", "shape")

# The profile recording now (one per process: the C++ buffer is one), and the engine runs it
# was told about, in order (matched to their ranges when decoded).
_active = None
_lock = threading.Lock()


class profile:
    """``with xrt.profile() as prof:`` records every op (name, device, dtypes, shapes, the
    kernel chosen and why, host time and device time), allocations and frees, host<->device
    copies, every host wait with the Python line that caused it, inference runs and user
    ranges. Afterwards: ``prof.summary()``, ``prof.syncs()``, ``prof.transfers()``,
    ``prof.export_chrome_trace(path)``, ``prof.report(path)``.

    ``device_time``: time ops on devices with events on their stream, read after the
    region (no waits inside it). ``record_shapes``: keep input and output shapes.
    ``memory``: record allocations and frees. ``nvtx``: every op and range also emits an
    NVTX range (domain "xpuruntime"), for Nsight Systems; ``XPURUNTIME_NVTX=1`` turns that
    on for the whole process. ``max_records``: the buffer's size (records past it are
    counted in ``dropped``, not kept). ``cuda`` is an alias of ``device_time``.
    """

    def __init__(self, *, device_time=True, record_shapes=True, memory=True, nvtx=False,
                 cuda=None, max_records=1 << 21, max_timed_ops=1 << 18):
        if cuda is not None:
            device_time = cuda
        for name, value in (("device_time", device_time), ("record_shapes", record_shapes),
                            ("memory", memory), ("nvtx", nvtx)):
            if not isinstance(value, bool):
                raise TypeError(f"profile: {name} must be True or False, got {value!r}")
        for name, value in (("max_records", max_records), ("max_timed_ops", max_timed_ops)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"profile: {name} must be a positive int, got {value!r}")
        self._options = (device_time, record_shapes, memory, nvtx, max_records, max_timed_ops)
        self._engine_runs = []
        self._engine_sessions = []
        self._state = "new"
        self.ops = self.ranges = self.memory = self.marks = ()
        self._syncs = self._transfers = ()
        self.dropped = self.untimed = 0
        self.start_ns = self.stop_ns = 0
        self.thread_ids = []
        self.clock_offset_ns = 0  # CLOCK_REALTIME - CLOCK_MONOTONIC at stop (torch merge)
        self.device_clock_error_ns = 0  # how far device times may sit from the host clock

    # Recording.

    def start(self):
        global _active
        if self._state != "new":
            raise RuntimeError("this profile has run already; make a new one")
        with _lock:
            if _active is not None:
                raise _core.XpuRuntimeError("a profile is recording already; profiles do not "
                                            "nest (use profiler.range for regions inside one)")
            _p.start(*self._options)
            _active = self
        self._state = "recording"
        return self

    def stop(self):
        global _active
        if self._state != "recording":
            raise RuntimeError("this profile is not recording")
        with _lock:
            raw = _p.stop()
            _active = None
        self._state = "stopped"
        self.start_ns, self.stop_ns = raw["start_ns"], raw["stop_ns"]
        self.dropped, self.untimed = raw["dropped"], raw["untimed"]
        self.thread_ids = raw["thread_ids"]
        self.device_clock_error_ns = raw["device_clock_error_ns"]
        self.clock_offset_ns = _clock_offset_ns()
        (self.ops, self.ranges, self.memory, self._syncs, self._transfers,
         self.marks) = _records.decode(raw, self._engine_runs, _p.cause_names())
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def _check_stopped(self, what):
        if self._state != "stopped":
            raise RuntimeError(f"{what}: the profile has not finished recording (use it "
                               f"after the `with` block, or call stop())")

    # Questions.

    def syncs(self):
        """Every host wait (and host read of a value), in order: cause, device, the user's
        source line, how long the host waited."""
        self._check_stopped("syncs()")
        return list(self._syncs)

    def transfers(self):
        """Every copy between host and device, in order: direction, route, bytes, line."""
        self._check_stopped("transfers()")
        return list(self._transfers)

    def engine_profiles(self):
        """The engines' own profiles of the inference sessions run in the region, where the
        engine keeps one (ExecutionPolicy(profile=True)): {session description: profile}."""
        self._check_stopped("engine_profiles()")
        out = {}
        for ref in self._engine_sessions:
            session = ref()
            if session is None:
                continue
            details = session.explain().get("engine_details", {})
            if isinstance(details, dict) and details.get("profile") is not None:
                out[repr(session)] = details["profile"]
        return out

    def summary(self, sort_by="device_time", group_by="op", limit=None):
        """A table like torch.profiler's key_averages(): per op (or kernel, or op and
        shapes), the count, total and mean host and device time, sorted by ``sort_by``
        (device_time, host_time, count, name). Printing it prints the table."""
        self._check_stopped("summary()")
        from ._summary import summarize
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"summary: sort_by must be one of {', '.join(_SORT_KEYS)}; "
                             f"got {sort_by!r}")
        if group_by not in _GROUPS:
            raise ValueError(f"summary: group_by must be one of {', '.join(_GROUPS)}; "
                             f"got {group_by!r}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit <= 0):
            raise ValueError(f"summary: limit must be a positive int or None, got {limit!r}")
        return summarize(self.ops, sort_by, group_by, limit)

    def chrome_trace(self):
        """The profile as a Chrome trace / Perfetto JSON object (a dict)."""
        self._check_stopped("chrome_trace()")
        from ._trace import chrome_trace
        return chrome_trace(self)

    def export_chrome_trace(self, path):
        """Writes the Chrome trace (open it in ui.perfetto.dev or chrome://tracing)."""
        import json
        trace = self.chrome_trace()
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            json.dump(trace, f)
        return path

    def report(self, path):
        """A one-page report: an HTML file (timeline, top ops, syncs, transfers) for a path
        ending in .html, a PNG through matplotlib for .png."""
        self._check_stopped("report()")
        from ._report import write_report
        return write_report(self, os.fspath(path))

    def __repr__(self):
        if self._state != "stopped":
            return f"<xpuruntime.profile {self._state}>"
        return (f"<xpuruntime.profile: {len(self.ops)} ops, {len(self._syncs)} syncs, "
                f"{len(self._transfers)} transfers, {len(self.ranges)} ranges, "
                f"{(self.stop_ns - self.start_ns) / 1e6:.3f} ms>")


class _EngineRun:
    """The context InferenceSession.run takes: a range named after the engine, and the
    run's details for the profile."""

    __slots__ = ("session", "tensors", "pushed")

    def __init__(self, session, tensors):
        self.session = session
        self.tensors = tensors
        self.pushed = False

    def __enter__(self):
        prof = _active
        if prof is not None:
            prof._engine_runs.append({
                "engine": self.session.engine, "device": str(self.session.device),
                "inputs": {k: tuple(v.shape) for k, v in self.tensors.items()}})
            if not any(r() is self.session for r in prof._engine_sessions):
                prof._engine_sessions.append(weakref.ref(self.session))
        if prof is not None or _p.nvtx_on():
            _p.push_range(f"InferenceSession.run ({self.session.engine})")
            self.pushed = True
        return self

    def __exit__(self, *exc):
        if self.pushed:
            _p.pop_range()
        return False


def quiet():
    """True when an engine run needs no range: no profile is active and NVTX is off."""
    return _active is None and not _p.nvtx_on()


def engine_run(session, tensors):
    """Used by InferenceSession.run: ``with engine_run(self, tensors): ...``."""
    return _EngineRun(session, tensors)


def now_ns():
    """The profiler's clock: CLOCK_MONOTONIC nanoseconds, as time.monotonic_ns()."""
    return time.monotonic_ns()
