"""tests/test_errors.py: the exception hierarchy and the errors that bad
input raises (never a crash, never a corrupted tensor)."""

import numpy as np
import pytest

import xpuruntime as xrt
from common import assert_tensor_equal


@pytest.mark.parametrize("error", ["CudaError", "OutOfMemoryError",
                                   "UnsupportedOperationError"])
def test_hierarchy(error):
    assert issubclass(getattr(xrt, error), xrt.XpuRuntimeError)
    assert issubclass(xrt.XpuRuntimeError, RuntimeError)


@pytest.fixture
def no_cuda():
    if xrt.cuda.is_available():
        pytest.skip("CUDA is available")


@pytest.mark.usefixtures("no_cuda")
@pytest.mark.parametrize("allocate", [
    lambda: xrt.zeros((2,), device="cuda:0"),
    lambda: xrt.asarray([1, 2], device=xrt.Device("cuda", 0)),
    lambda: xrt.arange(3, device="cuda:0"),
    lambda: xrt.ones((2,)).to_device("cuda:0"),
], ids=["zeros", "asarray", "arange", "to_device"])
def test_tensors_on_cuda_without_cuda_raise_CudaError(allocate):
    with pytest.raises(xrt.CudaError) as info:
        allocate()
    assert str(info.value)


@pytest.mark.parametrize("shape_a, shape_b", [((2, 3), (4,)), ((3,), (2,)),
                                              ((2, 1, 3), (2, 2, 1, 4))])
def test_shapes_that_do_not_broadcast_raise_ValueError(shape_a, shape_b):
    a, b = xrt.ones(shape_a), xrt.ones(shape_b)
    with pytest.raises(ValueError):
        xrt.add(a, b)
    with pytest.raises(ValueError):
        a + b
    assert_tensor_equal(a, np.ones(shape_a))  # unharmed


@pytest.mark.parametrize("shape_a, shape_b", [((2, 3), (4, 5)), ((3,), (4,)),
                                              ((2, 3), (2,)), ((), (2, 2)),
                                              ((2, 2, 3), (3, 3, 2))])
def test_matmul_shape_mismatch_raises_ValueError(shape_a, shape_b):
    a, b = xrt.ones(shape_a), xrt.ones(shape_b)
    with pytest.raises(ValueError):
        xrt.matmul(a, b)
    with pytest.raises(ValueError):
        a @ b


@pytest.mark.parametrize("bad", ["float128", "nope", 42, object(), np.int64])
def test_bad_dtype_arguments_raise_TypeError(bad):
    # Note: np.int64 (a scalar type) is not an xrt dtype; the spec accepts
    # names and np.dtype objects, nothing else.
    with pytest.raises(TypeError):
        xrt.zeros((2,), dtype=bad)
    with pytest.raises(TypeError):
        xrt.asarray([1, 2], dtype=bad)
    with pytest.raises(TypeError):
        xrt.astype(xrt.ones(2), bad)


@pytest.mark.parametrize("make", [
    lambda: xrt.zeros((-1, 3)), lambda: xrt.ones(-2), lambda: xrt.empty((2, -1)),
    lambda: xrt.full((-3,), 1.0)])
def test_negative_shapes_raise_ValueError(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("shape", [2.5, (2, "3"), "3", (None,)])
def test_non_integer_shapes_raise_TypeError(shape):
    with pytest.raises(TypeError):
        xrt.zeros(shape)


@pytest.mark.parametrize("device", ["tpu", "cuda:x", ""])
def test_bad_device_arguments_raise_ValueError(device):
    with pytest.raises(ValueError):
        xrt.zeros((2,), device=device)


def test_impossible_allocation_raises_OutOfMemoryError():
    # 2**62 bytes is past any address space, overcommit or not.
    # Note: a MemoryError would also be what a Python user expects here.
    with pytest.raises((xrt.OutOfMemoryError, MemoryError)):
        xrt.empty((2**62,), dtype=xrt.uint8)


def test_errors_carry_a_message():
    with pytest.raises(ValueError) as info:
        xrt.add(xrt.ones((2, 3)), xrt.ones((4,)))
    assert "(2, 3)" in str(info.value) or "broadcast" in str(info.value)
