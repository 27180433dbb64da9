"""python/xpuruntime/runtime/_streams.py: CUDA devices, streams, events and graphs.

Re-exported by ``xpuruntime.cuda``. Every call is asynchronous unless it says it waits;
waits release the GIL.
"""

from .._core import _cuda

DeviceInfo = _cuda.DeviceInfo
Stream = _cuda.Stream
Event = _cuda.Event
CUDAGraph = _cuda.CUDAGraph
ExternalStream = _cuda.ExternalStream
current_device = _cuda.current_device
set_device = _cuda.set_device
synchronize = _cuda.synchronize
get_device_properties = _cuda.get_device_properties
current_stream = _cuda.current_stream
default_stream = _cuda.default_stream
set_stream = _cuda.set_stream


class stream:
    """``with xpuruntime.cuda.stream(s):`` makes s (and its device) current for the calling
    thread and restores the previous ones on exit; ``stream(None)`` does nothing."""

    __slots__ = ("stream",)

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


_side_streams = {}


def _side_stream():
    # One capture stream per device, made once, as PyTorch does.
    device = current_device()
    s = _side_streams.get(device)
    if s is None:
        s = _side_streams[device] = Stream(device)
    return s


class graph:
    """``with xpuruntime.cuda.graph(g):`` captures the ops of the block into the CUDAGraph g
    (nothing runs; ``g.replay()`` runs them later).

    The capture happens on ``stream`` (a side stream of the current device by default: the
    default streams cannot be captured), which first waits for the current stream, so the
    inputs made before the block are ready. Allocations inside come from g's private pool.
    Host copies and host waits inside (``item()``, ``bool()``, ``to_device("cpu")``,
    ``synchronize()``) raise CudaError and leave the capture intact. An exception inside the
    block discards the partial capture.
    """

    def __init__(self, cuda_graph, stream=None, capture_error_mode="global"):
        self.cuda_graph = cuda_graph
        self.capture_stream = stream if stream is not None else _side_stream()
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        s = self.capture_stream
        s.wait_stream(current_stream(s.device))
        s.__enter__()
        try:
            self.cuda_graph.capture_begin(capture_error_mode=self.capture_error_mode)
        except BaseException:
            s.__exit__(None, None, None)
            raise
        return self.cuda_graph

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph.reset()
        finally:
            self.capture_stream.__exit__(None, None, None)
        return False


__all__ = [
    "CUDAGraph", "DeviceInfo", "Event", "ExternalStream", "Stream", "current_device",
    "current_stream", "default_stream", "get_device_properties", "graph", "set_device",
    "set_stream", "stream", "synchronize",
]
