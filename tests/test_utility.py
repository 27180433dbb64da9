"""tests/test_utility.py: diff against NumPy (n, axis, prepend, append,
dtypes, layouts, errors). all and any are in test_reductions.py."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import ALL, arrays, assert_tensor_equal, tensor

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)


def reference_diff(a, axis, n):
    """np.diff; bfloat16 steps through float32, rounding after each step."""
    if a.dtype.name != "bfloat16":
        return np.diff(a, axis=axis, n=n)
    for _ in range(n):
        a = np.diff(a.astype(np.float32), axis=axis).astype(a.dtype)
    return a


@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_diff_matches_numpy(name, data):
    a = data.draw(arrays(name, shapes))  # integers wrap, NaN and inf included
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(0, 4))
    expected = reference_diff(a, axis=axis, n=n)
    assert_tensor_equal(xrt.diff(tensor(a), axis=axis, n=n), expected)


@pytest.mark.parametrize("name", ["int16", "uint8", "float32", "complex64", "bool"])
@given(data=st.data())
def test_prepend_and_append_join_along_the_axis(name, data):
    a = data.draw(arrays(name, shapes))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(1, 3))
    edges = {}
    for key in ("prepend", "append"):
        if data.draw(st.booleans()):
            shape = list(a.shape)
            shape[axis] = data.draw(st.integers(0, 3))
            edges[key] = data.draw(arrays(name, tuple(shape)))
    expected = np.diff(a, axis=axis, n=n, **edges)
    given_edges = {k: tensor(v) for k, v in edges.items()}
    assert_tensor_equal(xrt.diff(tensor(a), axis=axis, n=n, **given_edges),
                        expected)


def test_scalar_edges_take_the_dtype_of_x():
    t = xrt.asarray(np.array([[1, 4], [9, 16]], dtype=np.int8))
    out = xrt.diff(t, axis=0, prepend=0, append=100)
    assert_tensor_equal(out, np.diff(np.array([[1, 4], [9, 16]], np.int8),
                                     axis=0, prepend=np.int8(0),
                                     append=np.int8(100)))
    f = xrt.diff(xrt.asarray([0.5, 2.0]), prepend=1, append=0.25)
    assert_tensor_equal(f, np.array([-0.5, 1.5, -1.75]))


def test_mixed_dtypes_promote():
    x = xrt.asarray(np.array([1, 2], dtype=np.int8))
    edge = xrt.asarray(np.array([1000], dtype=np.int16))
    assert_tensor_equal(xrt.diff(x, prepend=edge),
                        np.array([-999, 1], dtype=np.int16))
    with pytest.raises(TypeError):
        xrt.diff(x, append=xrt.asarray([1.5]))


def test_diff_reads_strided_views():
    base = np.arange(60, dtype=np.int64).reshape(6, 10) ** 2
    for view in (base.T, base[::2, ::-3], base[:, 1:2]):
        for axis in (0, 1, -1):
            for n in (1, 2):
                assert_tensor_equal(xrt.diff(xrt.asarray(view), axis=axis, n=n),
                                    np.diff(view, axis=axis, n=n))


def test_n_zero_and_n_past_the_length():
    t = xrt.asarray([1.0, 5.0, 2.0])
    assert_tensor_equal(xrt.diff(t, n=0), np.array([1.0, 5.0, 2.0]))
    assert xrt.diff(t, n=3).shape == (0,)
    assert xrt.diff(t, n=7).shape == (0,)


def test_diff_errors():
    t = xrt.ones((2, 3))
    with pytest.raises(IndexError, match="diff: axis 2 is out of bounds"):
        xrt.diff(t, axis=2)
    with pytest.raises(ValueError, match="n must be non-negative"):
        xrt.diff(t, n=-1)
    with pytest.raises(ValueError, match="at least one dimension"):
        xrt.diff(xrt.asarray(1.0))
    with pytest.raises(ValueError, match="prepend has shape"):
        xrt.diff(t, axis=1, prepend=xrt.ones((3, 1)))
    with pytest.raises(ValueError, match="append has shape"):
        xrt.diff(t, axis=0, append=xrt.ones((1,)))
    with pytest.raises(TypeError, match="n must be an int"):
        xrt.diff(t, n=1.0)
    with pytest.raises(TypeError, match="axis must be an int"):
        xrt.diff(t, axis=1.5)
    with pytest.raises(TypeError):
        xrt.diff(t, axis=None)
    with pytest.raises(TypeError, match="prepend must be"):
        xrt.diff(t, prepend="a")
