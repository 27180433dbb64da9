"""python/xpuruntime/runtime/_device.py: the device API of the design documents.

``Device`` is the native value type (``cpp/bindings/module.cpp``), the one every ``device=``
argument accepts and ``x.device`` returns; this module gives it what a user asks of a device
(``name``, ``total_memory``, ``compute_capability``, ``supports_fp16/bf16/int8``,
``synchronize()``) and adds the functions over all devices. Properties are looked up when read,
so a Device stays a plain (type, index) pair that costs nothing to make.

Note [Current device]: the current device is the accelerator that ``device=None`` means in
``synchronize()`` and in ``xrt.cuda``'s calls: the calling thread's current CUDA device, as in
``torch.accelerator``; on a machine without one it is the CPU. Where new tensors go is a
separate choice, ``set_default_device`` (the CPU unless set), as the Array API asks.
"""

import os

from .. import _core
from .._core import Device

__all__ = [
    "Device",
    "DeviceManager",
    "get_all_devices",
    "get_current_device",
    "get_device_count",
    "set_current_device",
    "synchronize",
]

_CPU = Device("cpu")


def _cuda_available():
    return _core._cuda.status()["available"]


def _as_device(device):
    """A Device from a Device, an int (a CUDA index) or a string."""
    if isinstance(device, Device):
        return device
    if isinstance(device, (int, str)) and not isinstance(device, bool):
        return Device(device)
    raise TypeError(f"device must be a Device, an int or a string, not {type(device).__name__}")


def get_device_count():
    """How many CUDA devices this process can use (0 without a GPU or a driver)."""
    status = _core._cuda.status()
    return status["device_count"] if status["available"] else 0


def get_all_devices():
    """Every device this process can use: the CPU first, then each CUDA device."""
    return [_CPU] + [Device(i) for i in range(get_device_count())]


def get_current_device():
    """The calling thread's current accelerator, the CPU when there is none
    (Note [Current device])."""
    if not _cuda_available():
        return _CPU
    return Device(_core._cuda.current_device())


def set_current_device(device):
    """Makes device (a Device, "cuda:N" or N) the calling thread's current accelerator.

    "cpu" is accepted only where it is the current device already (no accelerator): a thread
    cannot leave its CUDA device; ``set_default_device("cpu")`` chooses where new tensors go.
    """
    device = _as_device(device)
    if device.type == "cpu":
        if get_current_device() != _CPU:
            raise ValueError("the CPU cannot be the current device while CUDA devices are "
                             "present; use set_default_device('cpu') to allocate on the CPU")
        return
    _core._cuda.set_device(device)


def synchronize(device=None):
    """Waits until all work queued on device (the current device by default) has finished.

    The CPU's ops finish before they return, so there is nothing to wait for; on CUDA the
    wait releases the GIL.
    """
    device = get_current_device() if device is None else _as_device(device)
    if device.type != "cpu":
        _core._cuda.synchronize(device)


# ---- What a Device tells about itself -------------------------------------------------------


def _cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "cpu"


def _cpu_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 0


def _properties(device):
    # CudaError saying why when CUDA is unusable or the index does not exist.
    return _core._cuda.get_device_properties(device)


def _name(self):
    """The device's name: the GPU's ("NVIDIA H100 80GB HBM3"), or the CPU's model."""
    return _cpu_name() if self.type == "cpu" else _properties(self).name


def _total_memory(self):
    """Bytes of memory: the GPU's, or the machine's physical memory for the CPU."""
    return _cpu_memory() if self.type == "cpu" else _properties(self).total_memory


def _compute_capability(self):
    """(major, minor) of a CUDA device; None for the CPU."""
    return None if self.type == "cpu" else _properties(self).compute_capability


# Note: on the CPU, float16, bfloat16 and int8 are computed by xpuruntime's own kernels
# (float16/bfloat16 through float32), so the CPU supports all three; on CUDA the answer is the
# device's arithmetic (fp16 from sm_53, bf16 from sm_80, int8 dot products from sm_61).
def _supports(feature):
    def supports(self):
        return True if self.type == "cpu" else getattr(_properties(self), feature)

    supports.__name__ = feature
    supports.__doc__ = f"Whether the device computes {feature[len('supports_'):]} natively."
    return supports


def _synchronize(self):
    """Waits until all work queued on this device has finished (see ``synchronize``)."""
    synchronize(self)


def _install():
    Device.name = property(_name)
    Device.total_memory = property(_total_memory)
    Device.compute_capability = property(_compute_capability)
    for feature in ("supports_fp16", "supports_bf16", "supports_int8"):
        setattr(Device, feature, property(_supports(feature)))
    Device.synchronize = _synchronize


_install()


class DeviceManager:
    """The design documents' device manager: ``DeviceManager.instance()`` gives the one
    instance, whose methods are this module's functions."""

    _instance = None

    @classmethod
    def instance(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    get_device_count = staticmethod(get_device_count)
    get_all_devices = staticmethod(get_all_devices)
    get_current_device = staticmethod(get_current_device)
    set_current_device = staticmethod(set_current_device)
    synchronize = staticmethod(synchronize)

    def __repr__(self):
        return f"DeviceManager(devices={get_all_devices()})"
