"""python/xpuruntime/runtime/__init__.py: devices, streams, events and memory (``xrt.runtime``).

- ``_device.py``: ``Device`` and the device functions (count, list, current, synchronize),
  ``DeviceManager``; also at the top level of ``xpuruntime``.
- ``_cuda.py``: whether CUDA is usable and why not, its libraries' versions, its caches.
- ``Stream`` and ``Event`` are the device-neutral runtime types (a CPU stream is the host's
  program order; ``Stream("cuda:0")`` a CUDA stream), with ``current_stream``,
  ``default_stream`` and ``set_stream``.
- ``_streams.py``: the CUDA names of streams, events and graphs, for ``xrt.cuda``.
- ``_memory.py``: the CUDA allocator's statistics and limits, pinned memory, ``MemoryManager``.

``xrt.cuda`` (``cuda.py``) shows the CUDA parts under PyTorch's names.
"""

from ._device import (  # noqa: F401
    Device,
    DeviceManager,
    get_all_devices,
    get_current_device,
    get_device_count,
    set_current_device,
    synchronize,
)
from ._memory import MemoryManager  # noqa: F401
from .._core import Event, Stream, current_stream, default_stream, set_stream  # noqa: F401

__all__ = [
    "Device",
    "DeviceManager",
    "Event",
    "MemoryManager",
    "Stream",
    "current_stream",
    "default_stream",
    "get_all_devices",
    "get_current_device",
    "get_device_count",
    "set_current_device",
    "set_stream",
    "synchronize",
]
