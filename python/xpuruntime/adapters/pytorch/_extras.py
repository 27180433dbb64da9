"""python/xpuruntime/adapters/pytorch/_extras.py: autocast, CUDA graph capture, the
allocator swap and merged profiles for training with xpuruntime's kernels.

- ``autocast(dtype)``: torch's autocast; the adapter's kernels read the same state, so a
  rerouted or fused op computes in fp32 inside and returns the autocast dtype, as torch's
  own ops of that class do (norms and attention take their inputs in the autocast dtype;
  torch would run layer_norm in fp32 and return fp32: ours returns the autocast dtype,
  saving a write and a read of fp32 activations).
- ``capture_graph(step)`` / ``with capture_graph() as g``: torch's CUDA graph capture; our
  kernels launch on torch's current stream, so they are captured with torch's ops, and
  their outputs come from torch's allocator, i.e. from the graph's private pool.
- ``set_allocator(True)``: torch allocates from xpuruntime's caching allocator through a
  ``torch.cuda.MemPool`` over a ``CUDAPluggableAllocator`` whose two C functions are
  ctypes callbacks into xpuruntime (see set_allocator for when it applies).
- ``profile(export_chrome_trace=path)``: torch.profiler's trace (our NVRTC kernels appear in
  it: kineto records every kernel launch) plus our kernel-choice log as user annotations
  and in the trace's metadata.
"""

import contextlib
import ctypes
import json
import threading

import torch

from ... import _core
from ...policies import explain

# ---- autocast ------------------------------------------------------------------------------


def autocast(dtype=torch.float16, enabled=True):
    """``with autocast(torch.bfloat16):`` torch's autocast on CUDA; xpuruntime's kernels
    behind rerouted and fused ops follow the same dtype."""
    if dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"autocast dtype must be torch.float16 or torch.bfloat16, got {dtype}")
    return torch.autocast("cuda", dtype=dtype, enabled=enabled)


# ---- graph capture -------------------------------------------------------------------------


class CapturedGraph:
    """A captured step: ``replay()`` runs it again on the current stream; ``outputs`` holds
    what the step returned (static tensors, overwritten by each replay)."""

    def __init__(self, pool=None):
        self.graph = torch.cuda.CUDAGraph()
        self.pool = pool
        self.outputs = None
        self._context = None

    def replay(self):
        self.graph.replay()
        return self.outputs

    def __enter__(self):
        self._context = torch.cuda.graph(self.graph, pool=self.pool)
        self._context.__enter__()
        return self

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)


def capture_graph(step=None, *, warmup=3, pool=None):
    """``g = capture_graph(step)`` runs ``step()`` `warmup` times on a side stream (so
    lazy initialisation, NVRTC compiles and allocator growth happen outside the capture;
    on the paths the capture takes, Note [Warming up for a capture] in _reroute.py),
    captures one more call, and returns a CapturedGraph; ``with capture_graph() as g:``
    captures the block (warm it up yourself). Allocations inside come from the graph's
    private pool (``pool`` shares one between graphs)."""
    if step is not None and not callable(step):
        raise TypeError(f"capture_graph takes a callable step, got {type(step).__name__}")
    handle = CapturedGraph(pool)
    if step is None:
        return handle
    from ._reroute import warming_for_capture

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), warming_for_capture():
        for _ in range(warmup):
            step()
    torch.cuda.current_stream().wait_stream(side)
    with handle:
        handle.outputs = step()
    return handle


# ---- allocator -----------------------------------------------------------------------------

_ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int,
                         ctypes.c_void_p)


class _Blocks:
    """The xpuruntime tensors that back torch's blocks, by address."""

    def __init__(self):
        self.live = {}
        self.lock = threading.Lock()

    def alloc(self, size, device, stream):
        from ...runtime._streams import ExternalStream

        try:
            with ExternalStream(stream or 0, device=f"cuda:{device}"):
                t = _core.empty((max(int(size), 1),), dtype=_core.uint8, device=f"cuda:{device}")
        except Exception:  # noqa: BLE001 (an exception cannot cross into torch's C++)
            return 0
        ptr = t._data_ptr()
        with self.lock:
            self.live[ptr] = t
        return ptr

    def free(self, ptr, size, device, stream):
        with self.lock:
            self.live.pop(ptr, None)


_blocks = _Blocks()
_callbacks = (_ALLOC(_blocks.alloc), _FREE(_blocks.free))  # alive for the process
_pool = {}
_active = {}


def _allocator():
    from torch.cuda.memory import _CUDAAllocator

    alloc_ptr = ctypes.cast(_callbacks[0], ctypes.c_void_p).value
    free_ptr = ctypes.cast(_callbacks[1], ctypes.c_void_p).value
    return _CUDAAllocator(torch._C._cuda_customAllocator(alloc_ptr, free_ptr))


def set_allocator(enabled=True, device=None):
    """``set_allocator(True)``: from now on, torch's allocations on this thread and device
    come from xpuruntime's caching allocator (a ``torch.cuda.MemPool`` over it, entered
    with ``torch.cuda.use_mem_pool``); ``set_allocator(False)`` goes back to torch's.

    Callable at any time (no global allocator swap, which torch allows only before its
    first CUDA allocation). What it covers: the calling thread only (torch's autograd
    engine allocates backward buffers on its own threads, from torch's allocator), and
    not CUDA graph captures (they use the graph's pool). Tensors made while it was on stay
    valid after it is turned off. Each allocation crosses into Python (a few µs)."""
    device = torch.cuda.current_device() if device is None else torch.device(device).index
    key = (threading.get_ident(), device)
    if enabled:
        if key in _active:
            return
        pool = _pool.get(device)
        if pool is None:
            pool = _pool[device] = torch.cuda.MemPool(_allocator().allocator())
        context = torch.cuda.use_mem_pool(pool, device=device)
        context.__enter__()
        _active[key] = context
    else:
        context = _active.pop(key, None)
        if context is not None:
            context.__exit__(None, None, None)


def allocator_stats():
    """(blocks, bytes) torch holds from xpuruntime's allocator now."""
    with _blocks.lock:
        return len(_blocks.live), sum(int(t.size) for t in _blocks.live.values())


# ---- profile -------------------------------------------------------------------------------


@contextlib.contextmanager
def profile(export_chrome_trace=None, xpuruntime=True, **profiler_options):
    """``with profile(export_chrome_trace="trace.json") as p:`` torch.profiler over CPU and
    CUDA, xpuruntime's profiler over the same block, and xpuruntime's kernel decisions.

    Afterwards ``p`` is torch's profile, with ``p.xpuruntime`` (xpuruntime's profile: its
    ops with the kernel chosen and why, syncs, copies, allocations; None with
    ``xpuruntime=False``, e.g. inside another xpuruntime profile, since profiles do not
    nest) and ``p.decisions``. The exported trace holds torch's events and ours on one clock
    (``xpuruntime.profiler.merge_torch_trace``), and the decisions in its metadata
    (``xpuruntime_decisions``). Other keyword arguments go to ``torch.profiler.profile``."""
    from ...profiler import merge_torch_trace
    from ...profiler import profile as xrt_profile

    activities = profiler_options.pop("activities", [
        torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
    ours = xrt_profile() if xpuruntime else None
    with torch.profiler.profile(activities=activities, **profiler_options) as prof, \
            explain() as log:
        if ours is not None:
            ours.start()
        try:
            yield prof
        finally:
            if ours is not None:
                ours.stop()
    prof.decisions = [str(r) for r in log.records]
    prof.xpuruntime = ours
    if export_chrome_trace:
        # Note: torch takes metadata only while it profiles; the decisions are known after
        # the block, so they are written into the exported trace.
        path = str(export_chrome_trace)
        prof.export_chrome_trace(path)
        if ours is not None:
            trace = merge_torch_trace(ours, path)
        else:
            with open(path) as f:
                trace = json.load(f)
        trace["xpuruntime_decisions"] = prof.decisions
        with open(path, "w") as f:
            json.dump(trace, f)
