"""python/xpuruntime/_array_api/_data_type_functions.py: the standard's data type functions
(finfo, iinfo, can_cast, isdtype); result_type lives in _dtypes.py."""

from dataclasses import dataclass

from .. import _core

_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64,
             "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}

# bits, eps, max, smallest_normal; min is -max. float16 and bfloat16 are written out
# because Python's float cannot describe them.
_FLOAT_LIMITS = {
    "float16": (16, 2.0**-10, 65504.0, 2.0**-14),
    "bfloat16": (16, 2.0**-7, float.fromhex("0x1.fep127"), 2.0**-126),
    "float32": (32, 2.0**-23, float.fromhex("0x1.fffffep127"), 2.0**-126),
    "float64": (64, 2.0**-52, float.fromhex("0x1.fffffffffffffp1023"), 2.0**-1022),
}


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: _core.DType


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: _core.DType


# Python's own types name the default dtypes here as everywhere a dtype is taken (Note
# [Python types as dtypes] in cpp/bindings/module.cpp).
_PYTHON_TYPES = {bool: _core.bool, int: _core.int64, float: _core.float64,
                 complex: _core.complex128}


def _dtype_of(value, function):
    if isinstance(value, _core.DType):
        return value
    if isinstance(value, _core.Tensor):
        return value.dtype
    if isinstance(value, type) and value in _PYTHON_TYPES:
        return _PYTHON_TYPES[value]
    raise TypeError(f"{function}: expected a dtype or an array, got {type(value).__name__}")


def finfo(type, /):
    """Machine limits of a floating-point dtype (of the components, for complex)."""
    d = _dtype_of(type, "finfo")
    name = {"complex64": "float32", "complex128": "float64"}.get(d.name, d.name)
    if name not in _FLOAT_LIMITS:
        raise TypeError(f"finfo: {d.name} is not a floating-point dtype")
    bits, eps, fmax, tiny = _FLOAT_LIMITS[name]
    return finfo_object(bits, eps, fmax, -fmax, tiny, getattr(_core, name))


def iinfo(type, /):
    """Machine limits of an integer dtype."""
    d = _dtype_of(type, "iinfo")
    bits = _INT_BITS.get(d.name)
    if bits is None:
        raise TypeError(f"iinfo: {d.name} is not an integer dtype")
    if d.name.startswith("u"):
        return iinfo_object(bits, 2**bits - 1, 0, d)
    return iinfo_object(bits, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), d)


def can_cast(from_, to, /):
    """Whether from_ promotes to `to` by the standard's promotion rules."""
    source = _dtype_of(from_, "can_cast")
    to = _PYTHON_TYPES.get(to, to) if isinstance(to, type) else to
    if not isinstance(to, _core.DType):
        raise TypeError(f"can_cast: to must be a dtype, got {type(to).__name__}")
    try:
        return _core.result_type_of(source, to) == to
    except TypeError:
        return False


# Note: float16 and bfloat16 belong to 'real floating' (the standard allows extending the
# kinds), so code asking isdtype(x.dtype, 'real floating') accepts them.
_KINDS = {
    "bool": ("bool",),
    "signed integer": ("signed integer",),
    "unsigned integer": ("unsigned integer",),
    "integral": ("signed integer", "unsigned integer"),
    "real floating": ("real floating",),
    "complex floating": ("complex floating",),
    "numeric": ("signed integer", "unsigned integer", "real floating", "complex floating"),
}


def isdtype(dtype, kind):
    """Whether dtype is kind: a dtype, one of the standard's kind names, or a tuple of them."""
    dtype = _PYTHON_TYPES.get(dtype, dtype) if isinstance(dtype, type) else dtype
    if not isinstance(dtype, _core.DType):
        raise TypeError(f"isdtype: expected a dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _core.DType):
        return dtype == kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KINDS)}")
        return dtype.kind in _KINDS[kind]
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple, got {kind!r}")
