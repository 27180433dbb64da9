"""tests/test_statistical.py: cumulative_sum and cumulative_prod against NumPy
(axis, dtype, include_initial, layouts, errors). The reductions of the same
spec section are in test_reductions.py."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import (ALL, COMPLEX, INTEGER, SIGNED, arrays, assert_tensor_equal,
                    numpy_dtype, tensor)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)
OPS = {"cumulative_sum": np.cumulative_sum, "cumulative_prod": np.cumulative_prod}


def accumulation_dtype(name):
    """int64 for bool and signed integers, uint64 for unsigned, else name."""
    if name == "bool" or name in SIGNED:
        return "int64"
    return "uint64" if name in INTEGER else name


def reference(op, a, axis, include_initial):
    """NumPy's scan in the result dtype; 16-bit floats step in float32 and
    round each result once, as xpuruntime does."""
    result = accumulation_dtype(a.dtype.name)
    if result in ("float16", "bfloat16"):
        out = OPS[op](a.astype(np.float32), axis=axis,
                      include_initial=include_initial)
        return out.astype(a.dtype)
    return OPS[op](a, axis=axis, dtype=result, include_initial=include_initial)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_scans_match_numpy_step_by_step(op, name, data):
    # Finite, moderate values: each step is one add or multiply, so the
    # results are NumPy's bit for bit (integers wrap alike).
    bounds = {} if name == "bool" or name in INTEGER else (
        {"max_magnitude": 4} if name in COMPLEX else {"min_value": -4, "max_value": 4})
    a = data.draw(arrays(name, shapes, **bounds))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    include_initial = data.draw(st.booleans())
    kwargs = {"include_initial": include_initial}
    if a.ndim > 1 or data.draw(st.booleans()):
        kwargs["axis"] = axis
    expected = reference(op, a, kwargs.get("axis", 0), include_initial)
    result = getattr(xrt, op)(tensor(a), **kwargs)
    if name in COMPLEX and op == "cumulative_prod":
        # Note: NumPy's complex multiply fuses multiply-adds; ours rounds each
        # product, so the two may differ in the last place.
        assert result.dtype == getattr(xrt, name)
        eps = np.finfo(a.dtype).eps
        np.testing.assert_allclose(np.asarray(result), expected,
                                   rtol=4 * a.shape[kwargs.get("axis", 0)] * eps)
    else:
        assert_tensor_equal(result, expected)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("source, target", [
    ("int8", "int8"), ("int8", "int16"), ("uint8", "int32"), ("int64", "uint8"),
    ("float32", "float64"), ("float64", "float32"), ("bool", "int8"),
    ("int32", "float32"), ("complex64", "complex128")])
def test_dtype_argument_casts_before_scanning(op, source, target):
    a = np.array([[3, 100, 1, 2], [0, 1, 7, 2]], dtype=source)
    result = getattr(xrt, op)(xrt.asarray(a), axis=1, dtype=getattr(xrt, target))
    assert_tensor_equal(result, OPS[op](a.astype(target), axis=1, dtype=target))


@pytest.mark.parametrize("op, identity", [("cumulative_sum", 0),
                                          ("cumulative_prod", 1)])
def test_include_initial_starts_with_the_identity(op, identity):
    t = xrt.asarray([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])
    out = np.asarray(getattr(xrt, op)(t, axis=0, include_initial=True))
    assert out.shape == (4, 2)
    np.testing.assert_array_equal(out[0], [identity, identity])
    out = np.asarray(getattr(xrt, op)(t, axis=-1, include_initial=True))
    assert out.shape == (3, 3)
    np.testing.assert_array_equal(out[:, 0], [identity] * 3)
    empty = getattr(xrt, op)(xrt.zeros((0,), dtype=xrt.int8), include_initial=True)
    assert_tensor_equal(empty, np.array([identity], dtype=np.int64))


LAYOUTS = {
    "transposed": lambda a: a.T,
    "strided": lambda a: a[::2, ::-3],
    "middle": lambda a: a.reshape(6, 5, 8)[:, 1:4, :],
}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_scans_read_strided_views(op, layout):
    base = np.random.default_rng(3).integers(-3, 4, (30, 8)).astype(np.int32)
    view = LAYOUTS[layout](base)
    for axis in range(-view.ndim, view.ndim):
        assert_tensor_equal(getattr(xrt, op)(xrt.asarray(view), axis=axis),
                            OPS[op](view, axis=axis, dtype=np.int64))


@pytest.mark.parametrize("shape, axis", [((200_000,), 0), ((3000, 70), 0),
                                         ((70, 3000), 1), ((50, 40, 30), 1)])
def test_large_scans_match_numpy_on_any_thread_count(shape, axis):
    a = np.random.default_rng(4).standard_normal(shape)
    t = xrt.asarray(a)
    threads = xrt.num_threads()
    try:
        xrt.set_num_threads(1)
        single = np.asarray(xrt.cumulative_sum(t, axis=axis))
        xrt.set_num_threads(max(2, threads))
        multi = np.asarray(xrt.cumulative_sum(t, axis=axis))
    finally:
        xrt.set_num_threads(threads)
    assert single.tobytes() == multi.tobytes()
    np.testing.assert_array_equal(single, np.cumulative_sum(a, axis=axis))


def test_special_values_follow_repeated_add_and_multiply():
    inf, nan = np.inf, np.nan
    s = np.asarray(xrt.cumulative_sum(xrt.asarray([1.0, inf, -inf, 2.0])))
    np.testing.assert_array_equal(s, [1.0, inf, nan, nan])
    p = np.asarray(xrt.cumulative_prod(xrt.asarray([2.0, 0.0, inf, 3.0])))
    np.testing.assert_array_equal(p, [2.0, 0.0, nan, nan])
    z = np.asarray(xrt.cumulative_sum(xrt.asarray([-0.0, -0.0])))
    assert np.all(np.signbit(z))  # -0.0 + -0.0 stays -0.0


def test_zero_dimensional_input_is_one_element():
    # The standard leaves 0-d input unspecified; NumPy treats it as 1-D.
    assert_tensor_equal(xrt.cumulative_sum(xrt.asarray(5)), np.array([5]))
    assert_tensor_equal(xrt.cumulative_prod(xrt.asarray(2.0), include_initial=True),
                        np.array([1.0, 2.0]))


@pytest.mark.parametrize("op", OPS)
def test_scan_errors(op):
    f = getattr(xrt, op)
    with pytest.raises(ValueError, match=f"{op}: axis is required"):
        f(xrt.ones((2, 3)))
    with pytest.raises(IndexError, match=f"{op}: axis 2 is out of bounds"):
        f(xrt.ones((2, 3)), axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        f(xrt.ones((2, 3)), axis=(0,))
    with pytest.raises(TypeError, match="numeric"):
        f(xrt.ones((3,)), dtype=xrt.bool)
    with pytest.raises(TypeError, match="imaginary"):
        f(xrt.asarray([1j]), dtype=xrt.float64)
    with pytest.raises(TypeError, match="x must be"):
        f(numpy_dtype("float32"))
