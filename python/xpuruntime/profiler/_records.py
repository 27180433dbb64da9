"""python/xpuruntime/profiler/_records.py: what a profile holds, decoded from the C++ buffer's
records (cpp/include/xpuruntime/profiler.h) into plain objects.

Times are nanoseconds of the steady clock (CLOCK_MONOTONIC, as ``time.monotonic_ns()``);
the ``*_us`` properties are durations in microseconds.
"""

from dataclasses import dataclass, field

# RecordKind, in the C++ enum's order.
OP, RANGE, ALLOC, FREE, SEGMENT_ALLOC, SEGMENT_FREE, COPY, WAIT, MARK = range(9)
DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device", "peer_to_peer")
ROUTES = ("direct", "pinned", "staged", "pageable")
NO_OP = 0xFFFF


@dataclass(frozen=True)
class SourceLine:
    """The user's Python line (frames inside xpuruntime are skipped)."""
    file: str
    line: int
    function: str

    def __str__(self):
        return f"{self.file}:{self.line} ({self.function})" if self.file else "<unknown>"


@dataclass
class OpRecord:
    """One dispatched op: its kernel and why it was chosen, host and device time."""
    name: str
    device: str
    dtypes: str
    kernel: str
    reason: str
    decision: str  # pinned, first_supported, best_performance, fallback
    input_shapes: tuple
    output_shapes: tuple
    start_ns: int
    end_ns: int
    device_start_ns: int  # 0: not timed on a device (CPU ops run on the host)
    device_end_ns: int
    stream: int
    thread: int
    depth: int = 0  # ops this one runs inside, on its thread (a kernel made of ops)

    @property
    def host_time_us(self):
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def device_time_us(self):
        """Device time; a CPU op's kernel runs on the host, so there it is the host time."""
        if self.device_start_ns:
            return (self.device_end_ns - self.device_start_ns) / 1e3
        return self.host_time_us if self.device == "cpu" else 0.0


@dataclass
class RangeRecord:
    """A user range (``profiler.range``, ``push_range``) or an inference session's run."""
    name: str
    start_ns: int
    end_ns: int
    thread: int
    depth: int = 0
    args: dict = field(default_factory=dict)

    @property
    def duration_us(self):
        return (self.end_ns - self.start_ns) / 1e3


@dataclass
class MemoryRecord:
    """An allocation or free of a buffer (``alloc``/``free``), or of the allocator's raw
    memory (``segment_alloc``/``segment_free``), with the session's running totals on the
    device: ``allocated`` (buffers handed out and not freed since the profile started) and
    ``reserved`` (raw memory the allocator took minus what it gave back, since the start)."""
    kind: str
    device: str
    address: int
    bytes: int
    time_ns: int
    op: str
    allocated: int
    reserved: int
    thread: int


@dataclass
class SyncRecord:
    """A point where the host waited for a device (or read a value a device would make it
    wait for), with its cause and the user's line that caused it."""
    cause: str
    device: str
    source: SourceLine
    start_ns: int
    end_ns: int
    op: str
    bytes: int
    thread: int

    @property
    def wait_us(self):
        return (self.end_ns - self.start_ns) / 1e3


@dataclass
class TransferRecord:
    """A copy between host and device: direction, route (pinned, staged through pinned
    buffers, or pageable memory the driver stages), bytes and the user's line."""
    direction: str
    route: str
    device: str
    bytes: int
    blocking: bool
    source: SourceLine
    start_ns: int
    end_ns: int
    stream: int
    op: str
    thread: int

    @property
    def host_time_us(self):
        return (self.end_ns - self.start_ns) / 1e3


def _device_name(device_type, index):
    return "cpu" if device_type == 0 else f"cuda:{index}"


def _shapes_at(arena, offset):
    if offset < 0 or offset >= len(arena):
        return (), ()
    n_in, n_out = arena[offset], arena[offset + 1]
    at = offset + 2
    shapes = []
    for _ in range(n_in + n_out):
        ndim = arena[at]
        shapes.append(tuple(arena[at + 1:at + 1 + ndim]))
        at += 1 + ndim
    return tuple(shapes[:n_in]), tuple(shapes[n_in:])


def decode(raw, engine_runs, causes):
    """The records of one session, by kind: (ops, ranges, memory, syncs, transfers, marks)."""
    decisions = raw["decisions"]
    names = raw["names"]
    op_names = raw["op_names"]
    lines = [SourceLine(*line) for line in raw["lines"]]
    unknown = SourceLine("", 0, "")
    arena = raw["shapes"]
    stop_ns = raw["stop_ns"]

    def op_name(op):
        return op_names[op] if op != NO_OP and op < len(op_names) else ""

    def line_of(i):
        return lines[i] if i < len(lines) else unknown

    ops, ranges, memory, syncs, transfers, marks = [], [], [], [], [], []
    allocated, reserved = {}, {}
    engine_queue = list(engine_runs)
    for (kind, begin, end, dbegin, dend, nbytes, address, shapes, ident, thread, flags,
         dtype_, dindex, op) in raw["records"]:
        device = _device_name(dtype_, dindex)
        if kind == OP:
            d = decisions[ident] if ident < len(decisions) else {}
            ins, outs = _shapes_at(arena, shapes)
            ops.append(OpRecord(op_name(op), device, d.get("dtypes", ""), d.get("kernel", ""),
                                d.get("reason", ""), d.get("kind", ""), ins, outs, begin, end,
                                dbegin, dend, address, thread))
        elif kind == RANGE:
            name = names[ident] if ident < len(names) else ""
            args = {}
            if name.startswith("InferenceSession.run") and engine_queue:
                args = engine_queue.pop(0)
            ranges.append(RangeRecord(name, begin, end if end else stop_ns, thread, 0, args))
        elif kind == MARK:
            marks.append(RangeRecord(names[ident] if ident < len(names) else "", begin, begin,
                                     thread))
        elif kind in (ALLOC, FREE, SEGMENT_ALLOC, SEGMENT_FREE):
            sign = 1 if kind in (ALLOC, SEGMENT_ALLOC) else -1
            totals = allocated if kind in (ALLOC, FREE) else reserved
            totals[device] = totals.get(device, 0) + sign * nbytes
            memory.append(MemoryRecord(
                ("alloc", "free", "segment_alloc", "segment_free")[kind - ALLOC], device, address,
                nbytes, begin, op_name(op), allocated.get(device, 0), reserved.get(device, 0),
                thread))
        elif kind == COPY:
            transfers.append(TransferRecord(DIRECTIONS[flags & 3], ROUTES[(flags >> 2) & 3],
                                            device, nbytes, bool(flags & 16), line_of(ident),
                                            begin, end, address, op_name(op), thread))
        elif kind == WAIT:
            cause = causes[flags] if flags < len(causes) else str(flags)
            syncs.append(SyncRecord(cause, device, line_of(ident), begin, end, op_name(op),
                                    nbytes, thread))
    _set_depths(ranges)
    _set_depths(ops)
    return ops, ranges, memory, syncs, transfers, marks


def _set_depths(ranges):
    """Nesting depth of each range (or op) on its thread (they arrive in start order)."""
    open_by_thread = {}
    for r in ranges:
        stack = open_by_thread.setdefault(r.thread, [])
        while stack and stack[-1].end_ns <= r.start_ns:
            stack.pop()
        r.depth = len(stack)
        stack.append(r)
