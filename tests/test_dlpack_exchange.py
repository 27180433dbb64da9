"""tests/test_dlpack_exchange.py: DLPack 1.3's C exchange API (__dlpack_c_exchange_api__):
our Tensor type's table, called from C (here through ctypes), and from_dlpack consuming a
producer's table (PyTorch's, or any type's) without calling __dlpack__."""

import ctypes

import numpy as np
import pytest
import xpuruntime as xrt
from dlpack_abi import (
    OPAQUE,
    DLManagedTensorVersioned,
    DLPackVersion,
    DLTensor,
    HandMade,
    _get_pointer,
    _new,
)

PyObj = ctypes.c_void_p


class Header(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("prev_api", ctypes.c_void_p)]


# Each function returns int and is called with the GIL held (PYFUNCTYPE): on failure it
# has set a Python exception.
FromPy = ctypes.PYFUNCTYPE(ctypes.c_int, PyObj, ctypes.POINTER(
    ctypes.POINTER(DLManagedTensorVersioned)))
ToPy = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned),
                         ctypes.POINTER(ctypes.c_void_p))
DLFromPy = ctypes.PYFUNCTYPE(ctypes.c_int, PyObj, ctypes.POINTER(DLTensor))
Stream = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                           ctypes.POINTER(ctypes.c_void_p))
SetError = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
Allocator = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor), ctypes.POINTER(
    ctypes.POINTER(DLManagedTensorVersioned)), ctypes.c_void_p, SetError)


class ExchangeAPI(ctypes.Structure):
    _fields_ = [("header", Header), ("managed_tensor_allocator", Allocator),
                ("managed_tensor_from_py_object_no_sync", FromPy),
                ("managed_tensor_to_py_object_no_sync", ToPy),
                ("dltensor_from_py_object_no_sync", DLFromPy),
                ("current_work_stream", Stream)]


def table():
    capsule = xrt.Tensor.__dlpack_c_exchange_api__
    return ExchangeAPI.from_address(_get_pointer(capsule, b"dlpack_exchange_api"))


def test_tensor_type_exposes_a_version_1_3_table():
    api = table()
    assert (api.header.version.major, api.header.version.minor) == (1, 3)
    assert not api.header.prev_api


def test_export_and_import_back_share_memory():
    api = table()
    x = xrt.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))[:, 1::2]
    managed = ctypes.POINTER(DLManagedTensorVersioned)()
    assert api.managed_tensor_from_py_object_no_sync(id(x), ctypes.byref(managed)) == 0
    dl = managed.contents.dl_tensor
    assert dl.data == x._data_ptr() and dl.ndim == 2
    assert [dl.strides[k] for k in range(2)] == [4, 2]
    out = ctypes.c_void_p()
    assert api.managed_tensor_to_py_object_no_sync(managed, ctypes.byref(out)) == 0
    back = ctypes.cast(out, ctypes.py_object).value
    ctypes.pythonapi.Py_DecRef(ctypes.py_object(back))  # the table gave us a new reference
    assert back._data_ptr() == x._data_ptr()
    np.testing.assert_array_equal(np.asarray(back), np.asarray(x))


def test_non_owning_view_and_the_host_stream():
    api = table()
    x = xrt.ones((2, 5), dtype=xrt.int16)
    dl = DLTensor()
    assert api.dltensor_from_py_object_no_sync(id(x), ctypes.byref(dl)) == 0
    assert (dl.ndim, dl.shape[0], dl.shape[1], dl.dtype.bits) == (2, 2, 5, 16)
    stream = ctypes.c_void_p(1)
    assert api.current_work_stream(1, 0, ctypes.byref(stream)) == 0  # kDLCPU
    assert stream.value is None


def test_allocator_makes_a_tensor_of_the_prototype():
    api = table()
    proto = DLTensor()
    shape = (ctypes.c_int64 * 2)(3, 7)
    proto.ndim, proto.shape = 2, shape
    proto.device.device_type, proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = 1, 2, 64, 1
    managed = ctypes.POINTER(DLManagedTensorVersioned)()
    errors = []
    set_error = SetError(lambda ctx, kind, message: errors.append((kind, message)))
    assert api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(managed), None,
                                        set_error) == 0
    out = ctypes.c_void_p()
    assert api.managed_tensor_to_py_object_no_sync(managed, ctypes.byref(out)) == 0
    t = ctypes.cast(out, ctypes.py_object).value
    ctypes.pythonapi.Py_DecRef(ctypes.py_object(t))
    assert t.shape == (3, 7) and t.dtype == xrt.float64
    proto.dtype.code = 77  # no such type code
    assert api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(managed), None,
                                        set_error) == -1
    assert errors and errors[0][0] == b"BufferError"


def test_wrong_object_sets_a_python_error():
    api = table()
    managed = ctypes.POINTER(DLManagedTensorVersioned)()
    with pytest.raises(TypeError, match="not an xpuruntime Tensor"):
        api.managed_tensor_from_py_object_no_sync(id(object()), ctypes.byref(managed))


def test_from_dlpack_consumes_torchs_table():
    torch = pytest.importorskip("torch")
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("this torch has no C exchange API")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, ::2]
    x = xrt.from_dlpack(t)
    assert x._data_ptr() == t.data_ptr() and x.strides == (4, 2)
    t[0, 0] = 100
    assert float(np.asarray(x)[0, 0]) == 100
    # copy= and device= go through the Python protocol, which honours them
    assert xrt.from_dlpack(t, copy=True)._data_ptr() != t.data_ptr()


Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))


def producer_with_table(hand_made):
    """An instance of a fresh type whose C exchange table hands out hand_made's managed
    tensor (with a deleter that counts its calls): a producer that is neither torch nor us.
    Returns (producer, deleter calls, what keeps the table alive)."""
    calls = []
    deleter = Deleter(lambda m: calls.append(1))
    hand_made.struct.deleter = ctypes.cast(deleter, ctypes.c_void_p)

    def from_py(obj, out):
        out[0] = ctypes.pointer(hand_made.struct)
        return 0

    api = ExchangeAPI()
    api.header.version = DLPackVersion(1, 3)
    api.managed_tensor_from_py_object_no_sync = FromPy(from_py)
    capsule = _new(ctypes.addressof(api), b"dlpack_exchange_api", None)
    producer_type = type("Producer", (), {"__dlpack_c_exchange_api__": capsule})
    return producer_type(), calls, (api, deleter, hand_made)


def test_from_dlpack_consumes_any_producers_table():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    producer, calls, _keep = producer_with_table(HandMade(src))
    x = xrt.from_dlpack(producer)
    assert x._data_ptr() == src.ctypes.data and x.shape == (2, 3)
    assert calls == []
    del x  # the storage's last view: the producer's deleter runs once
    assert calls == [1]


@pytest.mark.parametrize("header", [{"dtype": (OPAQUE, 64, 1)}, {"ndim": -1}],
                         ids=["dtype", "ndim"])
def test_a_bad_tensor_from_a_producers_table_raises_and_is_released(header):
    producer, calls, _keep = producer_with_table(
        HandMade(np.arange(4, dtype=np.float32), **header))
    with pytest.raises(BufferError):
        xrt.from_dlpack(producer)
    assert calls == [1]  # not leaked: handed back to its producer
