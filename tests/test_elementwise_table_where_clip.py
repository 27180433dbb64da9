"""tests/test_elementwise_table_where_clip.py: the elementwise table as a whole (the
namespace's functions, the standard's signatures, results that do not depend on the thread
count), and where and clip against NumPy. The tests that take the `device` fixture run on
the CPU and on CUDA.
"""

import inspect

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xpuruntime as xrt
from common import COMPLEX, INTEGER, REAL_FLOATING
from common import arrays, assert_tensor_equal, numpy_dtype, tensor, to_numpy
from elementwise_reference import BINARY, UNARY


# ------------------------------------------------------------------ the function table

# The 2025.12 stubs (elementwise_functions.py), signatures exactly as written there.
SIGNATURES = {name: "(x, /)" for name in UNARY}
SIGNATURES.update({name: "(x1, x2, /)" for name in BINARY})
SIGNATURES["clip"] = "(x, /, min=None, max=None)"


def test_the_namespace_has_the_67_elementwise_functions():
    assert len(SIGNATURES) == 67
    missing = [name for name in SIGNATURES if not callable(getattr(xrt, name, None))]
    assert missing == []


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures_are_the_standard_s(name):
    assert str(inspect.signature(getattr(xrt, name))) == SIGNATURES[name]
    assert getattr(xrt, name).__name__ == name


OPERATOR_NAMES = [
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
    "lshift", "rshift"]


def test_operator_signatures_are_the_standard_s():
    names = [f"__{n}__" for n in OPERATOR_NAMES + ["eq", "ne", "lt", "le", "gt", "ge"]]
    names += [f"__r{n}__" for n in OPERATOR_NAMES] + [f"__i{n}__" for n in OPERATOR_NAMES]
    for name in names:
        assert str(inspect.signature(getattr(xrt.Tensor, name))) == "(self, other, /)", name
    for name in ("__neg__", "__pos__", "__abs__", "__invert__"):
        assert str(inspect.signature(getattr(xrt.Tensor, name))) == "(self, /)", name


def test_positional_only_parameters_refuse_keywords():
    # What the "/" of the signatures above promises: x, x1, x2 and other are positional.
    accepted = []
    for name in sorted(SIGNATURES):
        dtype = (UNARY.get(name) or BINARY.get(name) or UNARY["floor"]).dtypes[-1]
        t = xrt.ones((1,), dtype=getattr(xrt, dtype))
        keywords = {"x": t} if name in UNARY or name == "clip" else {"x1": t, "x2": t}
        try:
            getattr(xrt, name)(**keywords)
            accepted.append(name)
        except TypeError as e:
            assert "keyword" in str(e) or "argument" in str(e), (name, e)
    t = xrt.asarray([1.0])
    for name in ("__add__", "__radd__", "__iadd__", "__eq__"):
        try:
            getattr(t, name)(other=t)
            accepted.append(name)
        except TypeError:
            pass
    assert accepted == [], f"accept keyword arguments: {accepted}"


# ------------------------------------------------------------------ threads


@pytest.fixture
def restore_threads():
    before = xrt.num_threads()
    yield
    xrt.set_num_threads(before)


ROWS, COLS = 1023, 1031  # over a million elements, and a partial last chunk


@pytest.mark.parametrize("name, dtype", [
    ("sin", "float32"), ("exp", "float16"), ("sqrt", "complex64"), ("add", "int32"),
    ("divide", "int16"), ("pow", "float64"), ("hypot", "float32"),
    ("floor_divide", "int64"), ("equal", "bfloat16"), ("logaddexp", "float64")])
def test_results_do_not_depend_on_the_thread_count(name, dtype, restore_threads):
    rng = np.random.default_rng(1)
    values = rng.standard_normal((ROWS, COLS)) * 100
    if dtype in COMPLEX:
        values = values + 1j * rng.standard_normal((ROWS, COLS))
    x1 = xrt.astype(xrt.asarray(values), getattr(xrt, dtype))
    # the second operand a reversed row, broadcast over the rows (strides 0 and -1)
    row = np.abs(values[0]) + 1
    if dtype == "bfloat16":
        x2 = xrt.astype(xrt.asarray(row[::-1].copy()), xrt.bfloat16)
    else:
        x2 = xrt.asarray(row.astype(dtype)[::-1])
        assert x2.strides == (-1,)
    args = [x1] if name in UNARY else [x1, x2]
    results = []
    for threads in (1, 2):
        xrt.set_num_threads(threads)
        assert xrt.num_threads() == threads
        results.append(to_numpy(getattr(xrt, name)(*args)).tobytes())
    assert results[0] == results[1]


# ------------------------------------------------------------------ where


@pytest.mark.parametrize("name_a, name_b", [("int8", "int8"), ("int8", "uint8"),
                                            ("float32", "float64"), ("bool", "bool"),
                                            ("float16", "bfloat16"), ("complex64", "float64")])
@settings(max_examples=15)
@given(data=st.data())
def test_where_picks_and_promotes_like_numpy(device, name_a, name_b, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=4)).input_shapes
    condition = data.draw(arrays("bool", shapes[0]))
    x1, x2 = data.draw(arrays(name_a, shapes[1])), data.draw(arrays(name_b, shapes[2]))
    result = xrt.result_type(getattr(xrt, name_a), getattr(xrt, name_b)).name
    expected = np.where(condition, x1.astype(numpy_dtype(result)),
                        x2.astype(numpy_dtype(result)))
    got = xrt.where(tensor(condition, device), tensor(x1, device), tensor(x2, device))
    assert_tensor_equal(got, expected)


def test_where_with_python_scalars():
    condition = xrt.asarray([True, False, True])
    x = xrt.asarray(np.array([1, 2, 3], dtype=np.int8))
    assert_tensor_equal(xrt.where(condition, x, 0), np.array([1, 0, 3], dtype=np.int8))
    assert_tensor_equal(xrt.where(condition, -1, x), np.array([-1, 2, -1], dtype=np.int8))
    f = xrt.asarray([1.0, 2.0, 3.0], dtype=xrt.float32)
    assert_tensor_equal(xrt.where(condition, f, 0.5), np.array([1, 0.5, 3], np.float32))
    with pytest.raises(TypeError, match="where"):
        xrt.where(condition, 1, 2)  # at least one of x1, x2 must be an array
    with pytest.raises(TypeError):
        xrt.where(condition, x, 0.5)  # float next to an integer array


def test_where_errors():
    x = xrt.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="bool"):
        xrt.where(xrt.asarray([1, 0]), x, x)
    with pytest.raises(ValueError):
        xrt.where(xrt.asarray([True, False, True]), x, x)
    with pytest.raises(TypeError):
        xrt.where(xrt.asarray([True, False]), x, xrt.asarray([1, 2], dtype=xrt.int8))


# ------------------------------------------------------------------ clip


@st.composite
def clip_bound(draw, name, x_shape):
    """None, a Python scalar of the array's kind, or an array broadcasting to x's shape."""
    kind = draw(st.sampled_from(["none", "scalar", "array"]))
    if kind == "none":
        return None
    if kind == "scalar":
        if name in INTEGER:
            info = np.iinfo(name)
            return draw(st.integers(int(info.min), int(info.max)))
        return draw(st.one_of(st.integers(-100, 100), st.floats(width=16)))
    skip = draw(st.integers(0, len(x_shape)))
    shape = tuple(draw(st.sampled_from([1, side])) for side in x_shape[skip:])
    return draw(arrays(name, shape))


@pytest.mark.parametrize("name", INTEGER + REAL_FLOATING)
@settings(max_examples=15)
@given(data=st.data())
def test_clip_matches_minimum_of_maximum(name, data):
    x = data.draw(arrays(name, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))
    low = data.draw(clip_bound(name, x.shape), label="min")
    high = data.draw(clip_bound(name, x.shape), label="max")
    np_dtype = numpy_dtype(name)
    compute = np.float32 if name in ("float16", "bfloat16") else np_dtype
    expected = x.astype(compute)
    with np.errstate(all="ignore"):
        for bound, fn in ((low, np.maximum), (high, np.minimum)):
            if bound is not None:
                expected = fn(expected, np.asarray(bound).astype(np_dtype).astype(compute))
    expected = expected.astype(np_dtype)
    # min > max is unspecified: those elements are not compared
    if low is not None and high is not None:
        lo = np.broadcast_to(np.asarray(low).astype(np_dtype), x.shape)
        hi = np.broadcast_to(np.asarray(high).astype(np_dtype), x.shape)
        with np.errstate(invalid="ignore"):
            undefined = lo > hi
    else:
        undefined = np.zeros(x.shape, dtype=bool)

    def as_arg(bound):
        return tensor(bound) if isinstance(bound, np.ndarray) else bound

    got = xrt.clip(tensor(x), as_arg(low), as_arg(high))
    assert got.dtype == getattr(xrt, name) and got.shape == x.shape
    got = to_numpy(got).astype(np.float64)
    expected = expected.astype(np.float64)
    np.testing.assert_array_equal(np.where(undefined, 0, got), np.where(undefined, 0, expected))


def test_clip_special_cases():
    x = xrt.asarray([np.nan, 1.0, 5.0, -5.0])
    assert np.isnan(np.asarray(xrt.clip(x, 0.0, 2.0))[0])  # NaN x
    assert np.isnan(np.asarray(xrt.clip(x, np.nan, 2.0))).all()  # NaN min
    assert np.isnan(np.asarray(xrt.clip(x, max=np.nan))).all()  # NaN max
    assert np.asarray(xrt.clip(x, min=-1.0)).tolist()[1:] == [1.0, 5.0, -1.0]
    assert np.asarray(xrt.clip(x)).tolist()[1:] == [1.0, 5.0, -5.0]


def test_clip_bounds_broadcast_with_x():
    # The standard: min and max "must be compatible with x" (broadcast); the conformance
    # suite expects the result to have the broadcast shape of x, min and max.
    x = xrt.asarray([0.0, 5.0, 10.0])
    got = xrt.clip(x, xrt.asarray([[1.0], [6.0]]), 8.0)
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(got), [[1.0, 5.0, 8.0], [6.0, 6.0, 8.0]])


def test_clip_errors():
    with pytest.raises(TypeError, match="clip.*complex64"):
        xrt.clip(xrt.asarray(np.array([1j], dtype=np.complex64)), 0.0, 1.0)
    with pytest.raises(TypeError, match="clip.*bool"):
        xrt.clip(xrt.asarray([True]), xrt.asarray([False]))
    ints = xrt.asarray(np.array([1, 2], dtype=np.int32))
    with pytest.raises(TypeError, match="clip"):
        xrt.clip(ints, 0.5)  # Note: unspecified by the standard; project choice
    with pytest.raises(TypeError, match="clip"):
        xrt.clip(ints, xrt.asarray([0.0]))
    with pytest.raises(TypeError, match="clip"):
        xrt.clip([1.0, 2.0], 0.0)
    with pytest.raises(ValueError):
        xrt.clip(ints, xrt.asarray(np.array([0, 1, 2], dtype=np.int32)))
