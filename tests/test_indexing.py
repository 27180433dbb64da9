"""tests/test_indexing.py: x[key], x[key] = value, take and take_along_axis against NumPy
(whose semantics xpuruntime follows where the standard is silent), plus views, aliasing,
large (threaded) inputs and errors; boolean masks and nonzero are in test_masks.py."""

import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import ALL, INTEGER, arrays, assert_tensor_equal, numpy_dtype, tensor


def xrt_key(key):
    """The key with every NumPy array replaced by a tensor."""
    convert = lambda k: tensor(k) if isinstance(k, np.ndarray) else k  # noqa: E731
    return tuple(map(convert, key)) if isinstance(key, tuple) else convert(key)


def numpy_getitem(a, key):
    """a[key] as an array (NumPy returns scalars for single elements)."""
    return np.asarray(a[key])


def shares_memory(t, a):
    return np.shares_memory(np.asarray(t), a)


# ------------------------------------------------------------ strategies

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


@st.composite
def advanced_keys(draw, shape):
    """Index tuples mixing integers, slices, None, an ellipsis, integer arrays
    (broadcastable or not), boolean arrays and boolean scalars; sometimes
    invalid (out of range, too many indices), so errors are compared too."""
    items, d = [], 0
    broadcast = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    while d < len(shape) and draw(st.integers(0, 4)) > 0:
        n = shape[d]
        kind = draw(st.sampled_from(["int", "slice", "int_array", "bool_array", "none", "bool"]))
        if kind == "int":
            items.append(draw(st.integers(-n - 1, n)))
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = st.none() | st.integers(-3, 3).filter(bool)
            items.append(slice(draw(bound), draw(bound), draw(step)))
        elif kind == "int_array":
            dims = draw(st.integers(0, len(broadcast)))
            sub = tuple(s if draw(st.booleans()) else 1 for s in broadcast[len(broadcast) - dims:])
            low, high = (-n, n - 1) if n else (-1, 0)
            if draw(st.integers(0, 9)) == 0:
                low, high = low - 1, high + 1
            items.append(draw(hnp.arrays(np.int64, sub, elements=st.integers(low, high))))
        elif kind == "bool_array":
            m = draw(st.integers(1, len(shape) - d))
            sub = tuple(s if draw(st.integers(0, 5)) else 0 for s in shape[d:d + m])
            items.append(draw(hnp.arrays(np.bool_, sub)))
            d += m - 1
        else:
            items.append(None if kind == "none" else draw(st.booleans()))
            continue
        d += 1
    if draw(st.integers(0, 9)) == 0:
        items.append(0)  # one index too many, unless the key stopped early
    if items and draw(st.booleans()):  # an ellipsis replaces a window of items
        i = draw(st.integers(0, len(items)))
        j = draw(st.integers(i, len(items)))
        items = items[:i] + [Ellipsis] + items[j:]
    return tuple(items)


# ------------------------------------------------------------ basic indexing


@given(data=st.data(), shape=shapes)
def test_basic_indices_give_numpy_views(data, shape):
    a = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    key = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True), label="key")
    t = xrt.asarray(a)
    out = t[key]
    assert_tensor_equal(out, numpy_getitem(a, key))
    if out.size:
        assert shares_memory(out, a)


@given(n=st.integers(0, 6), start=st.none() | st.integers(-10, 10),
       stop=st.none() | st.integers(-10, 10), step=st.none() | st.integers(-4, 4).filter(bool))
def test_slices_clamp_as_python_lists_do(n, start, stop, step):
    values = list(range(n))
    out = xrt.asarray(np.array(values, dtype=np.int64))[start:stop:step]
    assert [int(v) for v in np.asarray(out)] == values[start:stop:step]


def test_huge_slice_bounds_clamp():
    t = xrt.arange(5)
    assert_tensor_equal(t[-(10**30):10**30], np.arange(5))
    assert_tensor_equal(t[10**30::-(10**30)], np.array([4]))


def test_integer_index_gives_a_0d_tensor():
    t = xrt.asarray(np.arange(6.0).reshape(2, 3))
    out = t[1, -1]
    assert isinstance(out, xrt.Tensor) and out.shape == ()
    assert float(out) == 5.0


@pytest.mark.parametrize("key", [(), Ellipsis, (Ellipsis,), None, (None, Ellipsis, None)])
def test_0d_tensors_index_like_numpy(key):
    a = np.array(3.5)
    t = xrt.asarray(a)
    assert_tensor_equal(t[key], numpy_getitem(a, key))


def test_index_objects_with___index__():
    t = xrt.asarray(np.arange(10))
    assert int(t[np.int64(3)]) == 3
    assert int(t[xrt.asarray(4)]) == 4  # a 0-d integer tensor acts as an integer
    assert_tensor_equal(t[np.int8(1):xrt.asarray(7):np.uint16(2)], np.arange(1, 7, 2))


def test_views_write_through():
    a = np.zeros((3, 4))
    t = xrt.asarray(a)
    v = t[1:, ::-2]
    v[...] = 1.0
    expected = np.zeros((3, 4))
    expected[1:, ::-2] = 1.0
    np.testing.assert_array_equal(a, expected)


def test_iteration_of_a_vector_gives_0d_tensors():
    items = list(xrt.asarray(np.array([1, 2, 3], dtype=np.int16)))
    assert [t.shape for t in items] == [(), (), ()]
    assert [int(t) for t in items] == [1, 2, 3]


# ------------------------------------------------------------ advanced indexing


@given(data=st.data(), shape=shapes)
def test_advanced_indices_match_numpy(data, shape):
    a = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    key = data.draw(advanced_keys(shape), label="key")
    try:
        expected = numpy_getitem(a, key)
    except IndexError:
        with pytest.raises(IndexError):
            xrt.asarray(a)[xrt_key(key)]
        return
    assert_tensor_equal(xrt.asarray(a)[xrt_key(key)], expected)


def test_an_empty_ellipsis_still_separates_advanced_indices():
    """NumPy puts the advanced dimensions first when an ellipsis stands between advanced
    items, even one that covers no axis (hypothesis found [:, mask, ..., 0])."""
    a = np.arange(120).reshape(2, 3, 4, 5)
    i, m = np.array([0, 2, 1]), (np.arange(12) % 5 != 0).reshape(3, 4)
    t = xrt.asarray(a)
    for key, xkey in [((slice(None), m, Ellipsis, 0), (slice(None), xrt.asarray(m), Ellipsis, 0)),
                      ((slice(None), i, slice(None), Ellipsis, 0),
                       (slice(None), xrt.asarray(i), slice(None), Ellipsis, 0)),
                      ((slice(None), m, 0), (slice(None), xrt.asarray(m), 0))]:
        assert_tensor_equal(t[xkey], a[key])


@pytest.mark.parametrize("name", ALL)
def test_gather_and_mask_every_dtype(name):
    dtype = numpy_dtype(name)
    a = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
    t = tensor(a)
    idx = np.array([3, -1, 0, 2, 2])
    assert_tensor_equal(t[tensor(idx)], a[idx])
    assert_tensor_equal(t[:, tensor(idx)], a[:, idx])
    mask = (np.arange(24) % 3 == 0).reshape(4, 6)
    assert_tensor_equal(t[tensor(mask)], a[mask])
    assert_tensor_equal(t[tensor(mask[:, 0])], a[mask[:, 0]])


@pytest.mark.parametrize("name", INTEGER)
def test_every_integer_dtype_indexes(name):
    a = np.arange(10.0)
    idx = np.array([1, 7, 3], dtype=name)
    assert_tensor_equal(xrt.asarray(a)[xrt.asarray(idx)], a[idx])
    out = xrt.asarray(a.copy())
    out[xrt.asarray(idx)] = -1.0
    expected = a.copy()
    expected[idx] = -1.0
    assert_tensor_equal(out, expected)


def test_numpy_arrays_and_lists_as_keys():
    a = np.arange(12).reshape(3, 4)
    t = xrt.asarray(a)
    assert_tensor_equal(t[[2, 0]], a[[2, 0]])
    assert_tensor_equal(t[np.array([1, 1])], a[np.array([1, 1])])
    assert_tensor_equal(t[a > 5], a[a > 5])
    assert_tensor_equal(t[[]], a[[]])
    assert_tensor_equal(t[np.bool_(True)], a[np.bool_(True)])


def test_non_contiguous_sources_and_indices():
    a = np.arange(60.0).reshape(5, 12)
    t = xrt.asarray(a)[::-1, ::3]  # negative and non-unit strides
    view = a[::-1, ::3]
    idx = np.array([[4, 0, 2, 1, 3, 3]]).T  # a transposed (strided) index array
    assert_tensor_equal(t[xrt.asarray(idx)[::2, 0]], view[idx[::2, 0]])
    assert_tensor_equal(t[xrt.asarray(idx).mT], view[idx.T])
    mask = np.array([[True, False, True, True]] * 5)
    assert_tensor_equal(t[xrt.asarray(mask.T).mT], view[mask])  # strided mask
    assert_tensor_equal(t.mT[xrt.asarray(mask.T)], view.T[mask.T])


@pytest.mark.parametrize("n", [1000, 300_001])
def test_large_inputs_run_in_chunks_and_keep_order(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n)
    mask = rng.random(n) < 0.3
    idx = rng.integers(-n, n, size=n // 2)
    t = xrt.asarray(a)
    assert_tensor_equal(t[xrt.asarray(mask)], a[mask])
    assert_tensor_equal(t[xrt.asarray(idx)], a[idx])
    b = a.reshape(-1, 1)[: (n // 4) * 4].reshape(-1, 4)
    rows = rng.integers(0, len(b), size=1000)
    assert_tensor_equal(xrt.asarray(b)[xrt.asarray(rows)], b[rows])
    assert_tensor_equal(xrt.asarray(b)[xrt.asarray(b[:, 0] > 0)], b[b[:, 0] > 0])
    dense = np.ones(n, dtype=bool)
    dense[::1000] = False
    assert_tensor_equal(t[xrt.asarray(dense)], a[dense])


def test_gather_results_are_copies():
    a = np.arange(5.0)
    out = xrt.asarray(a)[xrt.asarray([0, 1])]
    a[0] = 9.0
    assert float(out[0]) == 0.0


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
def test_take_matches_numpy(data, shape, dtype_pair):
    a = data.draw(arrays(dtype_pair[0].name, shape), label="x")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = shape[axis]
    idx_shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=4))
    idx = data.draw(hnp.arrays(np.int32, idx_shape, elements=st.integers(-n, n - 1)),
                    label="indices")
    out = xrt.take(tensor(a), xrt.asarray(idx), axis=axis)
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
def test_take_along_axis_matches_numpy(data, shape):
    a = np.arange(math.prod(shape), dtype=np.int16).reshape(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = shape[axis]
    idx_shape = list(shape)
    idx_shape[axis] = data.draw(st.integers(0, 5), label="length")
    for d in range(len(shape)):  # broadcasting outside the axis, both ways
        if d != axis % len(shape) and data.draw(st.booleans()):
            idx_shape[d] = 1
    idx = data.draw(hnp.arrays(np.int64, tuple(idx_shape), elements=st.integers(-n, n - 1)))
    out = xrt.take_along_axis(xrt.asarray(a), xrt.asarray(idx), axis=axis)
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
