"""tests/test_linalg_products.py: vector_norm, matrix_norm, matrix_power and the views and
products of linalg (matrix_transpose, diagonal, trace, outer, cross, tensordot, vecdot)
against NumPy, special values and overflow included.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
import xpuruntime as xrt
from common import INTEGER, NUMERIC, arrays, assert_tensor_equal, numpy_dtype, tensor, to_numpy
from hypothesis import given, settings
from hypothesis import strategies as st
from linalg_helpers import (linalg, FLOATS, stacks, sizes, elements, matrices, invertible, close,
                            scale_of)


# --------------------------------------------------------------------- norms


VECTOR_ORDS = [2, 1, 0, -1, -2, np.inf, -np.inf, 3, 0.5, -0.5, 2.5]


@pytest.mark.parametrize("name", FLOATS)
@settings(max_examples=100)
@given(data=st.data())
def test_vector_norm_matches_numpy(name, data):
    ord = data.draw(st.sampled_from(VECTOR_ORDS) | st.integers(-5, 5))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    a = data.draw(arrays(name, shape, **elements(name, 100)))
    axis = data.draw(
        st.none()
        | hnp.valid_tuple_axes(a.ndim)
        | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none())
    )
    keepdims = data.draw(st.booleans())
    t = linalg.vector_norm(tensor(a), axis=axis, keepdims=keepdims, ord=ord)
    # The reference in long double, whose range holds the squares of every float64.
    wide = a.astype(np.clongdouble if name.startswith("c") else np.longdouble)
    with np.errstate(divide="ignore", over="ignore"):
        expected = np.linalg.vector_norm(wide, axis=axis, keepdims=keepdims, ord=ord)
    expected = np.asarray(expected).astype(np.float64)
    real = "float32" if name in ("float32", "complex64") else "float64"
    assert t.dtype == getattr(xrt, real) and t.shape == np.shape(expected)
    close(t, expected, real, 0)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_vector_norm_of_small_floats_keeps_the_dtype(name):
    a = np.array([3, 4], dtype=numpy_dtype(name))
    assert_tensor_equal(linalg.vector_norm(tensor(a)), np.asarray(5, dtype=a.dtype))


def test_vector_norm_avoids_overflow_and_underflow():
    for value in (1e200, 1e-200, 1e-310):
        for ord in (2, 3, -2, 0.5):
            t = linalg.vector_norm(xrt.asarray([value, value]), ord=ord)
            np.testing.assert_allclose(float(t), value * 2 ** (1 / ord), rtol=1e-12)
    # float32 squares of these overflow float32, not the double accumulator.
    t = linalg.vector_norm(xrt.asarray([3e30, 4e30], dtype=xrt.float32))
    assert t.dtype == xrt.float32
    np.testing.assert_allclose(float(t), 5e30, rtol=1e-6)


def test_vector_norm_special_values():
    inf, nan = np.inf, np.nan
    norm = linalg.vector_norm
    assert float(norm(xrt.asarray([1.0, inf]))) == inf
    assert float(norm(xrt.asarray([1.0, inf]), ord=-inf)) == 1.0
    assert np.isnan(float(norm(xrt.asarray([nan, inf]))))
    assert np.isnan(float(norm(xrt.asarray([nan, 1.0]), ord=inf)))
    assert float(norm(xrt.asarray([0.0, 2.0]), ord=-1)) == 0.0
    assert float(norm(xrt.asarray([0.0, 2.0, -3.0]), ord=0)) == 2.0
    assert float(norm(xrt.asarray([3 + 4j]))) == 5.0
    # Empty reductions: the norms of no values.
    empty = xrt.zeros((0,))
    assert float(norm(empty)) == 0.0 and float(norm(empty, ord=inf)) == 0.0
    assert float(norm(empty, ord=-inf)) == inf


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("name", FLOATS)
@settings(max_examples=60)
@given(data=st.data())
def test_matrix_norm_matches_numpy(name, data):
    ord = data.draw(st.sampled_from(MATRIX_ORDS))
    a = matrices(data, name, data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    keepdims = data.draw(st.booleans())
    t = linalg.matrix_norm(tensor(a), keepdims=keepdims, ord=ord)
    expected = np.linalg.matrix_norm(a, keepdims=keepdims, ord=ord)
    real = "float32" if name in ("float32", "complex64") else "float64"
    assert t.dtype == getattr(xrt, real) and t.shape == expected.shape
    close(t, expected, real, scale_of(a) * 10)


# -------------------------------------------------------------- matrix_power


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_matrix_power_matches_numpy(name, data):
    n = data.draw(sizes)
    power = data.draw(st.integers(-3, 6))
    a = matrices(data, name, n, n, bound=2)
    if power < 0:
        a = invertible(a)
    t = linalg.matrix_power(tensor(a), power)
    wide = a.astype(np.complex128 if name.startswith("c") else np.float64)
    expected = np.linalg.matrix_power(wide, power) if a.size else np.zeros(a.shape)
    assert t.dtype == getattr(xrt, name) and t.shape == a.shape
    close(t, expected, name, scale_of(expected))


def test_matrix_power_zero_and_one():
    a = np.arange(8.0).reshape(2, 2, 2)
    assert_tensor_equal(linalg.matrix_power(tensor(a), 0), np.broadcast_to(np.eye(2), a.shape))
    t = tensor(a)
    once = linalg.matrix_power(t, 1)
    assert_tensor_equal(once, a)
    assert once._data_ptr() != t._data_ptr()  # a new array, not the input


# ------------------------------------------------------------ views and products


@pytest.mark.parametrize("name", ["bool", "int16", "float32", "complex128"])
@given(data=st.data())
def test_matrix_transpose_and_diagonal(name, data):
    a = data.draw(arrays(name, data.draw(stacks) + (data.draw(sizes), data.draw(sizes))))
    assert_tensor_equal(xrt.matrix_transpose(tensor(a)), np.swapaxes(a, -1, -2))
    assert_tensor_equal(linalg.matrix_transpose(tensor(a)), np.swapaxes(a, -1, -2))
    offset = data.draw(st.integers(-7, 7))
    assert_tensor_equal(
        linalg.diagonal(tensor(a), offset=offset), np.diagonal(a, offset, axis1=-2, axis2=-1)
    )


def test_diagonal_is_a_view_and_takes_any_offset():
    t = xrt.asarray(np.arange(12.0).reshape(3, 4))
    d = linalg.diagonal(t, offset=1)
    assert d._data_ptr() == t._data_ptr() + 8
    for offset in (2**62, -(2**62), -(2**63)):
        assert linalg.diagonal(t, offset=offset).shape == (0,)


@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_trace_matches_numpy(name, data):
    a = data.draw(
        arrays(
            name,
            data.draw(stacks) + (data.draw(sizes), data.draw(sizes)),
            **({} if name in INTEGER else elements(name)),
        )
    )
    offset = data.draw(st.integers(-4, 4))
    t = linalg.trace(tensor(a), offset=offset)
    signed = name.startswith("int")
    wide = "int64" if signed else "uint64" if name in INTEGER else None
    if name in ("float16", "bfloat16"):
        expected = np.trace(a.astype(np.float32), offset, axis1=-2, axis2=-1).astype(a.dtype)
        assert t.dtype == getattr(xrt, name) and t.shape == expected.shape
        np.testing.assert_allclose(
            to_numpy(t).astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=0.1
        )
        return
    expected = np.trace(a, offset, axis1=-2, axis2=-1, dtype=wide)
    if name in INTEGER:
        assert_tensor_equal(t, np.asarray(expected))
    else:
        assert t.dtype == getattr(xrt, name)
        close(t, expected, name, scale_of(a) * 5)


def test_trace_dtype_argument():
    a = np.array([[100, 1], [2, 100]], dtype=np.int8)
    assert_tensor_equal(linalg.trace(tensor(a), dtype=xrt.int8), np.int8(-56))
    assert_tensor_equal(linalg.trace(tensor(a), dtype=xrt.float64), np.float64(200))


@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_outer_is_the_elementwise_product(name, data):
    # Note: complex infinities multiply by C99's rules here (the standard leaves them to
    # the implementation), NumPy's by the textbook formula; only finite values compare.
    # Magnitudes stay where no product overflows (there, fused and unfused differ wildly).
    opts = {}
    if name.startswith("complex"):
        opts = {"allow_nan": False, "allow_infinity": False, "max_magnitude": 1e15}
    x = data.draw(arrays(name, (data.draw(sizes),), **opts))
    y = data.draw(arrays(name, (data.draw(sizes),), **opts))
    with np.errstate(all="ignore"):
        expected = np.multiply.outer(x, y)
    t = linalg.outer(tensor(x), tensor(y))
    if name.startswith("complex"):  # NumPy may fuse ac - bd into one rounding
        assert t.dtype == getattr(xrt, name)
        np.testing.assert_allclose(to_numpy(t), expected, rtol=4 * np.finfo(x.dtype).eps)
    else:
        assert_tensor_equal(t, expected)


def test_outer_keeps_signed_zeros():
    t = linalg.outer(xrt.asarray([-0.0, 1.0]), xrt.asarray([1.0, -0.0]))
    assert np.array_equal(np.signbit(to_numpy(t)), [[True, False], [False, True]])


@pytest.mark.parametrize(
    "name", ["int8", "uint16", "int64", "float32", "float64", "complex64", "complex128"]
)
@given(data=st.data())
def test_cross_matches_numpy(name, data):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=3)
    )
    axis = data.draw(st.integers(-min(len(s) for s in shapes.input_shapes), -1))
    s1, s2 = (list(s) for s in shapes.input_shapes)
    s1[axis] = s2[axis] = 3
    x = data.draw(arrays(name, tuple(s1), **({} if name in INTEGER else elements(name))))
    y = data.draw(arrays(name, tuple(s2), **({} if name in INTEGER else elements(name))))
    t = linalg.cross(tensor(x), tensor(y), axis=axis)
    with np.errstate(all="ignore"):
        expected = np.cross(x, y, axis=axis)
    if name in INTEGER:
        assert_tensor_equal(t, expected)
    else:
        assert t.dtype == getattr(xrt, name)
        close(t, expected, name, 200)


@pytest.mark.parametrize(
    "name", ["int16", "uint8", "float32", "float64", "complex64", "complex128"]
)
@given(data=st.data())
def test_tensordot_matches_numpy(name, data):
    ndim1, ndim2 = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    shape1 = data.draw(hnp.array_shapes(min_dims=ndim1, max_dims=ndim1, min_side=0, max_side=3))
    shape2 = list(
        data.draw(hnp.array_shapes(min_dims=ndim2, max_dims=ndim2, min_side=0, max_side=3))
    )
    if data.draw(st.booleans()):
        n = data.draw(st.integers(0, min(ndim1, ndim2)))
        axes = n
        pairs = list(zip(range(ndim1 - n, ndim1), range(n)))
    else:
        count = data.draw(st.integers(0, min(ndim1, ndim2)))
        first = data.draw(st.permutations(range(ndim1)))[:count]
        second = data.draw(st.permutations(range(ndim2)))[:count]
        first = [a - ndim1 if data.draw(st.booleans()) else a for a in first]
        axes = (tuple(first), tuple(second))
        pairs = list(zip(first, second))
    for i, j in pairs:
        shape2[j] = shape1[i]
    opts = {} if name in INTEGER else elements(name)
    x = data.draw(arrays(name, shape1, **opts))
    y = data.draw(arrays(name, tuple(shape2), **opts))
    t = xrt.tensordot(tensor(x), tensor(y), axes=axes)
    with np.errstate(all="ignore"):
        expected = np.tensordot(
            x, y, axes=axes if isinstance(axes, int) else (list(axes[0]), list(axes[1]))
        )
    if name in INTEGER:
        assert_tensor_equal(t, np.asarray(expected, dtype=name))
    else:
        assert t.dtype == getattr(xrt, name) and t.shape == expected.shape
        close(t, expected, name, 100 * max(1, x.size))
    assert linalg.tensordot is xrt.tensordot


@pytest.mark.parametrize(
    "name", ["int8", "uint32", "float32", "float64", "complex64", "complex128"]
)
@given(data=st.data())
def test_vecdot_matches_numpy(name, data):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=4)
    )
    s1, s2 = (list(s) for s in shapes.input_shapes)
    axis = data.draw(st.integers(-min(len(s1), len(s2)), -1))
    s2[axis] = s1[axis]
    opts = {} if name in INTEGER else elements(name)
    x = data.draw(arrays(name, tuple(s1), **opts))
    y = data.draw(arrays(name, tuple(s2), **opts))
    t = xrt.vecdot(tensor(x), tensor(y), axis=axis)
    with np.errstate(all="ignore"):
        expected = np.asarray(np.sum(np.conj(x) * y, axis=axis, dtype=x.dtype))
    if name in INTEGER:
        assert_tensor_equal(t, expected)
    else:
        assert t.dtype == getattr(xrt, name) and t.shape == expected.shape
        close(t, expected, name, 100 * max(1, x.shape[axis]))
    assert linalg.vecdot is xrt.vecdot


def test_vecdot_conjugates_the_first_argument():
    t = xrt.vecdot(xrt.asarray([1j, 2j, 3j]), xrt.asarray([1, 2j, 3]))
    assert complex(t) == 4 - 10j
