"""python/xpuruntime/_array_api/_tensor.py: the Tensor methods that are Python by nature
(printing, NumPy's __array__, __array_namespace__, pickling and copying, len, iteration,
tolist and item). The operators and everything on a hot path are C++
(cpp/bindings/bind_tensor.cpp)."""

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


def _host_values(t):
    """The values as a NumPy array on the host, for printing and tolist. bfloat16 becomes
    float32 exactly (its bits are the top half of a float32's), so no ml_dtypes is needed."""
    import numpy as np

    if t.device.type != "cpu":
        t = t.to_device("cpu")
    if t.dtype == _core.bfloat16:
        bits = np.from_dlpack(t._reinterpret(_core.uint16)).astype(np.uint32)
        return (bits << 16).view(np.float32)
    return np.asarray(t)  # the buffer protocol (Note [Tensor buffers])


def _describe(t, error):
    # A tensor that cannot be read (a failed device, ...) still prints, and says why.
    return (f"<Tensor of shape {tuple(t.shape)}, dtype={t.dtype}, device='{t.device}': "
            f"values unavailable ({type(error).__name__}: {error})>")


def __repr__(self):
    import numpy as np

    try:
        values = _host_values(self)
    except Exception as e:  # repr never raises
        return _describe(self, e)
    prefix = "Tensor("
    body = np.array2string(values, separator=", ", prefix=prefix, threshold=1000)
    extra = f", dtype={self.dtype}"
    if self.device.type != "cpu":
        extra += f", device='{self.device}'"
    return f"{prefix}{body}{extra})"


def __str__(self):
    import numpy as np

    try:
        values = _host_values(self)
    except Exception as e:  # str never raises
        return _describe(self, e)
    return np.array2string(values, threshold=1000)


def __format__(self, spec):
    """format(t, ".3f"): a 0-d tensor formats as its Python scalar; a larger one formats
    every element with the spec, laid out as str() lays it out."""
    if not spec:
        return str(self)
    if self.ndim == 0:
        return format(self.item(), spec)
    import numpy as np

    return np.array2string(_host_values(self), threshold=1000,
                           formatter={"all": lambda v: format(v.item(), spec)})


def tolist(self):
    """The values as nested Python lists of Python scalars (a 0-d tensor: the scalar)."""
    return _host_values(self).tolist()


def item(self):
    """The one element as a Python scalar (bool, int, float or complex); ValueError when the
    tensor has more or fewer than one element."""
    if self.size != 1:
        raise ValueError(f"item() needs a tensor of exactly one element, got shape "
                         f"{tuple(self.shape)}")
    return self._item()  # C++, as float(x) reads it: no NumPy array on the way


def __len__(self):
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


def __iter__(self):
    """Rows along the first axis, as NumPy iterates; TypeError for a 0-d tensor."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


def _rebuild(data, dtype_name, shape, device):
    """Unpickles a tensor: the bytes (C order), onto the device it was pickled from."""
    import numpy as np

    dt = getattr(_core, dtype_name)
    host_dtype = _core.uint16 if dt == _core.bfloat16 else dt
    values = np.frombuffer(bytearray(data), dtype=str(host_dtype)).reshape(shape)
    t = _core.asarray(values, copy=True)
    if dt == _core.bfloat16:
        t = t._reinterpret(_core.bfloat16)
    return t if device == "cpu" else t.to_device(device)


def __reduce__(self):
    """Pickles the values (copied to the host) and the device; unpickling puts them back on
    that device (a CUDA tensor needs CUDA where it is unpickled, as in PyTorch)."""
    t = self._reinterpret(_core.uint16) if self.dtype == _core.bfloat16 else self
    data = _host_values(t).tobytes()  # C order whatever the strides
    return (_rebuild, (data, str(self.dtype), tuple(self.shape), str(self.device)))


def __copy__(self):
    # As NumPy's copy.copy(array): new memory, same device and dtype.
    return _core.asarray(self, copy=True)


def __deepcopy__(self, memo):
    return _core.asarray(self, copy=True)


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
    T.__format__ = __format__
    T.__len__ = __len__
    T.__iter__ = __iter__
    T.__reduce__ = __reduce__
    T.__copy__ = __copy__
    T.__deepcopy__ = __deepcopy__
    T.tolist = tolist
    T.item = item
    T.__array_namespace__ = __array_namespace__
    T.__array_ufunc__ = None  # NumPy defers to our reflected operators
    T.__array_priority__ = 1000
    # Last: setting a dunder method hands its slot back to CPython's generic wrapper.
    _core._install_operator_slots()  # Note [Operator slots]
