"""python/xpuruntime/inference/native/ops/_common.py: what the op families share: reading
host integers, normalising axes, the dtype of an ONNX type code, errors that name the node."""

import numpy as np

from .... import _core
from ..._types import DTYPE_OF_ONNX, onnx_type_name


def host_ints(t):
    """The values of a small integer tensor that lives on the host, as a tuple of ints."""
    return tuple(int(v) for v in np.asarray(t).reshape(-1))


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
