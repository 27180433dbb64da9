"""python/xpuruntime/_array_api/_info.py: __array_namespace_info__, the standard's inspection
API."""

from .. import _core

_STANDARD_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64", "complex64", "complex128")


class Info:
    """What this namespace supports (the standard's inspection namespace)."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return _core.get_default_device()

    def default_dtypes(self, *, device=None):
        self._check_device(device)
        return {"real floating": _core.float64, "complex floating": _core.complex128,
                "integral": _core.int64, "indexing": _core.int64}

    def dtypes(self, *, device=None, kind=None):
        # Note: float16 and bfloat16 are supported but are not Array API dtypes, and the
        # standard forbids listing them here.
        from ._data_type_functions import isdtype

        self._check_device(device)
        out = {}
        for name in _STANDARD_DTYPES:
            d = getattr(_core, name)
            if kind is None or isdtype(d, kind):
                out[name] = d
        return out

    def devices(self):
        from ..runtime import get_all_devices

        return tuple(get_all_devices())

    def _check_device(self, device):
        if device is not None and not isinstance(device, (_core.Device, str)):
            raise TypeError(f"expected a device, got {type(device).__name__}")


def __array_namespace_info__():
    return Info()
