"""python/xpuruntime/_array_api/_tensor.py: the Tensor methods that are Python by nature
(printing, NumPy's __array__, __array_namespace__). The operators and everything on a hot path are
C++ (cpp/bindings/bind_tensor.cpp)."""

import sys

from .. import _core
from ._dtypes import dtype_to_numpy


def _to_numpy(t, copy=None):
    import numpy as np

    if t.device.type != "cpu":  # one copy to the host, in order on the current stream
        t, copy = t.to_device("cpu"), False
    if t.dtype == _core.bfloat16:
        raw = np.from_dlpack(t._reinterpret(_core.uint16))
        out = raw.view(dtype_to_numpy(_core.bfloat16))
    else:
        out = np.from_dlpack(t)
    return out.copy() if copy else out


def __array__(self, dtype=None, copy=None):
    """Zero-copy NumPy view on CPU (np.asarray(tensor)); TypeError for a device tensor.

    Note: NumPy calls this wherever it meets a tensor (np.asarray, np.sum(x), x == array), so
    a device tensor would cross to the host without anyone asking; as in PyTorch and CuPy, it
    refuses, whatever ``copy`` says, and names the explicit copy.
    """
    if self.device.type != "cpu":
        raise TypeError(f"cannot convert a tensor on {self.device} to a NumPy array implicitly: "
                        f"copy it to the host first with x.to_device(\"cpu\")")
    out = _to_numpy(self, copy=copy)
    if dtype is not None and out.dtype != dtype:
        if copy is False:
            raise ValueError("converting to another dtype needs a copy")
        out = out.astype(dtype)
    return out


def __repr__(self):
    import numpy as np

    values = _to_numpy(self)
    if self.dtype == _core.bfloat16:
        values = values.astype(np.float32)
    prefix = "Tensor("
    body = np.array2string(values, separator=", ", prefix=prefix, threshold=1000)
    extra = f", dtype={self.dtype}"
    if self.device.type != "cpu":
        extra += f", device='{self.device}'"
    return f"{prefix}{body}{extra})"


def __str__(self):
    import numpy as np

    values = _to_numpy(self)
    if self.dtype == _core.bfloat16:
        values = values.astype(np.float32)
    return np.array2string(values, threshold=1000)


def __array_namespace__(self, /, *, api_version=None):
    if api_version is not None and api_version not in ("2023.12", "2024.12", "2025.12"):
        raise ValueError(f"unsupported Array API version {api_version!r}")
    return sys.modules["xpuruntime"]


def _install():
    from . import _signatures

    T = _core.Tensor
    _signatures.install_methods(T, _signatures.TENSOR_METHODS)
    T.__array__ = __array__
    T.__repr__ = __repr__
    T.__str__ = __str__
    T.__array_namespace__ = __array_namespace__
    T.__array_ufunc__ = None  # NumPy defers to our reflected operators
    T.__array_priority__ = 1000
