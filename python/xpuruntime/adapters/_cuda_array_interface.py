"""python/xpuruntime/adapters/_cuda_array_interface.py: the CUDA Array Interface (version 3)
both ways, for Numba, cuDF and the libraries that speak it rather than DLPack.

- Export: ``Tensor.__cuda_array_interface__`` on CUDA tensors (AttributeError on the CPU, so
  ``hasattr`` answers as consumers expect). ``stream`` is the current stream of the tensor's
  device, where its pending writes are queued (the legacy default stream is 1, as the
  protocol says); the consumer waits on it.
- Import: ``from_cuda_array_interface(obj)`` wraps the memory without a copy, keeping obj
  alive, and makes the current stream wait for the producer's ``stream`` first.
- Note: the protocol names no device; the memory is taken to be on the current CUDA device,
  as Numba does.
"""

import numpy as np

from .. import _core


def _typestr(dtype):
    if dtype == _core.bfloat16:
        raise TypeError("bfloat16 has no __cuda_array_interface__ type string; use DLPack")
    return np.dtype(dtype.name).str


def cuda_array_interface(t):
    """The ``__cuda_array_interface__`` dict of CUDA tensor t."""
    if t.device.type != "cuda":
        raise AttributeError("__cuda_array_interface__ is defined for CUDA tensors only "
                             f"(this one is on {t.device})")
    item = t.dtype.itemsize
    contiguous = t._is_contiguous()
    stream = _core._cuda.current_stream(t.device).ptr
    return {
        "shape": t.shape,
        "typestr": _typestr(t.dtype),
        "data": (t._data_ptr() if t.size else 0, t._is_readonly()),
        "version": 3,
        "strides": None if contiguous else tuple(s * item for s in t.strides),
        "descr": [("", _typestr(t.dtype))],
        "stream": stream if stream != 0 else 1,
    }


def from_cuda_array_interface(obj):
    """A Tensor over the memory of obj's ``__cuda_array_interface__`` (no copy)."""
    cai = obj.__cuda_array_interface__
    if not isinstance(cai, dict) or cai.get("version", 0) > 3:
        raise ValueError(f"unsupported __cuda_array_interface__: {cai!r:.200}")
    if cai.get("mask") is not None:
        raise ValueError("masked __cuda_array_interface__ arrays are not supported")
    dtype = np.dtype(cai["typestr"])
    name = "bfloat16" if dtype.str == "<V2" else dtype.name
    if not hasattr(_core, name) or dtype.byteorder == ">":
        raise TypeError(f"__cuda_array_interface__ type {cai['typestr']!r} has no xpuruntime "
                        f"dtype")
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        steps, step = [], 1
        for n in reversed(shape):
            steps.append(step)
            step *= n
        steps = tuple(reversed(steps))
    else:
        if any(s % dtype.itemsize for s in strides):
            raise ValueError("__cuda_array_interface__ strides must be whole elements")
        steps = tuple(int(s) // dtype.itemsize for s in strides)
    ptr, readonly = cai["data"]
    device = f"cuda:{_core._cuda.current_device()}"
    stream = cai.get("stream")
    if stream is not None:
        if stream == 0:
            raise ValueError("__cuda_array_interface__ stream 0 is disallowed by the protocol")
        current = _core._cuda.current_stream(device)
        if current.ptr != stream:
            current.wait_stream(_core._cuda.ExternalStream(int(stream)))
    return _core._from_pointer(int(ptr or 0), shape, steps, getattr(_core, name), device, obj,
                               bool(readonly))


def install():
    _core.Tensor.__cuda_array_interface__ = property(cuda_array_interface)
