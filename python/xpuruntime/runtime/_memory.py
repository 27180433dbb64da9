"""python/xpuruntime/runtime/_memory.py: CUDA memory: the allocator, its statistics, pinned
memory.

The functions carry PyTorch's names (``torch.cuda.memory_stats`` and friends) and keys, so
code and habits carry over. ``device`` is None (the current device), an int, "cuda:N" or a
``Device``.
"""

from .. import _core

__all__ = [
    "empty_cache",
    "empty_pinned",
    "get_allocator",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_summary",
    "pinned_memory_stats",
    "record_stream",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_allocator",
    "set_per_process_memory_fraction",
    "set_per_process_memory_limit",
]


def _device_index(device):
    """-1 (the current device) for None, else the index of a CUDA device."""
    if device is None:
        return -1
    if isinstance(device, bool):
        raise TypeError("device must be None, an int, a string or a Device, not bool")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"a CUDA device index is >= 0, got {device}")
        return device
    if isinstance(device, str):
        device = _core.Device(device)
    if isinstance(device, _core.Device):
        if device.type != "cuda":
            raise ValueError(f"expected a CUDA device, got {device}")
        return device.index
    raise TypeError(f"device must be None, an int, a string or a Device, "
                    f"not {type(device).__name__}")


def memory_stats(device=None):
    """The allocator's counters as a dict with PyTorch's keys, sorted.

    ``allocated_bytes.all.current`` is what live tensors hold (sizes rounded to 512 bytes),
    ``reserved_bytes.all.current`` what the allocator holds from the driver;
    ``.peak``, ``.allocated`` and ``.freed`` are the high-water mark and the running totals.
    ``num_alloc_retries`` counts OOMs recovered by freeing the cache, ``num_ooms`` the
    OutOfMemoryErrors raised.
    """
    stats = _core._cuda.memory_stats(_device_index(device))
    return dict(sorted(stats.items()))


def memory_summary(device=None):
    """A readable table of memory_stats()."""
    return _core._cuda.memory_summary(_device_index(device))


def memory_snapshot(device=None):
    """The caching allocator's segments and their blocks (address, size, state)."""
    return _core._cuda.memory_snapshot(_device_index(device))


def memory_allocated(device=None):
    """Bytes held by live tensors on device."""
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device=None):
    """The peak of memory_allocated() since start or reset_peak_memory_stats()."""
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device=None):
    """Bytes the allocator holds from the driver (live tensors and its cache)."""
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes.all.peak"]


def empty_cache():
    """Gives the memory no tensor uses back to the driver (every device, and pinned buffers)."""
    _core._cuda.empty_cache()


def reset_peak_memory_stats(device=None):
    """Peaks restart from the current values."""
    _core._cuda.reset_peak_memory_stats(_device_index(device))


def reset_accumulated_memory_stats(device=None):
    """The running totals (.allocated, .freed, num_*) restart from zero."""
    _core._cuda.reset_accumulated_memory_stats(_device_index(device))


def set_per_process_memory_fraction(fraction, device=None):
    """Caps what the allocator reserves on device at fraction (0, 1] of its memory.

    Past the cap an allocation frees the cache, retries, then raises OutOfMemoryError.
    """
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
        raise TypeError(f"fraction must be a float, not {type(fraction).__name__}")
    _core._cuda.set_memory_fraction(_device_index(device), float(fraction))


def set_per_process_memory_limit(nbytes, device=None):
    """Caps what the allocator reserves on device at nbytes (None or 0: no cap)."""
    if nbytes is None:
        nbytes = 0
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise TypeError(f"nbytes must be an int or None, not {type(nbytes).__name__}")
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    _core._cuda.set_memory_limit(_device_index(device), nbytes)


def set_allocator(kind):
    """Chooses the CUDA allocator: "caching" (the default) or "stream_ordered"
    (cuMemAllocAsync on each device's default pool). Only before the first CUDA
    allocation; the XPURUNTIME_CUDA_ALLOCATOR environment variable does the same."""
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a string, not {type(kind).__name__}")
    _core._cuda.set_allocator(kind)


def get_allocator():
    """"caching" or "stream_ordered"."""
    return _core._cuda.allocator()


def record_stream(tensor, stream):
    """Marks tensor as used on stream (a ``Stream``, any object with ``__cuda_stream__``,
    or a CUstream handle as int): its memory is reused only after the work queued there
    before the tensor is freed has run."""
    if not isinstance(stream, _core.Stream):
        if not hasattr(stream, "__cuda_stream__") and (
                isinstance(stream, bool) or not isinstance(stream, int)):
            raise TypeError("stream must be a Stream, have __cuda_stream__, or be a handle (int)")
        device = tensor.device if isinstance(tensor, _core.Tensor) else None
        stream = _core._cuda.ExternalStream(stream, device)
    _core._cuda.record_stream(tensor, stream)


def empty_pinned(shape, *, dtype=None, device=None):
    """A CPU tensor in pinned (page-locked) memory, for fast copies with device."""
    if dtype is None:
        dtype = _core.float32
    return _core._cuda.empty_pinned(shape, dtype, _device_index(device))


def pinned_memory_stats(device=None):
    """memory_stats() of the pinned host pool that serves device's copies."""
    return dict(sorted(_core._cuda.pinned_memory_stats(_device_index(device)).items()))


class MemoryManager:
    """The design documents' memory manager: ``MemoryManager.instance()`` gives the one
    instance, whose methods are this module's functions (``memory_stats(device=None)``,
    ``empty_cache()``, ...)."""

    _instance = None

    @classmethod
    def instance(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def __repr__(self):
        return "MemoryManager()"


for _name in __all__:
    setattr(MemoryManager, _name, staticmethod(globals()[_name]))
del _name
