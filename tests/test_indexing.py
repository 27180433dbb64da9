"""tests/test_indexing.py: x[key] against NumPy (whose semantics xpuruntime follows where
the standard is silent): basic indices and their views, advanced indices and gathers, large
(threaded) inputs; boolean masks and nonzero are in test_masks.py, x[key] = value, take and
the errors in test_indexing_setitem_take.py. The tests that take the `device` fixture run on
the CPU and on CUDA.
"""

import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import ALL, INTEGER, assert_tensor_equal, numpy_dtype, tensor
from indexing_helpers import xrt_key, numpy_getitem, shares_memory, shapes, advanced_keys


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
