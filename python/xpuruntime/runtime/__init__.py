"""python/xpuruntime/runtime/__init__.py: devices, streams, events and memory (``xrt.runtime``).

- ``_device.py``: ``Device`` and the device functions (count, list, current, synchronize),
  ``DeviceManager``; also at the top level of ``xpuruntime``.
- ``_cuda.py``: whether CUDA is usable and why not, its libraries' versions, its caches.
- ``_streams.py``: CUDA streams, events and graphs, until the device-neutral Stream and Event
  reach Python.
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

__all__ = [
    "Device",
    "DeviceManager",
    "MemoryManager",
    "get_all_devices",
    "get_current_device",
    "get_device_count",
    "set_current_device",
    "synchronize",
]
