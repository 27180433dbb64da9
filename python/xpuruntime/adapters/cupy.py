"""python/xpuruntime/adapters/cupy.py: CuPy on xpuruntime's memory and streams.

- ``allocator(size)``: a ``cupy.cuda.MemoryPointer`` into xpuruntime's caching allocator
  (``UnownedMemory`` owning the Tensor that holds the block), for ``cupy.cuda.set_allocator``;
  ``use_xpuruntime_allocator()`` installs it, ``using_xpuruntime_allocator()`` for a block.
  The block is allocated on CuPy's current stream, which is where CuPy will use it, so the
  caching allocator's stream-ordered reuse stays right. Memory stats then count CuPy's
  arrays.
- ``to_cupy_stream(stream)`` / ``from_cupy_stream(stream)``: the same CUDA stream in the other
  library (no new stream), and ``shared_stream(stream)`` makes it current in both.
"""

import contextlib

from .. import _core


def _cupy():
    import cupy

    return cupy


def allocator(size):
    """size bytes from xpuruntime's allocator on CuPy's current device and stream."""
    cupy = _cupy()
    device = cupy.cuda.Device().id
    stream = _core._cuda.ExternalStream(cupy.cuda.get_current_stream().ptr,
                                        device=f"cuda:{device}")
    with stream:
        t = _core.empty((size,), dtype=_core.uint8, device=f"cuda:{device}")
    memory = cupy.cuda.UnownedMemory(t._data_ptr() if size else 0, size, t, device)
    return cupy.cuda.MemoryPointer(memory, 0)


def use_xpuruntime_allocator():
    """CuPy's memory comes from xpuruntime's caching allocator from now on."""
    _cupy().cuda.set_allocator(allocator)


def using_xpuruntime_allocator():
    """``with using_xpuruntime_allocator():`` the same, for the block (this thread)."""
    return _cupy().cuda.using_allocator(allocator)


def to_cupy_stream(stream=None):
    """stream (default: the current one) as a ``cupy.cuda.ExternalStream``."""
    if stream is None:
        stream = _core._cuda.current_stream(None)
    return _cupy().cuda.ExternalStream(stream.ptr, stream.device.index)


def from_cupy_stream(stream=None):
    """CuPy's stream (default: its current one) as an xpuruntime Stream."""
    cupy = _cupy()
    if stream is None:
        stream = cupy.cuda.get_current_stream()
    return _core._cuda.ExternalStream(stream.ptr, device=f"cuda:{stream.device_id}")


@contextlib.contextmanager
def shared_stream(stream):
    """``with shared_stream(s):`` s is the current stream of xpuruntime and CuPy alike."""
    with stream, to_cupy_stream(stream):
        yield stream
