"""tests/test_dlpack.py: DLPack export and import, checked with NumPy and at
the level of the capsule's C structs."""

import gc
import weakref

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, NUMPY_NATIVE, assert_tensor_equal
from dlpack_abi import (BFLOAT, BOOL, COMPLEX, CPU, CUDA, FLOAT, INT, IS_COPIED,
                        LEGACY, OPAQUE, OPENCL, READ_ONLY, UINT, VERSIONED,
                        HandMade, capsule_name, managed, shape_and_strides)

V1 = (1, 0)

VIEWS = {
    "0-d": lambda a: a[0, 0, ...],
    "empty": lambda a: a[:0],
    "contiguous": lambda a: a,
    "strided": lambda a: a[::2],
    "transposed": lambda a: a.T,
    "negative strides": lambda a: a[::-1],
    "byte offset": lambda a: a[1:, 2:],
    "everything": lambda a: a[1::2, ::-3].T,
}


def base_array(name):
    return np.arange(48).reshape(6, 8).astype(name)


def data_pointer(a):
    return a.__array_interface__["data"][0]


# ------------------------------------------------------ round trips, NumPy


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
@pytest.mark.parametrize("name", NUMPY_NATIVE)
def test_numpy_round_trip_is_zero_copy(name, view):
    a = view(base_array(name))
    t = xrt.from_dlpack(a)
    assert_tensor_equal(t, a)
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a, strict=True)
    assert data_pointer(back) == data_pointer(a)
    assert back.strides == a.strides or a.size <= 1


def test_bfloat16_round_trip_through_dlpack():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = xrt.astype(xrt.arange(6, dtype=xrt.float32), xrt.bfloat16)
    again = xrt.from_dlpack(t)
    assert again.dtype == xrt.bfloat16
    t += 1  # shared memory: the import sees it
    np.testing.assert_array_equal(
        np.asarray(again), np.arange(1, 7).astype(ml_dtypes.bfloat16))


def test_from_dlpack_accepts_a_bare_capsule():
    t = xrt.arange(4, dtype=xrt.int16)
    for capsule in (t.__dlpack__(), t.__dlpack__(max_version=V1)):
        assert_tensor_equal(xrt.from_dlpack(capsule),
                            np.arange(4, dtype=np.int16))


def test_dlpack_device_of_a_cpu_tensor():
    device = xrt.zeros(3).__dlpack_device__()
    assert tuple(int(v) for v in device) == (CPU, 0)


# ------------------------------------------------------------- capsules

DL_DTYPES = {
    "bool": (BOOL, 8), "int8": (INT, 8), "int16": (INT, 16),
    "int32": (INT, 32), "int64": (INT, 64), "uint8": (UINT, 8),
    "uint16": (UINT, 16), "uint32": (UINT, 32), "uint64": (UINT, 64),
    "float16": (FLOAT, 16), "bfloat16": (BFLOAT, 16), "float32": (FLOAT, 32),
    "float64": (FLOAT, 64), "complex64": (COMPLEX, 64),
    "complex128": (COMPLEX, 128),
}


@pytest.mark.parametrize("max_version, name", [
    (None, LEGACY), ((0, 8), LEGACY), (V1, VERSIONED), ((1, 7), VERSIONED),
    ((2, 0), VERSIONED)])
def test_capsule_kind_follows_max_version(max_version, name):
    capsule = xrt.zeros(3).__dlpack__(max_version=max_version)
    assert capsule_name(capsule) == name
    assert f'"{name}"' in repr(capsule)
    if name == VERSIONED:
        assert managed(capsule).version.major == 1


@pytest.mark.parametrize("name", ALL)
def test_capsule_describes_dtype_shape_and_device(name):
    t = xrt.zeros((2, 3), dtype=getattr(xrt, name))
    capsule = t.__dlpack__(max_version=V1)
    dl = managed(capsule).dl_tensor
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (*DL_DTYPES[name], 1)
    assert (dl.device.device_type, dl.device.device_id) == (CPU, 0)
    shape, strides = shape_and_strides(dl)
    assert shape == (2, 3)
    assert strides in (None, (3, 1))
    assert managed(capsule).flags == 0


def test_capsule_of_a_view_points_into_the_same_memory():
    a = base_array("float32")[1::2, ::-3].T
    capsule = xrt.from_dlpack(a).__dlpack__(max_version=V1)
    dl = managed(capsule).dl_tensor
    assert dl.data + dl.byte_offset == data_pointer(a)
    assert shape_and_strides(dl) == (a.shape, tuple(s // 4 for s in a.strides))


def test_consuming_a_capsule_renames_it():
    t = xrt.zeros(3)
    legacy, versioned = t.__dlpack__(), t.__dlpack__(max_version=V1)
    xrt.from_dlpack(legacy), xrt.from_dlpack(versioned)
    assert capsule_name(legacy) == "used_dltensor"
    assert capsule_name(versioned) == "used_dltensor_versioned"


def test_a_consumed_capsule_raises_BufferError():
    capsule = xrt.zeros(3).__dlpack__(max_version=V1)
    xrt.from_dlpack(capsule)
    with pytest.raises(BufferError):
        xrt.from_dlpack(capsule)


def test_unconsumed_capsules_clean_up():
    t = xrt.arange(1000)
    for _ in range(100):
        t.__dlpack__()
        t.__dlpack__(max_version=V1)
    gc.collect()
    assert_tensor_equal(t, np.arange(1000))


# ---------------------------------------------------------- copy and device


def test_copy_true_exports_a_copy():
    t = xrt.arange(4.0)
    capsule = t.__dlpack__(max_version=V1, copy=True)
    assert managed(capsule).flags & IS_COPIED
    copied = np.from_dlpack(t, copy=True)
    t += 10
    np.testing.assert_array_equal(copied, np.arange(4.0))


def test_copy_true_imports_a_copy():
    a = np.arange(4.0)
    t = xrt.from_dlpack(a, copy=True)
    a += 10
    assert_tensor_equal(t, np.arange(4.0))


def test_copy_false_never_copies():
    a = np.arange(4.0)
    t = xrt.from_dlpack(a, copy=False)
    assert data_pointer(np.from_dlpack(t, copy=False)) == data_pointer(a)
    assert not managed(t.__dlpack__(max_version=V1, copy=False)).flags & IS_COPIED


def test_dl_device_cpu_is_accepted():
    t = xrt.arange(3)
    capsule = t.__dlpack__(max_version=V1, dl_device=(CPU, 0))
    assert managed(capsule).dl_tensor.device.device_type == CPU
    assert_tensor_equal(xrt.from_dlpack(t, device="cpu"), np.arange(3))


def test_dl_device_cuda_without_copy_raises_BufferError():
    with pytest.raises(BufferError):
        xrt.arange(3).__dlpack__(max_version=V1, dl_device=(CUDA, 0),
                                 copy=False)


# ---------------------------------------------------------------- lifetimes


def test_import_keeps_the_producer_alive_and_then_releases_it():
    a = np.arange(6.0)
    producer = weakref.ref(a)
    t = xrt.from_dlpack(a)
    del a
    gc.collect()
    assert producer() is not None
    assert_tensor_equal(t, np.arange(6.0))
    del t
    gc.collect()
    assert producer() is None


def test_export_outlives_the_tensor():
    t = xrt.arange(1000, dtype=xrt.int32)
    view = np.from_dlpack(t)
    del t
    gc.collect()
    scratch = [xrt.full((1000,), 7, dtype=xrt.int32) for _ in range(10)]
    np.testing.assert_array_equal(view, np.arange(1000, dtype=np.int32))
    view[:] = -1  # still ours to write
    assert int(xrt.sum(scratch[-1])) == 7000


def test_a_chain_of_imports_releases_the_first_producer():
    a = np.arange(8.0)
    producer = weakref.ref(a)
    last = np.from_dlpack(xrt.from_dlpack(np.from_dlpack(xrt.from_dlpack(a))))
    del a
    gc.collect()
    np.testing.assert_array_equal(last, np.arange(8.0))
    del last
    gc.collect()
    assert producer() is None


def test_tensor_is_released_after_its_export_dies():
    t = xrt.arange(5)
    try:
        ref = weakref.ref(t)
    except TypeError:
        pytest.skip("Tensor does not support weak references")
    view = np.from_dlpack(t)
    capsule = t.__dlpack__(max_version=V1)
    del t, view, capsule
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------- read-only


def read_only_array():
    a = np.arange(4.0)
    a.flags.writeable = False
    return a


def test_read_only_import_refuses_in_place_writes():
    a = read_only_array()
    t = xrt.from_dlpack(a)
    with pytest.raises(ValueError):
        t += 1
    np.testing.assert_array_equal(a, np.arange(4.0))


def test_read_only_survives_re_export():
    t = xrt.from_dlpack(read_only_array())
    assert managed(t.__dlpack__(max_version=V1)).flags & READ_ONLY
    assert not np.from_dlpack(t).flags.writeable


def test_read_only_flag_of_a_hand_made_capsule_is_honoured():
    src = np.arange(4, dtype=np.float32)
    made = HandMade(src, flags=READ_ONLY)
    t = xrt.from_dlpack(made.capsule)
    with pytest.raises(ValueError):
        t += 1
    np.testing.assert_array_equal(src, np.arange(4, dtype=np.float32))


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("garbage", [object(), 3, [1, 2], "dltensor", None])
def test_non_producers_raise_TypeError(garbage):
    with pytest.raises(TypeError):
        xrt.from_dlpack(garbage)


@pytest.mark.parametrize("array", [
    np.array(["2020-01-01"], dtype="datetime64[D]"),
    np.zeros(2, dtype=[("a", "i4"), ("b", "f4")]),
    np.array(["text"]),
], ids=["datetime64", "structured", "unicode"])
def test_unsupported_numpy_dtypes_raise_with_a_message(array):
    with pytest.raises((TypeError, BufferError)) as info:
        xrt.from_dlpack(array)
    assert str(info.value)


def test_hand_made_capsule_imports_zero_copy():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1]
    for versioned in (True, False):
        made = HandMade(src, versioned=versioned)
        t = xrt.from_dlpack(made.capsule)
        assert_tensor_equal(t, src)
        assert data_pointer(np.from_dlpack(t)) == data_pointer(src)
        del t


@pytest.mark.parametrize("header", [
    {"dtype": (FLOAT, 128, 1)}, {"dtype": (FLOAT, 32, 4)},
    {"dtype": (OPAQUE, 64, 1)}, {"dtype": (INT, 7, 1)}, {"dtype": (99, 32, 1)},
    {"device": (OPENCL, 0)}, {"version": (2, 0)}, {"ndim": -1},
], ids=lambda h: f"{next(iter(h))}={next(iter(h.values()))}")
def test_bad_capsules_raise_and_stay_unconsumed(header):
    made = HandMade(np.arange(4, dtype=np.float32), **header)
    with pytest.raises((TypeError, BufferError)) as info:
        xrt.from_dlpack(made.capsule)
    assert str(info.value)
    assert capsule_name(made.capsule) == VERSIONED
