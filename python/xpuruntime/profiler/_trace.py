"""python/xpuruntime/profiler/_trace.py: a profile as a Chrome trace (the JSON that Perfetto
and chrome://tracing load).

Layout: process 0 is the host, one track per thread (ops, user ranges, inference runs, waits,
copies); each device is a process with one track per stream (the ops' device times, named by
kernel), and a flow arrow from each launch to its kernel; memory is a counter per device
(buffers allocated and raw memory reserved, since the profile started). Timestamps are
CLOCK_MONOTONIC microseconds, the clock of time.monotonic_ns(), so other traces on that
clock merge by concatenation. Events are sorted by start, longer first at equal starts, so
slices of one track nest.
"""

HOST_PID = 0


def _us(ns):
    return ns / 1e3


def chrome_trace(prof):
    events = []
    meta = [{"name": "process_name", "ph": "M", "pid": HOST_PID, "tid": 0,
             "args": {"name": "xpuruntime host"}},
            {"name": "process_sort_index", "ph": "M", "pid": HOST_PID, "tid": 0,
             "args": {"sort_index": 0}}]
    threads = {r.thread for r in prof.ranges} | {o.thread for o in prof.ops}
    threads |= {s.thread for s in prof._syncs} | {t.thread for t in prof._transfers}
    for t in sorted(threads):
        meta.append({"name": "thread_name", "ph": "M", "pid": HOST_PID, "tid": t,
                     "args": {"name": f"host thread {t}"}})
    devices = sorted({o.device for o in prof.ops if o.device_start_ns}
                     | {m.device for m in prof.memory if m.device != "cpu"})
    device_pid = {d: i + 1 for i, d in enumerate(devices)}
    for d, pid in device_pid.items():
        meta.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                     "args": {"name": d}})
        meta.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                     "args": {"sort_index": pid}})
    streams = {}

    def stream_tid(device, stream):
        key = (device, stream)
        if key not in streams:
            streams[key] = len([k for k in streams if k[0] == device]) + 1
            meta.append({"name": "thread_name", "ph": "M", "pid": device_pid[device],
                         "tid": streams[key], "args": {"name": f"stream {stream:#x}"}})
        return streams[key]

    for i, op in enumerate(prof.ops):
        args = {"device": op.device, "kernel": op.kernel, "reason": op.reason,
                "decision": op.decision, "dtypes": op.dtypes}
        if op.input_shapes or op.output_shapes:
            args["input_shapes"] = [list(s) for s in op.input_shapes]
            args["output_shapes"] = [list(s) for s in op.output_shapes]
        events.append({"name": op.name, "cat": "op", "ph": "X", "ts": _us(op.start_ns),
                       "dur": _us(op.end_ns - op.start_ns), "pid": HOST_PID, "tid": op.thread,
                       "args": args})
        if op.device_start_ns:
            pid, tid = device_pid[op.device], stream_tid(op.device, op.stream)
            events.append({"name": op.kernel, "cat": "kernel", "ph": "X",
                           "ts": _us(op.device_start_ns),
                           "dur": _us(op.device_end_ns - op.device_start_ns),
                           "pid": pid, "tid": tid, "args": {"op": op.name, "dtypes": op.dtypes}})
            events.append({"name": "launch", "cat": "launch", "ph": "s", "id": i + 1,
                           "ts": _us(op.start_ns), "pid": HOST_PID, "tid": op.thread})
            events.append({"name": "launch", "cat": "launch", "ph": "f", "bp": "e", "id": i + 1,
                           "ts": _us(op.device_start_ns), "pid": pid, "tid": tid})
    for r in prof.ranges:
        cat = "engine" if r.name.startswith("InferenceSession.run") else "user_annotation"
        events.append({"name": r.name, "cat": cat, "ph": "X", "ts": _us(r.start_ns),
                       "dur": _us(r.end_ns - r.start_ns), "pid": HOST_PID, "tid": r.thread,
                       "args": dict(r.args)})
    for m in prof.marks:
        events.append({"name": m.name, "cat": "mark", "ph": "i", "s": "t", "ts": _us(m.start_ns),
                       "pid": HOST_PID, "tid": m.thread})
    for s in prof._syncs:
        events.append({"name": f"wait ({s.cause})", "cat": "sync", "ph": "X",
                       "ts": _us(s.start_ns), "dur": _us(s.end_ns - s.start_ns),
                       "pid": HOST_PID, "tid": s.thread,
                       "args": {"device": s.device, "source": str(s.source), "op": s.op}})
    for t in prof._transfers:
        events.append({"name": f"memcpy {t.direction}", "cat": "memcpy", "ph": "X",
                       "ts": _us(t.start_ns), "dur": _us(t.end_ns - t.start_ns),
                       "pid": HOST_PID, "tid": t.thread,
                       "args": {"device": t.device, "bytes": t.bytes, "route": t.route,
                                "blocking": t.blocking, "source": str(t.source)}})
    for m in prof.memory:
        events.append({"name": f"memory {m.device}", "cat": "memory", "ph": "C",
                       "ts": _us(m.time_ns), "pid": device_pid.get(m.device, HOST_PID),
                       "tid": 0, "args": {"allocated": m.allocated, "reserved": m.reserved}})
    events.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    return {"traceEvents": meta + events, "displayTimeUnit": "ms",
            "otherData": {"producer": "xpuruntime.profiler",
                          "clock": "CLOCK_MONOTONIC, microseconds",
                          "dropped_records": prof.dropped, "untimed_ops": prof.untimed}}
