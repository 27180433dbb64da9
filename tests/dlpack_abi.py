"""tests/dlpack_abi.py: the DLPack C structs in ctypes, to look inside capsules
and to build hand-made ones (for import errors no library would produce)."""

import ctypes

VERSIONED = "dltensor_versioned"
LEGACY = "dltensor"
READ_ONLY, IS_COPIED = 1 << 0, 1 << 1
CPU, CUDA, OPENCL = 1, 2, 4
INT, UINT, FLOAT, OPAQUE, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 3, 4, 5, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


# Fresh prototypes rather than ctypes.pythonapi attributes: setting restype on
# those would change them for every other user in the process.
_api = ctypes.pythonapi
_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", _api))
_get_pointer = ctypes.PYFUNCTYPE(
    ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
_new = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", _api))


def capsule_name(capsule):
    return _get_name(capsule).decode()


def managed(capsule):
    """The DLManagedTensor(Versioned) inside an unused capsule; valid while
    the capsule lives."""
    name = capsule_name(capsule)
    struct = DLManagedTensorVersioned if name == VERSIONED else DLManagedTensor
    return struct.from_address(_get_pointer(capsule, name.encode()))


def shape_and_strides(dl_tensor):
    """(shape, strides in elements or None when the producer left them out)."""
    shape = tuple(dl_tensor.shape[i] for i in range(dl_tensor.ndim))
    if not dl_tensor.strides:
        return shape, None
    return shape, tuple(dl_tensor.strides[i] for i in range(dl_tensor.ndim))


class HandMade:
    """A capsule over `array`'s memory with any header we like. Keep this
    object alive as long as anything may read the memory; the deleter is NULL
    (allowed by the DLPack header), so nothing is ever freed through it."""

    def __init__(self, array, *, dtype=(FLOAT, 32, 1), device=(CPU, 0),
                 version=(1, 0), flags=0, versioned=True, ndim=None):
        self.array = array
        ndim = array.ndim if ndim is None else ndim
        self.shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        strides = [s // array.itemsize for s in array.strides]
        self.strides = (ctypes.c_int64 * max(array.ndim, 1))(*strides)
        tensor = DLTensor(array.ctypes.data, DLDevice(*device), ndim,
                          DLDataType(*dtype), self.shape, self.strides, 0)
        if versioned:
            self.struct = DLManagedTensorVersioned(
                DLPackVersion(*version), None, None, flags, tensor)
            name = VERSIONED
        else:
            self.struct = DLManagedTensor(tensor, None, None)
            name = LEGACY
        self.name = name.encode()  # PyCapsule keeps only the pointer
        self.capsule = _new(ctypes.addressof(self.struct), self.name, None)
