"""tests/test_numpy_conversion.py: NumPy's implicit conversion (the buffer protocol, then
``__array__``): zero-copy for a CPU tensor, a TypeError naming ``x.to_device("cpu")`` for a device tensor (never a silent copy
to the host, as in PyTorch and CuPy)."""

import struct

import numpy as np
import pytest

import xpuruntime as xrt

cuda = pytest.mark.cuda


def test_a_cpu_tensor_is_viewed_without_a_copy():
    x = xrt.asarray(np.arange(6.0).reshape(2, 3))
    view = np.asarray(x)
    assert view.dtype == np.float64 and view.shape == (2, 3)
    assert np.shares_memory(view, np.asarray(x))
    assert np.asarray(x).__array_interface__["data"][0] == view.__array_interface__["data"][0]
    view[0, 0] = 42.0  # the view writes through to the tensor
    assert float(x[0, 0]) == 42.0


def test_copy_and_dtype_requests_on_a_cpu_tensor():
    x = xrt.asarray(np.arange(4, dtype=np.int32))
    assert np.shares_memory(np.array(x, copy=False), np.asarray(x))
    copied = np.array(x, copy=True)
    assert not np.shares_memory(copied, np.asarray(x))
    np.testing.assert_array_equal(copied, [0, 1, 2, 3])
    wide = np.asarray(x, dtype=np.float64)
    assert wide.dtype == np.float64
    np.testing.assert_array_equal(wide, [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        np.array(x, dtype=np.float64, copy=False)


def test_numpy_functions_take_cpu_tensors():
    x = xrt.asarray([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.concatenate([x, x]), [1.0, 2.0, 3.0] * 2)
    np.testing.assert_array_equal(np.sort(xrt.flip(x)), [1.0, 2.0, 3.0])


def test_cpu_tensors_export_the_buffer_protocol():
    """Note [Tensor buffers]: NumPy, memoryview and bytes read a CPU tensor through PEP 3118
    without a copy; read-only tensors give read-only buffers; a bfloat16 tensor (no format)
    refuses, and NumPy then converts it through __array__."""
    x = xrt.reshape(xrt.arange(6, dtype=xrt.int32), (2, 3))
    m = memoryview(x)
    assert (m.format, m.shape, m.strides, m.readonly) == ("i", (2, 3), (12, 4), False)
    assert m.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert bytes(xrt.asarray([1, 2], dtype=xrt.uint8)) == b"\x01\x02"
    t = memoryview(x.T)  # strided: a consumer that takes strides gets them
    assert t.strides == (4, 12) and t.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert bytes(x.T) == np.arange(6, dtype=np.int32).reshape(2, 3).T.tobytes()  # C order
    for name, fmt in [("bool", "?"), ("int8", "b"), ("uint64", "Q"), ("float16", "e"),
                      ("float32", "f"), ("complex64", "Zf"), ("complex128", "Zd")]:
        t = xrt.ones(3, dtype=getattr(xrt, name))
        assert memoryview(t).format == fmt
        assert np.asarray(t).dtype == np.dtype(name) and np.shares_memory(np.asarray(t), t)
    broadcast = xrt.broadcast_to(xrt.asarray(1.0), (3,))
    assert memoryview(broadcast).readonly and not np.asarray(broadcast).flags.writeable
    with pytest.raises((BufferError, TypeError)):  # a writable buffer is asked for
        struct.pack_into("d", broadcast, 0, 2.0)
    struct.pack_into("d", x_float := xrt.zeros(2), 8, 2.0)  # a writable tensor takes it
    assert np.asarray(x_float).tolist() == [0.0, 2.0]
    scalar = memoryview(xrt.asarray(2.5))
    assert scalar.ndim == 0 and scalar.shape == () and np.asarray(xrt.asarray(2.5)) == 2.5
    with pytest.raises(BufferError, match="buffer format"):
        memoryview(xrt.ones(2, dtype=xrt.bfloat16))
    kept = memoryview(xrt.arange(3.0))  # the buffer keeps its tensor alive
    assert kept.tolist() == [0.0, 1.0, 2.0]


@cuda
def test_a_cuda_tensor_exports_no_buffer():
    with pytest.raises(BufferError, match="to_device"):
        memoryview(xrt.arange(4, dtype=xrt.float32, device="cuda:0"))


@cuda
@pytest.mark.parametrize("convert", [
    np.asarray,
    np.array,
    lambda x: np.array(x, copy=True),
    lambda x: np.asarray(x, dtype=np.float64),
    lambda x: np.concatenate([x]),
])
def test_a_cuda_tensor_is_not_copied_to_the_host_implicitly(convert):
    x = xrt.arange(4, dtype=xrt.float32, device="cuda:0")
    with pytest.raises(TypeError, match=r'x\.to_device\("cpu"\)'):
        convert(x)


@cuda
def test_a_cuda_tensor_reaches_numpy_through_an_explicit_copy():
    x = xrt.arange(4, dtype=xrt.float32, device="cuda:0")
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), np.arange(4.0))
    assert "cuda:0" in repr(x)  # printing is asked for, so it may copy
    assert str(x) == "[0. 1. 2. 3.]"
