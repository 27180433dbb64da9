"""tests/test_indexing_setitem_take.py: x[key] = value, take and take_along_axis against
NumPy, plus aliasing and the indexing errors. The tests that take the `device` fixture run
on the CPU and on CUDA.
"""

import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import arrays, assert_tensor_equal, numpy_dtype, tensor
from indexing_helpers import xrt_key, shapes, advanced_keys


# ------------------------------------------------------------ setitem


def reference_setitem(a, key, value):
    """NumPy's a[key] = value with duplicate coordinates assigned in row-major
    order of the selection (the last one wins), which is xpuruntime's rule."""
    ids = np.arange(a.size).reshape(a.shape)[key]
    values = np.broadcast_to(value, np.shape(ids))
    out = a.copy()
    flat = out.reshape(-1)
    for i, v in zip(np.ravel(ids), np.ravel(values), strict=True):
        flat[i] = v
    return out


@given(data=st.data(), shape=shapes)
def test_setitem_matches_numpy(data, shape):
    a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    key = data.draw(advanced_keys(shape) | hnp.basic_indices(shape, allow_newaxis=True),
                    label="key")
    try:
        selection = np.shape(a[key])
    except IndexError:
        t = xrt.asarray(a.copy())
        with pytest.raises(IndexError):
            t[xrt_key(key)] = 1.0
        assert_tensor_equal(t, a)  # untouched
        return
    scalar = data.draw(st.booleans(), label="scalar value")
    if scalar:
        value = -1.5
    else:
        value_shape = data.draw(hnp.broadcastable_shapes(selection, min_side=0, max_side=4),
                                label="value")
        value = -np.arange(math.prod(value_shape), dtype=np.float32).reshape(value_shape) - 1
        assume(np.broadcast_shapes(value_shape, selection) == selection)
    t = xrt.asarray(a.copy())
    t[xrt_key(key)] = value if scalar else xrt.asarray(value)
    assert_tensor_equal(t, reference_setitem(a, key, value))


def test_duplicate_indices_last_wins():
    t = xrt.zeros(3)
    t[xrt.asarray([0, 2, 0, 0])] = xrt.asarray([1.0, 2.0, 3.0, 4.0])
    assert_tensor_equal(t, np.array([4.0, 0.0, 2.0]))


@pytest.mark.parametrize("value, dtype", [
    (True, "bool"), (3, "int8"), (3, "uint64"), (2, "float32"), (2.5, "float16"),
    (1.5, "complex64"), (1 + 2j, "complex128"), (7, "bfloat16")])
def test_python_scalars_follow_the_standard(value, dtype):
    t = xrt.zeros(4, dtype=getattr(xrt, dtype))
    t[1:3] = value
    t[xrt.asarray([3])] = value
    expected = np.zeros(4, dtype=numpy_dtype(dtype))
    expected[1:] = value
    assert_tensor_equal(t, expected)


@pytest.mark.parametrize("value_dtype, dtype", [
    ("int8", "int32"), ("uint8", "int16"), ("float32", "float64"), ("float32", "complex64"),
    ("bool", "bool")])
def test_values_of_promotable_dtypes_are_cast(value_dtype, dtype):
    t = xrt.zeros(3, dtype=getattr(xrt, dtype))
    t[:2] = xrt.asarray(np.array([1, 1], dtype=value_dtype))
    assert_tensor_equal(t, np.array([1, 1, 0], dtype=dtype))


@pytest.mark.parametrize("value, dtype", [
    (xrt.asarray(np.ones(2)), "float32"),                # float64 does not fit float32
    (xrt.asarray(np.ones(2, dtype=np.int64)), "int32"),
    (xrt.asarray(np.ones(2, dtype=np.int32)), "float32"),  # mixed kinds
    (xrt.asarray(np.ones(2, dtype=np.uint64)), "int64"),
    (1.5, "int32"), (1j, "float64"), (True, "int8"), (1, "bool")])
def test_values_that_do_not_promote_raise_TypeError(value, dtype):
    t = xrt.zeros(2, dtype=getattr(xrt, dtype))
    with pytest.raises(TypeError):
        t[:] = value
    with pytest.raises(TypeError):
        t[xrt.asarray([0, 1])] = value
    assert_tensor_equal(t, np.zeros(2, dtype=dtype))


@pytest.mark.parametrize("value, dtype", [(300, "uint8"), (-1, "uint32"), (2**63, "int64")])
def test_integers_that_do_not_fit_raise_OverflowError(value, dtype):
    t = xrt.zeros(2, dtype=getattr(xrt, dtype))
    with pytest.raises(OverflowError):
        t[0] = value


def test_value_shapes_must_broadcast_to_the_selection():
    t = xrt.zeros((3, 4))
    with pytest.raises(ValueError):
        t[:2] = xrt.ones(3)
    with pytest.raises(ValueError):
        t[xrt.asarray([0, 1])] = xrt.ones((3, 4))
    with pytest.raises(ValueError):
        t[xrt.asarray(np.eye(3, 4, dtype=bool))] = xrt.ones(2)
    assert_tensor_equal(t, np.zeros((3, 4)))


def test_read_only_tensors_refuse_setitem():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = xrt.from_dlpack(a)
    for key in (0, slice(None), xrt.asarray([1]), xrt.asarray(np.ones(4, dtype=bool))):
        with pytest.raises(ValueError):
            t[key] = 0.0
    np.testing.assert_array_equal(a, np.arange(4.0))


def test_overlapping_source_and_destination():
    a = np.arange(10.0)
    t = xrt.asarray(a.copy())
    t[1:] = t[:-1]
    expected = a.copy()
    expected[1:] = a[:-1].copy()
    assert_tensor_equal(t, expected)
    t = xrt.asarray(a.copy())
    t[xrt.asarray([9, 8, 7, 6, 5, 4, 3, 2, 1, 0])] = t
    assert_tensor_equal(t, a[::-1])
    t = xrt.asarray(a.copy())
    t[xrt.asarray(a > 4)] = t[::-1][:5]
    assert_tensor_equal(t, np.array([0, 1, 2, 3, 4, 9, 8, 7, 6, 5.0]))


def test_index_array_that_aliases_the_destination():
    t = xrt.asarray(np.array([2, 0, 1, 5, 5]))
    t[t[:3]] = 7  # the index array is a view of t itself
    assert_tensor_equal(t, np.array([7, 7, 7, 5, 5]))


# ------------------------------------------------------------ errors


@pytest.mark.parametrize("key, words", [
    (5, ["5", "axis 0", "size 3"]), ((0, -5), ["-5", "axis 1", "size 4"]),
    ((slice(None), [4]), ["4", "axis 1", "size 4"]), ([0, -4], ["-4", "axis 0", "size 3"]),
    ((Ellipsis, [[9]]), ["9", "axis 1", "size 4"])])
def test_out_of_range_integers_name_the_index_axis_and_size(key, words):
    t = xrt.zeros((3, 4))
    key = xrt_key(tuple(np.array(k) if isinstance(k, list) else k for k in key)
                  if isinstance(key, tuple) else np.array(key) if isinstance(key, list) else key)
    with pytest.raises(IndexError) as info:
        t[key]
    with pytest.raises(IndexError):
        t[key] = 1.0
    for word in words:
        assert word in str(info.value)
    assert_tensor_equal(t, np.zeros((3, 4)))


@pytest.mark.parametrize("key", [
    (0, 0, 0), (Ellipsis, 0, 0, 0), (np.ones((3, 4, 1), bool),), (0, np.ones((4, 1), bool))])
def test_too_many_indices_raise_IndexError(key):
    with pytest.raises(IndexError, match="too many indices"):
        xrt.zeros((3, 4))[xrt_key(key)]


def test_two_ellipses_raise_IndexError():
    with pytest.raises(IndexError, match="ellipsis"):
        xrt.zeros((3, 4))[..., 0, ...]


@pytest.mark.parametrize("key", [1.0, (0, 1.5), "a", object(), np.array([1.0]), b"\x01"])
def test_non_integer_keys_raise(key):
    with pytest.raises((IndexError, TypeError)):
        xrt.zeros((3, 4))[xrt_key(key)]


@pytest.mark.parametrize("key", [slice(1.0, 2), slice(0, 2, 0.5)])
def test_non_integer_slice_bounds_raise_TypeError(key):
    with pytest.raises(TypeError):
        xrt.zeros(4)[key]


def test_zero_slice_step_raises_ValueError():
    with pytest.raises(ValueError):
        xrt.zeros(4)[::0]


def test_deleting_elements_raises_TypeError():
    t = xrt.zeros(3)
    with pytest.raises(TypeError):
        del t[0]


def test_results_past_64_dimensions_raise_IndexError():
    with pytest.raises(IndexError, match="64"):
        xrt.zeros(2)[(None,) * 64]
    assert xrt.zeros(2)[(None,) * 63].ndim == 64


def test_errors_from_the_direct_slots_keep_their_types():
    t = xrt.zeros((2, 2))
    for key, error in [(9, IndexError), (1.5, IndexError), (slice("a"), TypeError),
                       (xrt.asarray([0.5]), IndexError)]:
        with pytest.raises(error):
            t[key]
        with pytest.raises(error):
            t[key] = 1.0
    with pytest.raises(TypeError):
        t[0] = "text"


def test_index_arrays_that_do_not_broadcast_raise_IndexError():
    with pytest.raises(IndexError, match="broadcast"):
        xrt.zeros((3, 4))[xrt.asarray([0, 1]), xrt.asarray([0, 1, 2])]


# ------------------------------------------------------------ take


@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
def test_take_matches_numpy(device, data, shape, dtype_pair):
    a = data.draw(arrays(dtype_pair[0].name, shape), label="x")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = shape[axis]
    idx_shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=4))
    idx = data.draw(hnp.arrays(np.int32, idx_shape, elements=st.integers(-n, n - 1)),
                    label="indices")
    out = xrt.take(tensor(a, device), xrt.asarray(idx, device=device), axis=axis)
    assert_tensor_equal(out, np.take(a, idx, axis=axis))


def test_take_axis_is_optional_for_vectors_only():
    a = np.arange(5.0)
    assert_tensor_equal(xrt.take(xrt.asarray(a), xrt.asarray([4, -5])), a[[4, -5]])
    with pytest.raises(ValueError):
        xrt.take(xrt.zeros((2, 2)), xrt.asarray([0]))


def test_take_errors():
    x = xrt.zeros((2, 3))
    with pytest.raises(IndexError, match="axis 1 with size 3"):
        xrt.take(x, xrt.asarray([0, 3]), axis=1)
    with pytest.raises(TypeError):
        xrt.take(x, xrt.asarray([0.0]), axis=0)
    with pytest.raises(IndexError):
        xrt.take(x, xrt.asarray([0]), axis=2)
    with pytest.raises(TypeError):
        xrt.take(x, [0], axis=0)


# ------------------------------------------------------------ take_along_axis


@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
def test_take_along_axis_matches_numpy(device, data, shape):
    a = np.arange(math.prod(shape), dtype=np.int16).reshape(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = shape[axis]
    idx_shape = list(shape)
    idx_shape[axis] = data.draw(st.integers(0, 5), label="length")
    for d in range(len(shape)):  # broadcasting outside the axis, both ways
        if d != axis % len(shape) and data.draw(st.booleans()):
            idx_shape[d] = 1
    idx = data.draw(hnp.arrays(np.int64, tuple(idx_shape), elements=st.integers(-n, n - 1)))
    out = xrt.take_along_axis(xrt.asarray(a, device=device), xrt.asarray(idx, device=device),
                              axis=axis)
    assert_tensor_equal(out, np.take_along_axis(a, idx, axis=axis))


def test_take_along_axis_sorts_with_argsort_indices():
    a = np.random.default_rng(1).standard_normal((4, 100_000))
    order = np.argsort(a, axis=1)
    assert_tensor_equal(xrt.take_along_axis(xrt.asarray(a), xrt.asarray(order)), np.sort(a, axis=1))
    assert_tensor_equal(xrt.take_along_axis(xrt.asarray(a.T), xrt.asarray(order.T), axis=0),
                        np.sort(a, axis=1).T)


def test_take_along_axis_errors():
    x = xrt.zeros((2, 3))
    with pytest.raises(IndexError, match="axis 1 with size 3"):
        xrt.take_along_axis(x, xrt.asarray([[0, 3]]), axis=1)
    with pytest.raises(ValueError):
        xrt.take_along_axis(x, xrt.asarray([0]), axis=0)
    with pytest.raises(ValueError):
        xrt.take_along_axis(x, xrt.zeros((3, 3), dtype=xrt.int64), axis=1)
    with pytest.raises(IndexError):
        xrt.take_along_axis(x, xrt.zeros((2, 3), dtype=xrt.int64), axis=-3)
    with pytest.raises(TypeError):
        xrt.take_along_axis(x, xrt.zeros((2, 3)), axis=1)
