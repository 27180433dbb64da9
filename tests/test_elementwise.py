"""tests/test_elementwise.py: add and the `+` operators against NumPy; the elementwise
table as a whole (signatures, thread-count independence); where and clip; and every
elementwise function on CUDA against the CPU.

The other functions: test_elementwise_math.py (values against NumPy) and
test_operators.py (operators, Python scalars, promotion, errors). The tests that take the
`device` fixture run on the CPU and on CUDA.

On CUDA, every function of the standard, for every dtype it accepts, is computed on the same
inputs (random values and the special ones: ±0, ±inf, NaN, subnormals, the largest finite,
complex numbers with each part special) on the CPU (already checked against NumPy) and on
CUDA:

- bit for bit where the CPU is exact: arithmetic, comparisons, integer and bool functions,
  rounding, and the correctly rounded ones (sqrt, division) on real dtypes;
- within a bound otherwise. CUDA's math library is documented to ≤ 2 ulp for most double
  and float functions and ≤ 4 ulp for a few float ones (powf, tanf); the CPU's SIMD libm
  (libmvec) is ≤ 4 ulp: real results agree to 8 ulp, 16-bit float results (computed in float
  and rounded) to 1 ulp of their type. Complex functions are compared norm-wise (each part
  within 8 ulp of the larger part), special values exactly (NaN, infinities, zeros and their
  signs where the standard fixes them). complex64 functions compute in double on the device,
  so their reference is the CPU's complex128 result rounded to complex64.

Layouts (broadcasting, strides, negative strides, unaligned views, 0-d, empty, many
dimensions, 64-bit offsets), in-place operators and Python scalars have their own tests.
Without a GPU, the device math is compiled as host C++ (cuda_host_math.py) and checked
against the CPU the same way, and every generated kernel source is compiled with NVRTC.
"""

import inspect
import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xpuruntime as xrt
from common import COMPLEX, INTEGER, NUMERIC, NUMPY_NATIVE, REAL_FLOATING
from common import CUDA_DEVICE, arrays, assert_tensor_equal, numpy_dtype, tensor, to_numpy
from cuda_helpers import core
from elementwise_reference import BINARY, UNARY
from elementwise_reference import FUNCTIONS, cases, result_dtype, zero_sign_specified
import cuda_host_math


broadcastable = hnp.mutually_broadcastable_shapes(
    num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)


def reference_add(a, b, result_dtype=None):
    """NumPy's a + b computed in `result_dtype` (integers wrap around)."""
    result_dtype = result_dtype or a.dtype
    with np.errstate(all="ignore"):
        return np.add(a.astype(result_dtype), b.astype(result_dtype))


@st.composite
def operand_pair(draw, name_a, name_b):
    shapes = draw(broadcastable).input_shapes
    return draw(arrays(name_a, shapes[0])), draw(arrays(name_b, shapes[1]))


# Note: the standard defines add for numeric dtypes only; bool + bool is left
# out here (NumPy's logical-or reading is not the standard's).
@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_add_broadcasts_like_numpy(device, name, data):
    a, b = data.draw(operand_pair(name, name))
    expected = reference_add(a, b)
    assert_tensor_equal(xrt.add(tensor(a, device), tensor(b, device)), expected)
    assert_tensor_equal(tensor(a, device) + tensor(b, device), expected)


MIXED = [("int8", "uint8"), ("int16", "int32"), ("uint8", "uint16"),
         ("uint32", "int64"), ("float32", "float64"), ("float32", "complex64"),
         ("float64", "complex64"), ("float16", "float32"),
         ("float16", "bfloat16")]


@pytest.mark.parametrize("name_a, name_b", MIXED)
@given(data=st.data())
def test_add_promotes_mixed_dtypes(device, name_a, name_b, data):
    a, b = data.draw(operand_pair(name_a, name_b))
    result = xrt.result_type(getattr(xrt, name_a), getattr(xrt, name_b))
    expected = reference_add(a, b, numpy_dtype(result.name))
    assert_tensor_equal(xrt.add(tensor(a, device), tensor(b, device)), expected)
    assert_tensor_equal(tensor(b, device) + tensor(a, device), expected)


@st.composite
def strided_pair(draw, name):
    """Two views base[::2].T of one shape: non-contiguous transposes."""
    rows, cols = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    a, b = (draw(arrays(name, (2 * rows, cols)))[::2].T for _ in range(2))
    return a, b


@pytest.mark.parametrize("name", ["int32", "uint8", "float32", "complex128"])
@given(data=st.data())
def test_add_reads_strided_and_transposed_inputs(name, data):
    a, b = data.draw(strided_pair(name))
    assert_tensor_equal(xrt.asarray(a) + xrt.asarray(b), reference_add(a, b))
    # negative strides too
    assert_tensor_equal(xrt.asarray(a[::-1]) + xrt.asarray(b),
                        reference_add(a[::-1], b))


# ---------------------------------------------------------- Python scalars


def _scalars(name):
    if name in INTEGER:
        return [1, -1] if name.startswith("int") else [1, 200]
    if name in REAL_FLOATING:
        return [1, 1.5, -0.25]
    return [1, 1.5, 0.5 - 2j]


SCALAR_CASES = [(n, s) for n in NUMERIC for s in _scalars(n)]


@pytest.mark.parametrize("name, scalar", SCALAR_CASES)
@given(data=st.data())
def test_python_scalars_keep_the_tensor_dtype(name, scalar, data):
    a = data.draw(arrays(name, hnp.array_shapes(min_dims=0, max_side=4)))
    expected = reference_add(a, np.asarray(scalar).astype(a.dtype))
    assert_tensor_equal(tensor(a) + scalar, expected)
    assert_tensor_equal(scalar + tensor(a), expected)
    assert_tensor_equal(xrt.add(tensor(a), scalar), expected)


def test_integer_scalars_wrap_like_the_tensor_dtype():
    assert_tensor_equal(xrt.asarray([127], dtype=xrt.int8) + 1,
                        np.array([-128], dtype=np.int8))
    assert_tensor_equal(xrt.asarray([255], dtype=xrt.uint8) + 1,
                        np.array([0], dtype=np.uint8))


# ---------------------------------------------------------------- in place


@st.composite
def in_place_shapes(draw):
    """(shape_a, shape_b) where b broadcasts to a without growing it."""
    shape_a = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                    max_side=4))
    skip = draw(st.integers(0, len(shape_a)))
    shape_b = tuple(draw(st.sampled_from([1, side])) for side in shape_a[skip:])
    return shape_a, shape_b


@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_in_place_add_writes_into_the_left_operand(name, data):
    shape_a, shape_b = data.draw(in_place_shapes())
    a, b = data.draw(arrays(name, shape_a)), data.draw(arrays(name, shape_b))
    expected = reference_add(a, b)  # before t, a view of a, changes it
    t = tensor(a)
    same = t
    t += tensor(b)
    assert t is same
    assert_tensor_equal(t, expected)


def test_in_place_add_is_seen_through_shared_memory():
    base = np.arange(12, dtype=np.int32).reshape(4, 3)
    view = xrt.asarray(base[::2].T)  # zero-copy, strided
    view += 100
    expected = np.arange(12, dtype=np.int32).reshape(4, 3)
    expected[::2] += 100
    np.testing.assert_array_equal(base, expected)


@pytest.mark.parametrize("name", ["int8", "float32", "complex64"])
def test_in_place_add_with_a_python_scalar(name):
    t = xrt.zeros((2, 2), dtype=getattr(xrt, name))
    t += 1
    assert_tensor_equal(t, np.ones((2, 2), dtype=name))


def test_in_place_add_cannot_grow_the_left_operand():
    t = xrt.zeros((3,))
    with pytest.raises(ValueError):
        t += xrt.ones((2, 3))
    assert_tensor_equal(t, np.zeros(3))


# ------------------------------------------------------------ edge shapes


@pytest.mark.parametrize("shape_a, shape_b, shape", [
    ((), (), ()), ((0,), (), (0,)), ((0, 3), (1, 3), (0, 3)),
    ((2, 1, 3), (4, 1), (2, 4, 3))])
def test_result_shapes(shape_a, shape_b, shape):
    assert xrt.add(xrt.ones(shape_a), xrt.ones(shape_b)).shape == shape


@pytest.mark.parametrize("name", [n for n in NUMPY_NATIVE if n in COMPLEX])
def test_complex_parts_add_independently(name):
    a = np.array([1 + 2j, -3.5 + 0j, 1e30 - 1e-30j], dtype=name)
    b = np.array([2 - 2j, 0 + 1j, -1e30 + 1e-30j], dtype=name)
    assert_tensor_equal(xrt.asarray(a) + xrt.asarray(b), a + b)


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


# ==== every function on CUDA against the CPU (and the device math built for the host) =============

CUDA = CUDA_DEVICE
REAL_ULPS = 8          # real results of inexact functions (see the module docstring)
HALF_ULPS = 1          # float16/bfloat16 results of inexact functions
COMPLEX_ULPS = 8       # complex results, norm-wise
rng = np.random.default_rng(2025)


# ----------------------------------------------------------------------------- inputs

def _real_specials(float_dtype):
    fi = np.finfo(float_dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0,
              -3.0, 1.5, -1.5, 2.5, -2.5, float(fi.smallest_subnormal),
              -float(fi.smallest_subnormal), float(fi.tiny), float(fi.max), -float(fi.max),
              math.pi / 2, -math.pi / 2, math.pi, 0.1, 10.0, 100.0, 1e-10, 60.0, -60.0]
    return np.array(values, dtype=float_dtype)


def _complex(re, im, dtype):
    z = np.empty(np.broadcast(re, im).shape, dtype=dtype)
    z.real, z.imag = re, im  # parts set one by one: complex arithmetic would lose signs
    return z


def _random(dtype, n):
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype in INTEGER:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if dtype in COMPLEX:
        real = "float32" if dtype == "complex64" else "float64"
        return _complex(_random(real, n), _random(real, n), dtype)
    # Magnitudes from 1e-4 to 1e4 with both signs, and some in [-2, 2] for the functions
    # whose interesting part is there.
    wide = rng.standard_normal(n // 2) * np.exp(rng.uniform(-9, 9, n // 2))
    narrow = rng.uniform(-2, 2, n - n // 2)
    return np.concatenate([wide, narrow]).astype(numpy_dtype(dtype))


def special_values(dtype):
    """The values the standard's special cases are about, for dtype."""
    if dtype == "bool":
        return np.array([False, True])
    if dtype in INTEGER:
        info = np.iinfo(dtype)
        small = [0, 1, 2, 3, 7, 8, 31, 32, 63, 64, 65]
        small += [-1, -2, -3, -7, -8, -64] if info.min < 0 else []
        return np.array(small + [info.max, info.max - 1, info.min, info.min + 1], dtype=dtype)
    if dtype in COMPLEX:
        real = "float32" if dtype == "complex64" else "float64"
        parts = _real_specials(real)
        return _complex(parts[:, None], parts[None, :], dtype).ravel()
    if dtype in ("float16", "bfloat16"):
        with np.errstate(over="ignore"):
            return _real_specials(np.float32).astype(numpy_dtype(dtype))
    return _real_specials(dtype)


def binary_specials(dtype):
    """Pairs of special values (a smaller set for complex, whose pairs square the count)."""
    if dtype in COMPLEX:
        real = "float32" if dtype == "complex64" else "float64"
        parts = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, -3.0],
                         dtype=real)
        values = _complex(parts[:, None], parts[None, :], dtype).ravel()
    else:
        values = special_values(dtype)
    return np.repeat(values, len(values)), np.tile(values, len(values))


def inputs(fn, dtype, n=1500):
    """The operands of fn's test: the special values (all pairs for binary functions) and
    random values."""
    if fn.arity == 1:
        return [np.concatenate([special_values(dtype), _random(dtype, n)])]
    a, b = binary_specials(dtype)
    x, y = _random(dtype, n), _random(dtype, n)
    if fn.name == "pow" and dtype in COMPLEX:
        y = y / 64  # moderate exponents: exp(b log a) is ill-conditioned for huge ones
    if fn.name in ("pow", "bitwise_left_shift", "bitwise_right_shift") and dtype in INTEGER:
        y = rng.integers(-2 if np.iinfo(dtype).min < 0 else 0, 70, n).astype(dtype)
    return [np.concatenate([a, x]), np.concatenate([b, y])]


# ------------------------------------------------------------------------- comparison

def _ulp_distance(got, want):
    """Distance in units in the last place between same-dtype float arrays (finite)."""
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    g = got.view(bits).astype(np.int64)
    w = want.view(bits).astype(np.int64)
    low = np.iinfo(bits).min
    g = np.where(g < 0, low - g, g)  # sign-magnitude to a monotonic integer line
    w = np.where(w < 0, low - w, w)
    return np.abs(g - w)


_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def _as_float(a):
    return a.astype(np.float32) if a.dtype.itemsize == 2 else a


def _check_specials(got, want, signed_zero, where):
    """NaN where the reference is NaN, the same infinities, zeros of the same sign."""
    gf, wf = _as_float(got), _as_float(want)
    bad = np.isnan(gf) != np.isnan(wf)
    inf = np.isinf(wf) | np.isinf(gf)
    bad |= inf & (gf != wf)
    zeros = (gf == 0) & (wf == 0)
    if signed_zero:
        bad |= zeros & (np.signbit(gf) != np.signbit(wf))
    assert not bad.any(), _report(where, bad)
    return ~(np.isnan(wf) | inf | zeros)


def _report(where, bad):
    index = np.flatnonzero(bad)[:6]
    lines = [f"{int(bad.sum())} of {bad.size} differ"]
    for i in index:
        lines.append(where(i))
    return "\n".join(lines)


def assert_matches(name, dtype, got, want, operands):
    """got (CUDA) against want (CPU) for function `name` on operands of dtype."""
    fn = FUNCTIONS[name]

    def where(i):
        args = ", ".join(repr(o.ravel()[i]) for o in operands)
        return f"  {name}({args}): cuda {got.ravel()[i]!r}, cpu {want.ravel()[i]!r}"

    assert got.dtype == want.dtype and got.shape == want.shape
    got, want = got.ravel(), want.ravel()
    if got.dtype == bool or got.dtype.kind in "iu":
        assert np.array_equal(got, want), _report(where, got != want)
        return
    signed = zero_sign_specified(name, dtype)
    if fn.is_exact(dtype):
        # Bit for bit, NaN payloads aside.
        finite = _check_specials(got.real, want.real, signed, where)
        bad = finite & (_ulp_distance(got.real, want.real) != 0)
        if got.dtype.kind == "c":
            finite_im = _check_specials(got.imag, want.imag, signed, where)
            bad |= finite_im & (_ulp_distance(got.imag, want.imag) != 0)
        assert not bad.any(), _report(where, bad)
        return
    if got.dtype.kind != "c":
        finite = _check_specials(got, want, signed, where)
        limit = HALF_ULPS if got.dtype.itemsize == 2 else REAL_ULPS
        distance = _ulp_distance(got, want)
        if name == "logaddexp":
            # max + log1p(exp(-|a - b|)) cancels for a negative max: the error is relative
            # to the larger operand, not to the result.
            scale = np.maximum(np.abs(_as_float(operands[0].ravel())),
                               np.abs(_as_float(operands[1].ravel()))).astype(np.float64)
            with np.errstate(all="ignore"):
                error = np.abs(_as_float(got).astype(np.float64) - _as_float(want))
                bad = finite & (distance > limit) & (error > limit * _EPS[dtype] * scale)
        else:
            bad = finite & (distance > limit)
        assert not bad.any(), _report(where, bad)
        return
    # Complex: norm-wise, relative to the larger part of the reference.
    _check_specials(got.real, want.real, signed, where)
    _check_specials(got.imag, want.imag, signed, where)
    part = got.real.dtype
    eps = float(np.finfo(part).eps)
    with np.errstate(all="ignore"):
        scale = np.maximum(np.abs(want.real), np.abs(want.imag)).astype(np.float64)
        if name == "pow":
            # exp(b log a) amplifies the rounding of b log a by its size (the conditioning).
            a, b = (o.ravel().astype(np.complex128) for o in operands)
            scale = scale * (1 + np.abs(b * np.log(a)))
        limit = COMPLEX_ULPS * eps * scale + 4 * float(np.finfo(part).smallest_subnormal)
        error = np.maximum(np.abs(got.real.astype(np.float64) - want.real),
                           np.abs(got.imag.astype(np.float64) - want.imag))
        both_finite = np.isfinite(got.real) & np.isfinite(got.imag) & \
            np.isfinite(want.real) & np.isfinite(want.imag)
        bad = both_finite & (error > limit)
    assert not bad.any(), _report(where, bad)


def reference(name, dtype, operands):
    """The CPU's result. complex64 functions the device computes in double (all but the
    arithmetic, which is float on both) are compared with the complex128 result rounded."""
    fn = getattr(xrt, name)
    if dtype == "complex64" and not FUNCTIONS[name].is_exact("complex64") and name not in (
            "multiply", "square", "divide", "reciprocal", "sign"):
        wide = fn(*[xrt.asarray(o.astype(np.complex128)) for o in operands])
        out = to_numpy(wide)
        return out.astype(np.float32 if out.dtype == np.float64 else np.complex64)
    return to_numpy(fn(*[tensor(o) for o in operands]))


# ------------------------------------------------------------- without a GPU: host math

@pytest.fixture(scope="module")
def host_math():
    if cuda_host_math.compiler() is None:
        pytest.skip("no C++ compiler to build the device math for the host")
    triples = [(f.name, f.arity, d) for f in FUNCTIONS.values() for d in f.dtypes
               if not f.computes_integers_in_float(d)]
    return cuda_host_math.HostMath(triples)


@pytest.mark.parametrize("name, dtype", [
    c for c in cases(FUNCTIONS) if not FUNCTIONS[c[0]].computes_integers_in_float(c[1])])
def test_device_math_built_for_the_host_matches_the_cpu(host_math, name, dtype):
    """The device code's formulas and special cases, with the C library's real functions."""
    fn = FUNCTIONS[name]
    operands = [o.astype(numpy_dtype(dtype)) for o in inputs(fn, dtype, n=600)]
    with np.errstate(all="ignore"):
        want = reference(name, dtype, operands)
        got = host_math.call(name, dtype, want.dtype, *operands)
    assert_matches(name, dtype, got, want, operands)


# ------------------------------------------------------------------------- on CUDA

def gpu(a):
    return tensor(a).to_device(CUDA)


def host(t):
    assert t.device == xrt.Device(CUDA)
    return to_numpy(t.to_device("cpu"))


@pytest.fixture(scope="module")
def warm():
    """Compiles every dense kernel once, on all cores (NVRTC takes ~0.3 s a kernel)."""
    core._cuda._elementwise_warm(0, 16)


@pytest.mark.cuda
@pytest.mark.parametrize("name, dtype", cases(FUNCTIONS))
def test_function_on_cuda_matches_the_cpu(warm, name, dtype):
    fn = FUNCTIONS[name]
    operands = inputs(fn, dtype)
    with np.errstate(all="ignore"):
        want = reference(name, dtype, operands)
    with xrt.explain() as log:
        result = getattr(xrt, name)(*[gpu(o) for o in operands])
    assert log.kernels(name) == ["nvrtc"]
    assert result.dtype == getattr(xrt, result_dtype(fn, dtype))
    assert_matches(name, dtype, host(result), want, operands)


def same(got, want):
    """Exact equality of a CUDA result with a CPU one (NaNs equal)."""
    np.testing.assert_array_equal(host(got), to_numpy(want))


def close(got, want):
    """A CUDA result of an inexact function against the CPU's: 8 ulp (the module's bound)."""
    g, w = host(got), to_numpy(want)
    if g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
        return
    eps = float(np.finfo(g.real.dtype).eps) if g.dtype.itemsize > 2 else 2.0**-7
    np.testing.assert_allclose(g.astype(np.complex128), w.astype(np.complex128),
                               rtol=8 * eps, atol=0)


def both(make):
    """make(to) on CUDA and on the CPU, `to` making a tensor of a NumPy array (a copy: on
    the CPU, asarray would share the array with the tensor and in-place ops would write to
    it)."""
    return make(gpu), make(lambda a: tensor(np.array(a, copy=True)))


# Exact functions, so that the layout alone decides (transcendental ones have their tests).
LAYOUT_CASES = {
    "transposed": lambda to, a, b: xrt.add(to(a).mT, to(b).mT),
    "step slices": lambda to, a, b: xrt.multiply(to(a)[::2, 1::3], to(b)[1::2, ::3]),
    "negative strides": lambda to, a, b: xrt.subtract(to(a)[::-1, ::-2], to(b)[:, ::2]),
    "row broadcast": lambda to, a, b: xrt.divide(to(a), to(b)[0]),
    "column broadcast": lambda to, a, b: xrt.copysign(to(a)[:, :1], to(b)),
    "outer": lambda to, a, b: xrt.multiply(to(a)[:, 0][:, None], to(b)[0][None, :]),
    "0-d and array": lambda to, a, b: xrt.divide(to(a)[2, 3], to(b)),
    "0-d": lambda to, a, b: xrt.square(to(a)[1, 1]),
    "0-d and 0-d": lambda to, a, b: xrt.maximum(to(a)[0, 0], to(b)[1, 2]),
    "empty": lambda to, a, b: xrt.add(to(a)[:0], to(b)[:0]),
    "empty broadcast": lambda to, a, b: xrt.add(to(a)[:, :0], to(b)[0, :0]),
    "unaligned": lambda to, a, b: xrt.add(xrt.reshape(to(a), (-1,))[1:],
                                          xrt.reshape(to(b), (-1,))[:-1]),
    "unaligned unary": lambda to, a, b: xrt.negative(xrt.reshape(to(a), (-1,))[3:]),
    "mixed dtypes": lambda to, a, b: xrt.add(to(a), xrt.astype(to(b), xrt.float16)),
    "where": lambda to, a, b: xrt.where(to(a) > 0, to(a), to(b)),
    "where broadcast": lambda to, a, b: xrt.where(to(a)[:, :1] > 0, to(b)[0], 0.5),
    "where strided": lambda to, a, b: xrt.where(to(a).mT > to(b).mT, to(a).mT, -to(b).mT),
    "clip": lambda to, a, b: xrt.clip(to(a), -0.5, to(b)[0]),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(LAYOUT_CASES))
def test_layouts(name):
    a = rng.standard_normal((6, 9)).astype(np.float32)
    b = rng.standard_normal((6, 9)).astype(np.float32)
    got, want = both(lambda to: LAYOUT_CASES[name](to, a, b))
    same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "float64",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("n", [1, 7, 4099, (1 << 20) + 5])
def test_sizes_around_vector_and_grid_boundaries(dtype, n):
    a, b = _random(dtype, n), _random(dtype, n)
    for op in ("equal", "where") + (("logical_xor",) if dtype == "bool" else ("multiply",)):
        if op == "where":
            make = lambda to: xrt.where(to(a != b), to(a), to(b))  # noqa: E731
        else:
            make = lambda to: getattr(xrt, op)(to(a), to(b))  # noqa: E731
        got, want = both(make)
        same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128"])
def test_many_dimensions(dtype):
    """Shapes that stay 5-d and 10-d after collapsing (kernels beyond the cached ones)."""
    for shape in [(2, 3, 2, 3, 2), (2,) * 10]:
        a = _random(dtype, math.prod(shape)).reshape(shape)
        b = _random(dtype, math.prod(shape)).reshape(shape)
        axes = tuple(reversed(range(len(shape))))
        got, want = both(lambda to: xrt.add(xrt.permute_dims(to(a), axes), to(b)[..., ::-1]))
        same(got, want)


@pytest.mark.cuda
def test_offsets_beyond_32_bits():
    """A view reaching past 2**31 bytes takes the 64-bit index kernel."""
    big = xrt.zeros(((1 << 31) + 64,), dtype=xrt.uint8, device=CUDA)
    view = big[:: 1 << 30]  # three elements, 2**30 bytes apart
    view += xrt.asarray(np.array([1, 2, 3], dtype=np.uint8), device=CUDA)
    got = view * 3
    assert host(got).tolist() == [3, 6, 9]
    assert host(big[(1 << 31) - 1: (1 << 31) + 1]).tolist() == [0, 3]


INPLACE_CASES = {
    "+=": lambda x, y: x.__iadd__(y),
    "-= scalar": lambda x, y: x.__isub__(1.5),
    "*= broadcast": lambda x, y: x.__imul__(y[0]),
    "/=": lambda x, y: x.__itruediv__(y),
    "**= scalar": lambda x, y: x.__ipow__(3),
    "//=": lambda x, y: x.__ifloordiv__(y),
    "%=": lambda x, y: x.__imod__(y),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(INPLACE_CASES))
@pytest.mark.parametrize("view", ["whole", "strided"])
def test_inplace_operators(name, view):
    a = rng.standard_normal((4, 6))
    b = rng.standard_normal((4, 6)) + 3

    def make(to):
        x, y = to(a), to(b)
        target = x if view == "whole" else x[:, ::2]
        INPLACE_CASES[name](target, y if view == "whole" else y[:, ::2])
        return x
    got, want = both(make)
    (close if "**" in name else same)(got, want)


@pytest.mark.cuda
def test_inplace_integer_and_bool_operators():
    a = rng.integers(-100, 100, (5, 8)).astype(np.int32)
    b = rng.integers(1, 9, (5, 8)).astype(np.int32)

    def make(to):
        x, y = to(a), to(b)
        x <<= y
        x ^= 5
        x >>= 1
        m = to(a > 0)
        m &= to(b > 4)
        m |= to(a < -90)
        return xrt.where(m, x, -x)
    got, want = both(make)
    same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "bfloat16", "float32",
                                   "complex64"])
def test_python_scalars(dtype):
    a = _random(dtype, 50)
    int_ok = dtype not in COMPLEX

    def make(to):
        x = to(a)
        results = [x + 1, 2 * x, x - 3, x == 0, x ** 2]
        if int_ok:
            results += [x // 3, x % 5, x > 1]
        if dtype not in INTEGER:
            results += [x * 0.5, 1.5 / x]
        return results
    for i, (got, want) in enumerate(zip(*both(make))):
        (close if i == 4 else same)(got, want)  # x ** 2 is pow


@pytest.mark.cuda
def test_where_every_dtype_and_scalar_branches():
    for dtype in ("bool", "int8", "uint16", "int32", "float16", "bfloat16", "float64",
                  "complex64", "complex128"):
        x, y = _random(dtype, 300), _random(dtype, 300)
        c = rng.integers(0, 2, 300).astype(bool)
        same(*both(lambda to: xrt.where(to(c), to(x), to(y))))
        same(*both(lambda to: xrt.where(to(c)[::-2], xrt.reshape(to(x)[::2], (1, -1)),
                                        to(y)[0])))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["bool", "uint64", "int64", "float16", "float64",
                                   "complex128"])
def test_host_scalars_ride_in_the_arguments(dtype):
    """Note [Host scalars]: a Python scalar is not made a device array; every layout reads
    its value from the launch's arguments (16 bytes for complex128)."""
    a = _random(dtype, 4099)
    if dtype == "bool":
        s = True
    elif dtype in ("uint64", "int64"):
        s = (1 << 62) + 3 if dtype == "uint64" else -(1 << 61) - 7
    elif dtype == "complex128":
        s = complex(1.0 / 3.0, -2.5e-300)
    else:
        s = 1.0 / 3.0
    op = xrt.logical_xor if dtype == "bool" else xrt.add

    def make(to):
        x = to(a)
        m = xrt.reshape(x[:4096], (64, 64))
        return [op(x, s), op(s, x),                 # dense, both sides, vectorised
                op(x[1:], s),                      # unaligned: one element per load
                op(m.mT, s), op(s, m[::2, ::-3]),  # strided kernels
                op(x[5], s), op(s, x[5])]          # 0-d: one element
    for got, want in zip(*both(make)):
        same(got, want)
    with xrt.explain() as log:
        op(gpu(a), s)
    assert log.kernels(op.__name__) == ["nvrtc"]


@pytest.mark.cuda
def test_host_scalars_in_place_and_operators():
    a = rng.standard_normal((8, 10)).astype(np.float32)

    def make(to):
        x = to(a)
        v = x[:, ::3]
        v += 2.5        # strided in place
        x *= 0.5        # dense in place
        y = 1 - x       # reflected
        z = 2 ** x[0]   # reflected pow
        w = x[1, 1]
        w -= 4          # 0-d in place
        return [x, y, z, w, x > 0.25, 3 % (x + 10.0)]
    for got, want in zip(*both(make)):
        close(got, want)


@pytest.mark.cuda
def test_a_cpu_array_with_a_cuda_array_is_still_an_error():
    x = xrt.ones(4, device=CUDA)
    for other in (xrt.asarray(1.0), xrt.ones(4)):
        with pytest.raises(ValueError, match="different devices"):
            x + other
        with pytest.raises(ValueError, match="different devices"):
            other * x
        with pytest.raises(ValueError, match="different devices"):
            x += other


@pytest.mark.cuda
def test_host_scalars_are_captured_by_value_in_graphs():
    x = xrt.arange(16, dtype=xrt.float32, device=CUDA)
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        y = x * 3.0 + 1.0
    for _ in range(2):
        x += 1.0  # the graph reads x's memory, and keeps the scalars it was captured with
        xrt.cuda.synchronize()
        g.replay()
        xrt.cuda.synchronize()
        np.testing.assert_array_equal(host(y), host(x) * 3 + 1)
