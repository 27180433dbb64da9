"""tests/test_indexing.py: x[key], x[key] = value, take and take_along_axis against NumPy
(whose semantics xpuruntime follows where the standard is silent), plus views, aliasing,
large (threaded) inputs and errors; boolean masks and nonzero are in test_masks.py. The
tests that take the `device` fixture run on the CPU and on CUDA.

On CUDA (the tests marked cuda), the native creation and indexing kernels (arange, linspace,
tril, triu, integer-array gather and scatter, take, take_along_axis) give the CPU's results
bit for bit: every dtype, every index dtype, negative indices, broadcast index arrays,
indexed axes first, last and in the middle, non-contiguous sources and targets, empty
selections, duplicates in a scatter (the last one wins, as on the CPU), and the CPU's
IndexError, word for word, for out-of-range indices (a scatter then writes nothing). Without
a GPU, the sources of these kernels are compiled for sm_90 by test_cuda_jit.py's compile-all
test.
"""

import functools
import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import ALL, INTEGER, NUMERIC, arrays, assert_tensor_equal, numpy_dtype, tensor
from cuda_helpers import both, host, same_bits, small_values


def xrt_key(key, device=None):
    """The key with every NumPy array replaced by a tensor (on `device`)."""
    convert = lambda k: tensor(k, device) if isinstance(k, np.ndarray) else k  # noqa: E731
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
def test_advanced_indices_match_numpy(device, data, shape):
    a = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    key = data.draw(advanced_keys(shape), label="key")
    try:
        expected = numpy_getitem(a, key)
    except IndexError:
        with pytest.raises(IndexError):
            xrt.asarray(a, device=device)[xrt_key(key, device)]
        return
    assert_tensor_equal(xrt.asarray(a, device=device)[xrt_key(key, device)], expected)


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
def test_gather_and_mask_every_dtype(device, name):
    dtype = numpy_dtype(name)
    a = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
    t = tensor(a, device)
    idx = np.array([3, -1, 0, 2, 2])
    assert_tensor_equal(t[tensor(idx, device)], a[idx])
    assert_tensor_equal(t[:, tensor(idx, device)], a[:, idx])
    mask = (np.arange(24) % 3 == 0).reshape(4, 6)
    assert_tensor_equal(t[tensor(mask, device)], a[mask])
    assert_tensor_equal(t[tensor(mask[:, 0], device)], a[mask[:, 0]])


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


# ==== on CUDA against the CPU =====================================================================

DEVICE = "cuda:0"
rng = np.random.default_rng(5)
values = functools.partial(small_values, rng)


def same_error(op_gpu, op_cpu, error=IndexError):
    with pytest.raises(error) as want:
        op_cpu()
    with pytest.raises(error) as got:
        op_gpu()
    assert str(got.value) == str(want.value)


def dtype_of(name):
    return getattr(xrt, name)


def uses_native(op):
    return any(k["device"] == "cuda" and k["name"] == "nvrtc" for k in xrt.list_kernels(op))


@pytest.mark.parametrize("op", ["arange", "linspace", "tril", "triu", "gather", "scatter",
                                "take_along_axis"])
def test_native_kernels_registered(op):
    assert uses_native(op)


# ---- creation ---------------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_arange_every_dtype(name):
    d = dtype_of(name)
    cases = [(0, 37, 1), (5, -20, -3), (0, 0, 1)]
    if name.startswith("uint"):
        cases = [(0, 37, 1), (30, 2, -3), (0, 0, 1)]
    if not name.startswith(("int", "uint")):
        cases += [(-2.5, 7.25, 0.37), (1e3, -1e3, -13.1), (0.1, 0.9, 0.1)]
    else:
        cases += [(0.5, 9.7, 0.9)]  # float scalars with an integer dtype: cast
    for start, stop, step in cases:
        same_bits(xrt.arange(start, stop, step, dtype=d, device=DEVICE),
                  xrt.arange(start, stop, step, dtype=d))


@pytest.mark.cuda
def test_arange_large_and_wrapping():
    n = (1 << 20) + 3
    same_bits(xrt.arange(n, dtype=xrt.int64, device=DEVICE), xrt.arange(n, dtype=xrt.int64))
    same_bits(xrt.arange(0.0, n * 0.1, 0.1, dtype=xrt.float64, device=DEVICE),
              xrt.arange(0.0, n * 0.1, 0.1, dtype=xrt.float64))
    big = (1 << 62)
    same_bits(xrt.arange(-big, big, big // 3, dtype=xrt.int64, device=DEVICE),
              xrt.arange(-big, big, big // 3, dtype=xrt.int64))


@pytest.mark.cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_linspace_every_dtype(name):
    d = dtype_of(name)
    for start, stop, num, endpoint in [(-3.3, 7.9, 50, True), (10, -10, 33, False),
                                       (0, 1, 1, True), (2, 5, 0, True), (0.0, 1e6, 1001, True)]:
        if name.startswith("uint") and min(start, stop) < 0:
            start, stop = abs(start), abs(stop)
        same_bits(xrt.linspace(start, stop, num, dtype=d, device=DEVICE, endpoint=endpoint),
                  xrt.linspace(start, stop, num, dtype=d, endpoint=endpoint))
    if name.startswith("complex"):
        same_bits(xrt.linspace(1 - 2j, -3 + 5.5j, 17, dtype=d, device=DEVICE),
                  xrt.linspace(1 - 2j, -3 + 5.5j, 17, dtype=d))


@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
def test_tril_triu_every_dtype(name):
    a = values(name, (3, 5, 6))
    cpu, gpu = both(a)
    for k in (-7, -2, -1, 0, 1, 3, 9):
        same_bits(xrt.tril(gpu, k=k), xrt.tril(cpu, k=k))
        same_bits(xrt.triu(gpu, k=k), xrt.triu(cpu, k=k))


@pytest.mark.cuda
@pytest.mark.parametrize("view", [lambda t: xrt.matrix_transpose(t), lambda t: t[:, ::2, ::-1],
                                  lambda t: t[1:2], lambda t: t[:, :0]])
def test_tril_triu_views(view):
    a = values("float32", (4, 7, 9))
    cpu, gpu = both(a)
    for k in (-1, 0, 2):
        same_bits(xrt.tril(view(gpu), k=k), xrt.tril(view(cpu), k=k))
        same_bits(xrt.triu(view(gpu), k=k), xrt.triu(view(cpu), k=k))
    big = values("int64", (300, 700))
    cpu, gpu = both(big)
    same_bits(xrt.tril(gpu, k=-5), xrt.tril(cpu, k=-5))
    same_bits(xrt.triu(gpu.T, k=5), xrt.triu(cpu.T, k=5))


# ---- gather -----------------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
def test_gather_every_dtype(name):
    a = values(name, (11, 6))
    cpu, gpu = both(a)
    idx = np.array([0, -1, 3, 10, -11, 3, 3], dtype=np.int64)
    ic, ig = both(idx)
    same_bits(gpu[ig], cpu[ic])
    same_bits(gpu[:, ig[:4] % 6], cpu[:, ic[:4] % 6])


@pytest.mark.cuda
@pytest.mark.parametrize("index_dtype", INTEGER)
def test_gather_every_index_dtype(index_dtype):
    a = values("float64", (9, 4, 5))
    cpu, gpu = both(a)
    idx = np.array([[1, 0], [3, 2], [0, 3]], dtype=index_dtype)
    ic, ig = both(idx)
    same_bits(gpu[:, ig], cpu[:, ic])
    same_bits(gpu[ig], cpu[ig.to_device("cpu")])
    if index_dtype.startswith("int"):
        neg = np.array([-1, -4, 2], dtype=index_dtype)
        nc, ng = both(neg)
        same_bits(gpu[:, ng, 1:], cpu[:, nc, 1:])
    same_bits(xrt.take(gpu, ig, axis=2), xrt.take(cpu, ic, axis=2))


@pytest.mark.cuda
def test_gather_broadcast_and_split_arrays():
    a = values("int32", (5, 6, 7, 3))
    cpu, gpu = both(a)
    i = np.array([[0], [4], [-2]])
    j = np.array([[1, -1, 2, 5]])
    ic, ig = both(i)
    jc, jg = both(j)
    same_bits(gpu[ig, jg], cpu[ic, jc])          # broadcast to (3, 4), axes first
    same_bits(gpu[:, ig, jg], cpu[:, ic, jc])    # in the middle
    same_bits(gpu[ig, :, jg], cpu[ic, :, jc])    # split: the result's axes go first
    same_bits(gpu[1, :, ig, jg % 3], cpu[1, :, ic, jc % 3])  # with an integer
    same_bits(gpu[..., jg % 3], cpu[..., jc % 3])


@pytest.mark.cuda
@pytest.mark.parametrize("view", [lambda t: t.T, lambda t: t[::2, ::-1], lambda t: t[:, 1:4],
                                  lambda t: xrt.permute_dims(t, (1, 0))[::3]])
def test_gather_non_contiguous_sources(view):
    a = values("complex128", (12, 9))
    cpu, gpu = both(a)
    idx = np.array([2, -1, 0, 1, 2], dtype=np.int16)
    ic, ig = both(idx)
    same_bits(view(gpu)[ig], view(cpu)[ic])
    same_bits(view(gpu)[:, ig[:3]], view(cpu)[:, ic[:3]])
    # A non-contiguous index array.
    big = np.array([[0, 1, 2], [-1, -2, 0]], dtype=np.int64)
    bc, bg = both(big)
    same_bits(view(gpu)[bg.T], view(cpu)[bc.T])


@pytest.mark.cuda
def test_gather_empty_and_large():
    a = values("float32", (7, 0, 3))
    cpu, gpu = both(a)
    idx = np.array([1, -7, 6])
    ic, ig = both(idx)
    same_bits(gpu[ig], cpu[ic])                       # nothing to move, indices checked
    e = np.zeros((0,), dtype=np.int64)
    ec, eg = both(e)
    same_bits(gpu[eg], cpu[ec])
    b = values("float32", (4, 5))
    bc, bg = both(b)
    same_bits(bg[eg], bc[ec])
    same_bits(bg[:, eg], bc[:, ec])
    large = values("uint16", (1 << 20,))
    lc, lg = both(large)
    pick = rng.integers(-(1 << 20), 1 << 20, size=300_000)
    pc, pg = both(pick)
    same_bits(lg[pg], lc[pc])


@pytest.mark.cuda
def test_gather_out_of_range():
    a = values("float32", (5, 4))
    cpu, gpu = both(a)
    cases = [("int64", [0, 5, 1, -9]), ("int64", [-6]), ("int8", [2, 2, 4, 100]),
             ("uint8", [0, 5, 1]), ("uint64", [2, 2, 4, 100]), ("int16", [1, -6, 7])]
    for dt, idx in cases:
        ic, ig = both(np.array(idx, dtype=dt))
        same_error(lambda: gpu[ig], lambda: cpu[ic])
        same_error(lambda: gpu[:, ig - 1], lambda: cpu[:, ic - 1])
        same_error(lambda: xrt.take(gpu, ig, axis=0), lambda: xrt.take(cpu, ic, axis=0))
    i, j = both(np.array([0, 1])), both(np.array([3, 4]))
    same_error(lambda: gpu[i[1], j[1]], lambda: cpu[i[0], j[0]])  # the second array is bad
    huge = both(np.array([1, 2**63 + 5], dtype=np.uint64))
    same_error(lambda: gpu[huge[1]], lambda: cpu[huge[0]])


# ---- take_along_axis --------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
def test_take_along_axis_every_dtype(name):
    a = values(name, (4, 6, 5))
    cpu, gpu = both(a)
    for axis in (0, 1, -1):
        n = a.shape[axis]
        shape = list(a.shape)
        shape[axis] = 3
        idx = rng.integers(-n, n, size=shape)
        ic, ig = both(idx)
        same_bits(xrt.take_along_axis(gpu, ig, axis=axis), xrt.take_along_axis(cpu, ic, axis=axis))


@pytest.mark.cuda
@pytest.mark.parametrize("index_dtype", INTEGER)
def test_take_along_axis_broadcast_views_and_errors(index_dtype):
    a = values("float16", (6, 7))
    cpu, gpu = both(a)
    idx = np.array([[0, 3, 6, 1]], dtype=index_dtype)  # broadcasts along axis 0
    ic, ig = both(idx)
    same_bits(xrt.take_along_axis(gpu, ig, axis=1), xrt.take_along_axis(cpu, ic, axis=1))
    same_bits(xrt.take_along_axis(gpu.T, ig[:, :3] % 6, axis=1),
              xrt.take_along_axis(cpu.T, ic[:, :3] % 6, axis=1))
    col = np.array([[1], [5], [0]], dtype=index_dtype)
    cc, cg = both(col)
    same_bits(xrt.take_along_axis(gpu[:, ::-2], cg, axis=0),
              xrt.take_along_axis(cpu[:, ::-2], cc, axis=0))
    empty_c, empty_g = both(np.zeros((0, 7), dtype=index_dtype))
    same_bits(xrt.take_along_axis(gpu, empty_g, axis=0), xrt.take_along_axis(cpu, empty_c, axis=0))
    bad = np.array([[0, 7, 1, 9]], dtype=index_dtype)
    bc, bg = both(bad)
    same_error(lambda: xrt.take_along_axis(gpu, bg, axis=1),
               lambda: xrt.take_along_axis(cpu, bc, axis=1))


# ---- scatter ----------------------------------------------------------------------------

def scatter_both(a, index, value):
    """x[index] = value on a CPU and a CUDA copy of a; index(t) builds the index from the
    tensor's device copies of the arrays."""
    cpu, gpu = both(a)
    index_c, index_g = index
    value_c, value_g = value
    cpu[index_c] = value_c
    gpu[index_g] = value_g
    same_bits(gpu, cpu)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
def test_scatter_every_dtype_with_duplicates(name):
    a = values(name, (10, 3))
    idx = np.array([1, -1, 4, 1, 9, 4, 1], dtype=np.int64)  # 1 three times, 4 and 9 twice
    ic, ig = both(idx)
    v = values(name, (7, 3))
    vc, vg = both(v)
    scatter_both(a, (ic, ig), (vc, vg))
    scatter_both(a, ((slice(None), ic[:3] % 3), (slice(None), ig[:3] % 3)),
                 both(values(name, (10, 3))))
    s = values(name, ())
    sc, sg = both(s)
    scatter_both(a, (ic, ig), (sc, sg))  # one value repeated


@pytest.mark.cuda
@pytest.mark.parametrize("index_dtype", INTEGER)
def test_scatter_index_dtypes_and_many_duplicates(index_dtype):
    a = values("float32", (50,))
    info = np.iinfo(index_dtype)
    idx = rng.integers(0 if info.min == 0 else -50, 50, size=5000).astype(index_dtype)
    ic, ig = both(idx)
    v = values("float32", (5000,))
    scatter_both(a, (ic, ig), both(v))


@pytest.mark.cuda
def test_scatter_broadcast_arrays_views_and_errors():
    a = values("int16", (6, 5, 4))
    i = np.array([[0], [5], [-1]])
    j = np.array([[1, -1, 2, 4]])
    ic, ig = both(i)
    jc, jg = both(j)
    scatter_both(a, ((ic, jc), (ig, jg)), both(values("int16", (3, 4, 4))))
    scatter_both(a, ((ic, slice(None), jc % 4), (ig, slice(None), jg % 4)),
                 both(values("int16", (3, 4, 5))))
    scatter_both(a, ((slice(None), jc), (slice(None), jg)), both(values("int16", (1, 4, 4))))
    # A non-contiguous target: the view writes through to its base.
    cpu, gpu = both(a)
    vc, vg = cpu[::2, :, ::-1], gpu[::2, :, ::-1]
    val = both(values("int16", (3, 4, 4)))
    vc[:, jc[0] % 4] = val[0]
    vg[:, jg[0] % 4] = val[1]
    same_bits(gpu, cpu)
    # Out of range: the CPU's message, and nothing written.
    bad = both(np.array([0, 2, 6, 1]))
    before = host(gpu).copy()
    same_error(lambda: gpu.__setitem__(bad[1], 7), lambda: cpu.__setitem__(bad[0], 7))
    same_error(lambda: gpu.__setitem__((slice(None), bad[1] - 9), val[1][0, 0, 0]),
               lambda: cpu.__setitem__((slice(None), bad[0] - 9), val[0][0, 0, 0]))
    assert host(gpu).tobytes() == before.tobytes()
    # Empty selections write nothing.
    e = both(np.zeros((0,), dtype=np.int32))
    scatter_both(a, (e[0], e[1]), both(values("int16", (0, 5, 4))))
