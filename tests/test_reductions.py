"""tests/test_reductions.py: sum against NumPy (axis, keepdims, dtype)."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import (COMPLEX, INTEGER, SIGNED, arrays, assert_tensor_equal,
                    numpy_dtype, tensor, to_numpy)

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def axes(ndim):
    """None, one axis (possibly negative) or a tuple of distinct axes."""
    options = st.none() | hnp.valid_tuple_axes(ndim)
    return options | st.integers(-ndim, ndim - 1) if ndim else options


def sum_dtype(name):
    """The standard's default: integers widen to the 64-bit type of their
    signedness, bool counts as int64, floating types are kept."""
    if name == "bool" or name in SIGNED:
        return "int64"
    return "uint64" if name in INTEGER else name


# ---------------------------------------------------------------- integers


@pytest.mark.parametrize("name", ("bool",) + INTEGER)
@given(data=st.data())
def test_integer_sums_are_exact(name, data):
    a = data.draw(arrays(name, shapes))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    expected = np.sum(a, axis=axis, keepdims=keepdims, dtype=sum_dtype(name))
    assert_tensor_equal(xrt.sum(tensor(a), axis=axis, keepdims=keepdims),
                        np.asarray(expected))


def test_bool_sums_count():
    t = xrt.asarray([[True, False, True], [True, True, True]])
    assert_tensor_equal(xrt.sum(t), np.int64(5))
    assert_tensor_equal(xrt.sum(t, axis=1), np.array([2, 3], dtype=np.int64))


def test_unsigned_sums_use_uint64():
    t = xrt.asarray([2**63, 2**63 - 1], dtype=xrt.uint64)
    assert_tensor_equal(xrt.sum(t), np.uint64(2**64 - 1))


# ------------------------------------------------------------------ floats


def _reference(a, axis, keepdims):
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    return np.sum(a.astype(wide), axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", ["float32", "float64", "complex64",
                                  "complex128"])
@given(data=st.data())
def test_float_sums_match_within_rounding(name, data):
    a = data.draw(arrays(name, shapes, min_value=-100, max_value=100,
                         allow_nan=False, allow_infinity=False)
                  if name not in COMPLEX else
                  arrays(name, shapes, max_magnitude=100, allow_nan=False,
                         allow_infinity=False))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    t = xrt.sum(tensor(a), axis=axis, keepdims=keepdims)
    expected = _reference(a, axis, keepdims)
    assert t.dtype == getattr(xrt, name)
    assert t.shape == expected.shape
    # Summation order is the implementation's: recursive summation is off by
    # at most n * eps * sum(|x|).
    eps = np.finfo(numpy_dtype(name)).eps
    atol = a.size * eps * np.sum(np.abs(a.astype(np.complex128)))
    np.testing.assert_allclose(to_numpy(t), expected, rtol=0, atol=atol)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@given(data=st.data())
def test_small_float_sums_of_small_integers_are_exact(name, data):
    # Integers up to 256 are exact in both, so any order gives one answer.
    ints = data.draw(hnp.arrays(np.int8, shapes,
                                elements=st.integers(-4, 4)))
    a = ints.astype(numpy_dtype(name))
    axis = data.draw(axes(a.ndim))
    expected = np.sum(ints, axis=axis, dtype=np.int64).astype(a.dtype)
    assert_tensor_equal(xrt.sum(tensor(a), axis=axis), np.asarray(expected))


def test_float_special_values_propagate():
    t = xrt.asarray([1.0, np.inf, 2.0])
    assert float(xrt.sum(t)) == np.inf
    assert np.isnan(float(xrt.sum(xrt.asarray([np.inf, -np.inf]))))
    assert np.isnan(float(xrt.sum(xrt.asarray([1.0, np.nan]))))


# ---------------------------------------------------- dtype= and edge cases


@pytest.mark.parametrize("source, target", [
    ("int8", "int8"), ("int8", "int16"), ("uint8", "uint8"), ("int32", "float64"),
    ("float32", "float64"), ("float64", "float32"), ("bool", "int32"),
    ("float32", "complex64")])
def test_sum_dtype_argument(source, target):
    a = np.array([[100, 27, 1], [0, 1, 1]], dtype=source)
    t = xrt.sum(xrt.asarray(a), axis=0, dtype=getattr(xrt, target))
    assert_tensor_equal(t, np.sum(a, axis=0, dtype=target))
    t = xrt.sum(xrt.asarray(a), dtype=getattr(xrt, target))
    assert_tensor_equal(t, np.asarray(np.sum(a, dtype=target)))


@pytest.mark.parametrize("name", ["bool", "int8", "uint16", "float32",
                                  "complex64"])
def test_sum_of_nothing_is_zero(name):
    a = np.zeros((0, 3), dtype=name)
    dtype = sum_dtype(name)
    assert_tensor_equal(xrt.sum(xrt.asarray(a)), np.zeros((), dtype=dtype))
    assert_tensor_equal(xrt.sum(xrt.asarray(a), axis=0), np.zeros(3, dtype))
    assert_tensor_equal(xrt.sum(xrt.asarray(a), axis=1), np.zeros(0, dtype))


def test_sum_reads_strided_views():
    base = np.arange(60, dtype=np.int32).reshape(6, 10)
    view = base[::2, ::-3].T
    assert_tensor_equal(xrt.sum(xrt.asarray(view), axis=1),
                        np.sum(view, axis=1, dtype=np.int64))


def test_keepdims_keeps_length_one_axes():
    t = xrt.ones((2, 3, 4))
    assert xrt.sum(t, axis=(0, 2), keepdims=True).shape == (1, 3, 1)
    assert xrt.sum(t, keepdims=True).shape == (1, 1, 1)
    assert xrt.sum(t, axis=-1).shape == (2, 3)


@pytest.mark.parametrize("axis", [3, -4, (0, 0), (1, -2)])
def test_bad_axes_raise(axis):
    # Note: NumPy raises AxisError (a ValueError and an IndexError).
    with pytest.raises((ValueError, IndexError)):
        xrt.sum(xrt.ones((2, 3, 4)), axis=axis)
