"""python/xpuruntime/cuda.py: is CUDA usable here, and if not, why."""

from . import _core


def status():
    """What the run-time probe found: driver, NVRTC, cuBLAS, devices."""
    return _core.cuda_status()


def is_available():
    return _core.cuda_status()["available"]


def why_unavailable():
    """A sentence saying why CUDA cannot be used ('' when it can)."""
    return _core.cuda_status()["reason"]


def device_count():
    return _core.cuda_status()["device_count"] if is_available() else 0


# ---- Memory (the caching allocator, pinned memory): see _memory.py ----
from ._memory import *  # noqa: E402,F401,F403
