"""python/xpuruntime/_array_api/_dtypes.py: dtype conversion to and from NumPy, and
result_type."""

from .. import _core

_ALL = [_core.bool, _core.int8, _core.int16, _core.int32, _core.int64, _core.uint8,
        _core.uint16, _core.uint32, _core.uint64, _core.float16, _core.bfloat16,
        _core.float32, _core.float64, _core.complex64, _core.complex128]
_BY_NAME = {str(d): d for d in _ALL}


def _bfloat16_numpy():
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError("NumPy has no bfloat16; install ml_dtypes to convert bfloat16 "
                        "(pip install ml_dtypes)") from None
    import numpy as np

    return np.dtype(ml_dtypes.bfloat16)


def dtype(value):
    """The xpuruntime dtype for a dtype, a name ('float32') or a NumPy dtype."""
    if isinstance(value, _core.DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    return dtype_from_numpy(value)


def dtype_from_numpy(np_dtype):
    import numpy as np

    try:
        d = np.dtype(np_dtype)
    except TypeError:
        raise TypeError(f"not a dtype: {np_dtype!r}") from None
    if d.name == "bfloat16":
        return _core.bfloat16
    name = "bool" if d == np.bool_ else d.name
    if d.byteorder == ">" or name not in _BY_NAME:
        raise TypeError(f"NumPy dtype {d} has no xpuruntime equivalent")
    return _BY_NAME[name]


def dtype_to_numpy(dt):
    import numpy as np

    if dt == _core.bfloat16:
        return _bfloat16_numpy()
    return np.dtype(str(dt))


def result_type(*arrays_and_dtypes):
    """The standard's result_type; Python scalars take part per the scalar rules."""
    if not arrays_and_dtypes:
        raise ValueError("result_type needs at least one array or dtype")
    dtypes, scalars = [], []
    for a in arrays_and_dtypes:
        if isinstance(a, _core.DType):
            dtypes.append(a)
        elif isinstance(a, _core.Tensor):
            dtypes.append(a.dtype)
        elif isinstance(a, (bool, int, float, complex)):
            scalars.append(a)
        else:
            raise TypeError(f"result_type: expected arrays, dtypes or Python scalars, got {a!r}")
    if not dtypes:
        raise ValueError("result_type needs at least one array or dtype")
    out = dtypes[0]
    for d in dtypes[1:]:
        out = _core.result_type_of(out, d)
    for s in scalars:
        out = _core.scalar_result_type_of(out, s)
    return out
