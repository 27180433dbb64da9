"""python/xpuruntime/inference/native/ops/_common.py: what the op families share: reading
host integers, normalising axes, the dtype of an ONNX type code, errors that name the node."""

import numpy as np

from .... import _core
from ..._types import DTYPE_OF_ONNX, onnx_type_name


def host_ints(t):
    """The values of a small integer tensor that lives on the host, as a tuple of ints."""
    return tuple(int(v) for v in np.asarray(t).reshape(-1))


class HostInts:
    """host_ints that remembers the last tensor it read. A plan's constants (and, with
    static shapes, its frozen shape values) are the same objects on every run, so a node
    reading one converts it once; values computed in the run are new objects and are read
    afresh. The (tensor, value) pair is one attribute: one assignment, so threads running
    the same plan never see a tensor with another's value."""

    __slots__ = ("_last",)

    def __init__(self):
        self._last = (None, None)

    def __call__(self, t):
        last = self._last
        if last[0] is t:
            return last[1]
        value = host_ints(t)
        self._last = (t, value)
        return value


def host_scalar(t):
    """The single value of a host tensor (a Range's start, a ConstantOfShape's fill)."""
    return np.asarray(t).reshape(-1)[0].item()


def axis_of(axis, ndim, node):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"node {node.name!r} ({node.op_type}): axis {axis} is out of range "
                         f"for a tensor of rank {ndim}")
    return axis + ndim if axis < 0 else axis


def dtype_of(code, node):
    dtype = DTYPE_OF_ONNX.get(code)
    if dtype is None:
        raise node.unsupported(f"element type {onnx_type_name(code)} has no xpuruntime dtype")
    return dtype


def is_float(dtype):
    return dtype in (_core.float16, _core.bfloat16, _core.float32, _core.float64)


def is_integer(dtype):
    return dtype in (_core.int8, _core.int16, _core.int32, _core.int64, _core.uint8,
                     _core.uint16, _core.uint32, _core.uint64)
