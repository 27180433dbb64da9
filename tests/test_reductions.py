"""tests/test_reductions.py: the reducing functions against NumPy: sum, prod,
max, min, mean, var, std, all, any, count_nonzero, argmax, argmin (axes,
keepdims, dtypes, empty and strided inputs, special values, errors, and
results that do not depend on the thread count). The exact reductions, the empty and 0-d
cases and the errors take the `device` fixture and run on every device. On CUDA against the
CPU: test_reductions_cuda.py.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import (ALL, COMPLEX, FLOATING, INTEGER, SIGNED, arrays, assert_tensor_equal,
                    numpy_dtype, tensor, to_numpy, wide)


# NumPy warns about the NaNs and empty reductions the references meet.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REAL = tuple(n for n in ALL if n not in COMPLEX)  # bool, integers, real floats
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
nonempty = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


def axes(ndim):
    """None, one axis (possibly negative) or a tuple of distinct axes."""
    options = st.none() | hnp.valid_tuple_axes(ndim)
    return options | st.integers(-ndim, ndim - 1) if ndim else options


def one_axis(ndim):
    return st.none() | st.integers(-ndim, ndim - 1) if ndim else st.none()


def sum_dtype(name):
    """The standard's default: integers widen to the 64-bit type of their
    signedness, bool counts as int64, floating types are kept."""
    if name == "bool" or name in SIGNED:
        return "int64"
    return "uint64" if name in INTEGER else name


def finfo(name):
    """np.finfo, bfloat16 included."""
    if name == "bfloat16":
        return pytest.importorskip("ml_dtypes").finfo(numpy_dtype(name))
    return np.finfo(numpy_dtype(name))


# ------------------------------------------------------- exact reductions


@pytest.mark.parametrize("name", ("bool",) + INTEGER)
@given(data=st.data())
def test_integer_sums_and_products_are_exact(device, name, data):
    a = data.draw(arrays(name, shapes))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    t = tensor(a, device)
    for op in ("sum", "prod"):
        # NumPy's 64-bit arithmetic wraps exactly as ours does.
        expected = getattr(np, op)(a, axis=axis, keepdims=keepdims,
                                   dtype=sum_dtype(name))
        assert_tensor_equal(getattr(xrt, op)(t, axis=axis, keepdims=keepdims),
                            np.asarray(expected))


@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_max_and_min_match_numpy(device, name, data):
    a = data.draw(arrays(name, nonempty))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    for op in ("max", "min"):
        expected = getattr(np, op)(a, axis=axis, keepdims=keepdims)  # NaN wins
        assert_tensor_equal(getattr(xrt, op)(tensor(a, device), axis=axis,
                                             keepdims=keepdims),
                            np.asarray(expected, dtype=a.dtype))


@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_all_any_count_nonzero_match_numpy(device, name, data):
    a = data.draw(arrays(name, shapes))  # NaN, inf and -0.0 included
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    t = tensor(a, device)
    truth = a.astype(np.float32) != 0 if name == "bfloat16" else a != 0
    for op, reference in (("all", np.all), ("any", np.any)):
        assert_tensor_equal(getattr(xrt, op)(t, axis=axis, keepdims=keepdims),
                            np.asarray(reference(truth, axis=axis,
                                                 keepdims=keepdims)))
    counts = np.sum(truth, axis=axis, keepdims=keepdims, dtype=np.int64)
    assert_tensor_equal(xrt.count_nonzero(t, axis=axis, keepdims=keepdims),
                        np.asarray(counts))


@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_argmax_and_argmin_find_the_first_extreme(device, name, data):
    a = data.draw(arrays(name, nonempty))
    axis = data.draw(one_axis(a.ndim))
    keepdims = data.draw(st.booleans())
    # NumPy's rules: the first occurrence, and the first NaN before that.
    values = a.astype(np.float32) if name == "bfloat16" else a
    for op in ("argmax", "argmin"):
        expected = getattr(np, op)(values, axis=axis, keepdims=keepdims)
        assert_tensor_equal(getattr(xrt, op)(tensor(a, device), axis=axis,
                                             keepdims=keepdims),
                            np.asarray(expected, dtype=np.int64))


def test_argmax_ties_and_nans_take_the_first(device):
    t = xrt.asarray([1.0, 3.0, 3.0, np.nan, 0.0, np.nan], device=device)
    assert int(xrt.argmax(t)) == 3 and int(xrt.argmin(t)) == 3
    t = xrt.asarray([[2, 5, 5], [5, 2, 2]], device=device)
    assert_tensor_equal(xrt.argmax(t, axis=1), np.array([1, 0]))
    assert_tensor_equal(xrt.argmin(t, axis=0), np.array([0, 1, 1]))
    assert xrt.argmax(t, keepdims=True).shape == (1, 1)


# ---------------------------------------------------------------- floats


@pytest.mark.parametrize("name", FLOATING)
@given(data=st.data())
def test_float_sums_products_and_means_match_within_rounding(name, data):
    bounds = ({"max_magnitude": 100} if name in COMPLEX else
              {"min_value": -100, "max_value": 100})
    a = data.draw(arrays(name, shapes, allow_nan=False, allow_infinity=False,
                         **bounds))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    t = tensor(a)
    eps = float(finfo(name).eps)
    magnitude = np.sum(np.abs(wide(a)), axis=axis, keepdims=keepdims)
    count = max(a.size // max(magnitude.size, 1), 1)
    cases = (("sum", np.sum(wide(a), axis=axis, keepdims=keepdims),
              (count + 1) * eps * magnitude),
             ("mean", np.mean(wide(a), axis=axis, keepdims=keepdims)
              if a.size else np.full(magnitude.shape, np.nan, wide(a).dtype),
              (count + 2) * eps * magnitude / count))
    for op, expected, atol in cases:
        result = getattr(xrt, op)(t, axis=axis, keepdims=keepdims)
        assert result.dtype == getattr(xrt, name)
        assert result.shape == np.shape(expected)
        # The result's own rounding: half a unit in the last place, at least half the
        # smallest subnormal.
        tiny = float(finfo(name).smallest_subnormal)
        np.testing.assert_allclose(to_numpy(result).astype(expected.dtype), expected,
                                   rtol=eps, atol=np.max(atol, initial=0) + tiny)
    # Products: factors within [-2, 2]; results past the dtype's range or
    # near its underflow are left out (rounding there is not relative).
    small = a / 50
    product = xrt.prod(tensor(small), axis=axis, keepdims=keepdims)
    expected = np.prod(wide(small), axis=axis, keepdims=keepdims)
    info = finfo(name)
    size = np.abs(expected)
    comparable = ((size < float(info.max) / 16) & (size > float(info.tiny) * 16)
                  | (size == 0))
    got = to_numpy(product).astype(expected.dtype)
    np.testing.assert_allclose(got[comparable], expected[comparable],
                               rtol=8 * count * eps)


@pytest.mark.parametrize("name", FLOATING)
@given(data=st.data())
def test_var_and_std_match_numpy(name, data):
    bounds = ({"max_magnitude": 100} if name in COMPLEX else
              {"min_value": -100, "max_value": 100})
    a = data.draw(arrays(name, nonempty, allow_nan=False, allow_infinity=False,
                         **bounds))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([0, 1, 0.5, 2.0]))
    real = {"complex64": "float32", "complex128": "float64"}.get(name, name)
    eps = float(finfo(real).eps)
    expected_var = np.var(wide(a), axis=axis, keepdims=keepdims, ddof=correction)
    count = a.size // max(np.size(expected_var), 1)
    if count - correction <= 0:  # the standard says NaN
        expected_var = np.full(np.shape(expected_var), np.nan)
    scale = np.max(np.abs(wide(a)), initial=0) ** 2
    tiny = float(finfo(real).smallest_normal)  # squares of tiny values underflow
    for op, expected, atol in (
            ("var", expected_var, 16 * count * eps * scale + tiny),
            ("std", np.sqrt(expected_var), 4 * np.sqrt(count * eps * scale + tiny))):
        result = getattr(xrt, op)(tensor(a), axis=axis, keepdims=keepdims,
                                  correction=correction)
        assert result.dtype == getattr(xrt, real)  # complex gives real
        assert result.shape == np.shape(expected)
        np.testing.assert_allclose(to_numpy(result).astype(np.float64),
                                   expected, rtol=16 * eps, atol=atol)


def test_small_floats_accumulate_in_float32():
    # Alone, float16 stalls at 2048 (2048 + 1 rounds back) and bfloat16 at 256.
    assert float(xrt.sum(xrt.ones((4096,), dtype=xrt.float16))) == 4096
    assert float(xrt.sum(xrt.ones((1000,), dtype=xrt.bfloat16))) == 1000
    big = xrt.asarray(np.full(4, 60000, dtype=np.float16))
    assert float(xrt.mean(big)) == 60000  # the sum, 240000, exceeds float16
    assert float(xrt.std(big)) == 0


def test_special_values_propagate():
    nan, inf = np.nan, np.inf
    assert float(xrt.sum(xrt.asarray([1.0, inf, 2.0]))) == inf
    assert np.isnan(float(xrt.sum(xrt.asarray([inf, -inf]))))
    assert np.isnan(float(xrt.prod(xrt.asarray([0.0, inf]))))
    for op in ("sum", "mean", "var", "std", "max", "min"):
        assert np.isnan(float(getattr(xrt, op)(xrt.asarray([1.0, nan, 3.0]))))
    assert float(xrt.max(xrt.asarray([-inf, -inf]))) == -inf
    assert float(xrt.min(xrt.asarray([inf, 1.0]))) == 1.0
    # A NaN in either component of a complex mean makes it NaN.
    m = complex(xrt.mean(xrt.asarray([1 + 1j, complex(nan, 0)])))
    assert np.isnan(m.real)


# ------------------------------------------------------- dtypes and empty


@pytest.mark.parametrize("source, target", [
    ("int8", "int8"), ("int8", "int16"), ("uint8", "uint8"), ("int64", "uint8"),
    ("int32", "float64"), ("float32", "float64"), ("float64", "float32"),
    ("bool", "int32"), ("float32", "complex64"), ("float16", "float32"),
    ("uint16", "int64")])
@pytest.mark.parametrize("op", ["sum", "prod"])
def test_dtype_argument_sets_the_result_dtype(device, op, source, target):
    a = np.array([[100, 27, 1], [0, 1, 3]], dtype=source)
    for axis in (0, None):
        t = getattr(xrt, op)(xrt.asarray(a, device=device), axis=axis,
                             dtype=getattr(xrt, target))
        expected = getattr(np, op)(a.astype(target), axis=axis, dtype=target)
        assert_tensor_equal(t, np.asarray(expected))


@pytest.mark.parametrize("name", ALL)
def test_result_dtypes_follow_the_standard(name):
    t = xrt.zeros((2, 3), dtype=getattr(xrt, name))
    default = sum_dtype(name)
    assert xrt.sum(t).dtype.name == default
    assert xrt.prod(t).dtype.name == default
    assert xrt.all(t).dtype == xrt.any(t).dtype == xrt.bool
    assert xrt.count_nonzero(t).dtype == xrt.int64
    if name != "bool":
        floating = name if name in FLOATING else "float64"
        assert xrt.mean(t).dtype.name == floating
        real = {"complex64": "float32", "complex128": "float64"}
        assert xrt.var(t).dtype.name == real.get(floating, floating)
    if name not in COMPLEX:
        assert xrt.max(t).dtype.name == xrt.min(t).dtype.name == name
        assert xrt.argmax(t).dtype == xrt.argmin(t).dtype == xrt.int64


@pytest.mark.parametrize("name", ["bool", "int8", "uint16", "float32",
                                  "complex64"])
def test_reductions_of_nothing_give_their_identity(device, name):
    a = np.zeros((0, 3), dtype=name)
    t = xrt.asarray(a, device=device)
    dtype = sum_dtype(name)
    assert_tensor_equal(xrt.sum(t), np.zeros((), dtype=dtype))
    assert_tensor_equal(xrt.sum(t, axis=0), np.zeros(3, dtype))
    assert_tensor_equal(xrt.sum(t, axis=1), np.zeros(0, dtype))
    assert_tensor_equal(xrt.prod(t, axis=0), np.ones(3, dtype))
    assert_tensor_equal(xrt.all(t, axis=0), np.ones(3, bool))
    assert_tensor_equal(xrt.any(t), np.zeros((), bool))
    assert_tensor_equal(xrt.count_nonzero(t, axis=0), np.zeros(3, np.int64))
    if name in FLOATING:
        assert np.all(np.isnan(to_numpy(xrt.mean(t, axis=0))))
        assert np.all(np.isnan(to_numpy(xrt.var(t, axis=0))))


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_extremes_of_nothing_raise(device, op):
    with pytest.raises(ValueError, match=op):
        getattr(xrt, op)(xrt.zeros((0, 3), device=device))
    with pytest.raises(ValueError, match="no elements"):
        getattr(xrt, op)(xrt.zeros((3, 0), device=device), axis=1)
    # Empty results are fine when each has elements behind it.
    assert getattr(xrt, op)(xrt.zeros((0, 3), device=device), axis=1).shape == (0,)


def test_zero_dimensional_and_empty_tuple_axes(device):
    t = xrt.asarray(2.5, device=device)
    for op in ("sum", "prod", "max", "min", "mean"):
        assert float(getattr(xrt, op)(t)) == 2.5
    assert int(xrt.argmax(t)) == 0
    m = xrt.asarray([[1.0, -2.0], [0.0, 4.0]], device=device)
    assert_tensor_equal(xrt.sum(m, axis=()), np.array([[1.0, -2.0], [0.0, 4.0]]))
    assert_tensor_equal(xrt.count_nonzero(m, axis=()),
                        np.array([[1, 1], [0, 1]]))
    assert_tensor_equal(xrt.var(m, axis=()), np.zeros((2, 2)))
    assert xrt.sum(m, axis=(), keepdims=True).shape == (2, 2)


# -------------------------------------------------------- memory layouts


LAYOUTS = {
    "transposed": lambda a: a.T,
    "every_other": lambda a: a[::2, ::-3],
    "reversed": lambda a: a[::-1, ::-1],
    "middle_axis": lambda a: a.reshape(6, 5, 8)[:, 1:4, :],
    "broadcast": lambda a: np.broadcast_to(a[:1], (7,) + a.shape[1:]),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean", "var",
                                "all", "any", "count_nonzero", "argmax",
                                "argmin"])
def test_strided_views_read_like_copies(op, layout):
    base = np.random.default_rng(1).integers(-3, 4, (30, 8)).astype(np.float64)
    view = LAYOUTS[layout](base)
    t = xrt.asarray(view)
    assert not t._is_contiguous() or layout == "broadcast"
    axes_list = [None, 0, -1] if op.startswith("arg") else \
        [None, 0, -1, (0, 1), ()]
    for axis in axes_list:
        if op.startswith("arg") and axis == ():
            continue
        expected = np.count_nonzero(view, axis=axis) if op == "count_nonzero" \
            else getattr(np, op)(view, axis=axis)
        result = to_numpy(getattr(xrt, op)(t, axis=axis))
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------- large inputs, threads, accuracy


# Past 2**21 elements the work is shared among threads.
LARGE = [((1 << 21) + 5,), (3, 700_001), (700_001, 3), (1500, 1500), (1000, 2200),
         (60, 60, 600)]


@pytest.mark.parametrize("shape", LARGE, ids=str)
def test_large_reductions_do_not_depend_on_the_thread_count(shape):
    a = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    t = xrt.asarray(a)
    threads = xrt.num_threads()
    tuples = [(0, a.ndim - 1)] if a.ndim > 1 else []
    cases = [(op, axis) for op in ("sum", "mean", "max", "argmin", "var")
             for axis in [None, 0, -1] + tuples
             if not (op == "argmin" and isinstance(axis, tuple))]
    try:
        xrt.set_num_threads(1)
        single = [to_numpy(getattr(xrt, op)(t, axis=axis)) for op, axis in cases]
        xrt.set_num_threads(max(threads, 2))
        multi = [to_numpy(getattr(xrt, op)(t, axis=axis)) for op, axis in cases]
    finally:
        xrt.set_num_threads(threads)
    for (op, axis), one, many in zip(cases, single, multi):
        assert one.tobytes() == many.tobytes(), (op, axis)
        if op in ("max", "argmin"):
            assert_tensor_equal(getattr(xrt, op)(t, axis=axis),
                                getattr(np, op)(a, axis=axis))
            continue
        expected = getattr(np, op)(a.astype(np.float64), axis=axis)
        if op == "var":
            np.testing.assert_allclose(one, expected, rtol=1e-5)
            continue
        # Pairwise float32 sums: within a few eps * log2(n) of sum(|x|).
        bound = np.sum(np.abs(a.astype(np.float64)), axis=axis) * 3e-6
        if op == "mean":
            bound = bound / (a.size // np.size(expected))
        assert np.all(np.abs(one - expected) <= bound), (op, axis)


def test_pairwise_sums_stay_accurate():
    # Adding 0.1f one by one 2**22 times ends 4% low (402740.8).
    a = np.full((1 << 22,), 0.1, dtype=np.float32)
    exact = float(a[0]) * a.size
    for view in (a, a.reshape(1024, 4096), a.reshape(4096, 1024)):
        t = xrt.asarray(view)
        assert abs(float(xrt.sum(t)) - exact) < 1
        assert abs(float(xrt.sum(xrt.sum(t, axis=-1))) - exact) < 1


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean", "var",
                                "std", "all", "any", "count_nonzero"])
def test_bad_axes_raise_with_the_function_name(device, op):
    t = xrt.ones((2, 3, 4), device=device)
    for axis in (3, -4, (0, 5)):
        with pytest.raises(IndexError, match=f"{op}: axis .* out of bounds"):
            getattr(xrt, op)(t, axis=axis)
    for axis in ((0, 0), (1, -2)):
        with pytest.raises(ValueError, match=f"{op}: axis .* repeats"):
            getattr(xrt, op)(t, axis=axis)
    for axis in (1.0, [0, 1], True, (0, "1")):
        with pytest.raises(TypeError, match="axis"):
            getattr(xrt, op)(t, axis=axis)
    with pytest.raises(TypeError, match=f"{op}: x must be"):
        getattr(xrt, op)([1, 2, 3])


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_search_axes_are_single_ints(device, op):
    t = xrt.ones((2, 3), device=device)
    with pytest.raises(TypeError, match="axis must be an int"):
        getattr(xrt, op)(t, axis=(0,))
    with pytest.raises(IndexError, match=f"{op}: axis 2"):
        getattr(xrt, op)(t, axis=2)


def test_undefined_dtypes_raise_type_error(device):
    c = xrt.asarray([1 + 2j, 3j], device=device)
    for op in ("max", "min", "argmax", "argmin"):
        with pytest.raises(TypeError, match="complex"):
            getattr(xrt, op)(c)
    b = xrt.asarray([True, False], device=device)
    for op in ("mean", "var", "std"):
        with pytest.raises(TypeError, match="bool"):
            getattr(xrt, op)(b)
    with pytest.raises(TypeError, match="numeric"):
        xrt.sum(xrt.ones((2,), device=device), dtype=xrt.bool)
    with pytest.raises(TypeError, match="imaginary"):
        xrt.sum(c, dtype=xrt.float64)
    with pytest.raises(TypeError, match="correction"):
        xrt.var(xrt.ones((2,), device=device), correction="1")
