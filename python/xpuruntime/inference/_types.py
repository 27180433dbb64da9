"""python/xpuruntime/inference/_types.py: ONNX element types <-> xpuruntime dtypes, as one
table every engine reads."""

from .. import _core

# TensorProto.DataType value, its name, the xpuruntime dtype (None: no such dtype here).
ONNX_TYPES = (
    (1, "float", _core.float32),
    (2, "uint8", _core.uint8),
    (3, "int8", _core.int8),
    (4, "uint16", _core.uint16),
    (5, "int16", _core.int16),
    (6, "int32", _core.int32),
    (7, "int64", _core.int64),
    (8, "string", None),
    (9, "bool", _core.bool),
    (10, "float16", _core.float16),
    (11, "double", _core.float64),
    (12, "uint32", _core.uint32),
    (13, "uint64", _core.uint64),
    (14, "complex64", _core.complex64),
    (15, "complex128", _core.complex128),
    (16, "bfloat16", _core.bfloat16),
)

DTYPE_OF_ONNX = {code: dtype for code, _, dtype in ONNX_TYPES}
ONNX_OF_DTYPE = {dtype: code for code, _, dtype in ONNX_TYPES if dtype is not None}
# ONNX Runtime spells types "tensor(float)".
ONNX_OF_ORT_NAME = {f"tensor({name})": code for code, name, _ in ONNX_TYPES}


def onnx_type_name(code):
    for c, name, _ in ONNX_TYPES:
        if c == code:
            return name
    return f"onnx type {code}"
