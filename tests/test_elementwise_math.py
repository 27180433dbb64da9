"""tests/test_elementwise_math.py: every unary and binary elementwise function, for every
dtype it accepts, against NumPy (or the standard, where NumPy departs from it: see
elementwise_reference.py): random arrays with special values, broadcasting, 0-d and empty
arrays, strided and reversed views, and a fixed table of special values."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xpuruntime as xrt
from common import COMPLEX, REAL_FLOATING, arrays, tensor
from elementwise_reference import (BINARY, FUNCTIONS, UNARY, assert_matches, cases,
                                   finfo, reference, special_values, unspecified,
                                   zero_sign_specified)

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
broadcastable = hnp.mutually_broadcastable_shapes(
    num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)


def check(fn, args, tensors=None, what=""):
    """fn applied to `args` (NumPy arrays of one dtype) agrees with the reference."""
    dtype = args[0].dtype.name
    if tensors is None:
        tensors = [tensor(a) for a in args]
    got = getattr(xrt, fn.name)(*tensors)
    assert_matches(got, reference(fn, *args), exact=fn.is_exact(dtype),
                   zero_signs=zero_sign_specified(fn.name, dtype),
                   ignore=unspecified(fn, *args), what=f"{fn.name}({dtype}){what}")


# ------------------------------------------------------------ random arrays vs NumPy

# One test per function draws the dtype too (drawing examples is the expensive part);
# test_*_special_values below visit every (function, dtype) pair.


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=30)
@given(data=st.data())
def test_unary_matches_numpy(name, data):
    fn = UNARY[name]
    dtype = data.draw(st.sampled_from(fn.dtypes), label="dtype")
    check(fn, [data.draw(arrays(dtype, shapes), label="x")])


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=30)
@given(data=st.data())
def test_binary_matches_numpy_and_broadcasts(name, data):
    fn = BINARY[name]
    dtype = data.draw(st.sampled_from(fn.dtypes), label="dtype")
    shape1, shape2 = data.draw(broadcastable, label="shapes").input_shapes
    x1 = data.draw(arrays(dtype, shape1), label="x1")
    x2 = data.draw(arrays(dtype, shape2), label="x2")
    check(fn, [x1, x2])


# ------------------------------------------------------------------- special values


@pytest.mark.parametrize("name, dtype", cases(UNARY))
def test_unary_special_values(name, dtype):
    check(UNARY[name], [special_values(dtype)])


@pytest.mark.parametrize("name, dtype", cases(BINARY))
def test_binary_special_values(name, dtype):
    """Every pair of special values (an outer product through broadcasting)."""
    values = special_values(dtype)
    check(BINARY[name], [values[:, None], values[None, :]])


# -------------------------------------------------------------------- long arrays


def long_array(dtype, seed):
    """A long array of `dtype`: its special values at every offset of a SIMD vector,
    then random values of every magnitude and sign (the contiguous, vectorised loops
    take 2 to 16 lanes at a time and leave a tail)."""
    rng = np.random.default_rng(seed)
    specials = special_values(dtype)
    n = 2001
    info = finfo(dtype)
    exponents = rng.uniform(np.log10(float(info.tiny)), np.log10(float(info.max)), n)
    random = np.where(rng.random(n) < 0.5, -1, 1) * 10.0**exponents
    random[: n // 2] = rng.uniform(-10, 10, n // 2)  # where the functions are busy
    if dtype in COMPLEX:
        random = random + 1j * rng.permutation(random)
    random = random.astype(np.float32 if dtype == "bfloat16" else specials.dtype)
    random = random.astype(specials.dtype)
    pieces = []
    for offset in range(16):
        pieces += [random[:offset], specials]
    return np.concatenate(pieces + [random])


FLOAT_CASES = [(name, dtype) for name, dtype in cases(FUNCTIONS)
               if dtype in REAL_FLOATING + COMPLEX]


@pytest.mark.parametrize("name, dtype", FLOAT_CASES)
def test_long_contiguous_arrays(name, dtype):
    fn = FUNCTIONS[name]
    x1 = long_array(dtype, seed=1)
    if fn.arity == 1:
        check(fn, [x1], what=" on a long array")
        return
    x2 = long_array(dtype, seed=2)[::-1].copy()
    check(fn, [x1, x2], what=" on long arrays")
    for scalar in special_values(dtype)[[0, 2, 7, -3]]:  # 0, 1, -2.5 (or so), inf
        check(fn, [x1, np.array(scalar)], what=f" on a long array and {scalar}")
        check(fn, [np.array(scalar), x1], what=f" on {scalar} and a long array")


# ------------------------------------------------------------ strided and reversed views


@st.composite
def views(draw, dtype, shape=None):
    """A NumPy view of `shape` (drawn when None) with arbitrary, also negative, steps on a
    larger base array, maybe transposed, and a zero-copy tensor of the same view."""
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    transpose = draw(st.booleans())
    inner = shape[::-1] if transpose else shape
    steps = [draw(st.sampled_from([-3, -2, -1, 1, 2])) for _ in inner]
    base = draw(arrays(dtype, tuple(n * abs(s) for n, s in zip(inner, steps))))
    view = base[tuple(slice(None, None, s) for s in steps)]
    view = view.T if transpose else view
    assert view.shape == tuple(shape)
    t = xrt.asarray(view)
    # the tensor is a view (no copy) with the same negative/non-unit strides
    assert t.strides == tuple(s // view.itemsize for s in view.strides)
    return view, t


# bfloat16 arrays cannot travel zero-copy from NumPy (see common.tensor); float16 has the
# same item size and takes the same loops.
STRIDED_DTYPES = {name: [d for d in fn.dtypes if d != "bfloat16"]
                  for name, fn in FUNCTIONS.items()}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(max_examples=10)
@given(data=st.data())
def test_strided_and_reversed_inputs(name, data):
    fn = FUNCTIONS[name]
    dtype = data.draw(st.sampled_from(STRIDED_DTYPES[name]), label="dtype")
    x1, t1 = data.draw(views(dtype), label="x1")
    if fn.arity == 1:
        check(fn, [x1], [t1], " on a view")
        return
    # the second operand: another view of the same shape, or of one broadcast along the
    # last axis (a stride-0 axis next to negative ones)
    x2, t2 = data.draw(views(dtype, x1.shape), label="x2")
    if data.draw(st.booleans(), label="broadcast x2"):
        x2 = x2[..., :1]
        t2 = xrt.asarray(x2)
    check(fn, [x1, x2], [t1, t2], " on views")
    check(fn, [x2, x1], [t2, t1], " on views")


# ---------------------------------------------------------------- 0-d and empty arrays


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_zero_dimensional_and_empty_arrays(name):
    fn = FUNCTIONS[name]
    for dtype in fn.dtypes:
        values = special_values(dtype)
        for shape_a, shape_b in [((), ()), ((0,), ()), ((2, 0), (1, 0)), ((), (0, 3))]:
            args = [np.resize(values, shape_a), np.resize(values[::-1], shape_b)]
            check(fn, args[:fn.arity], what=f" of shapes {shape_a}, {shape_b}")


# ---------------------------------------------------- the standard's rules NumPy lacks


def test_floor_divide_with_infinities_follows_floor_of_divide():
    # Note: NumPy gives NaN for inf // 2 and -1 for 1 // -inf (Python's pairing with %);
    # the standard prefers floor(x1 / x2): +inf and -0.
    x1 = xrt.asarray([np.inf, -np.inf, np.inf, 1.0, -1.0, 1.0, -1.0])
    x2 = xrt.asarray([2.0, 2.0, -2.0, -np.inf, np.inf, np.inf, -np.inf])
    got = np.asarray(xrt.floor_divide(x1, x2))
    np.testing.assert_array_equal(got, [np.inf, -np.inf, -np.inf, -0.0, -0.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.signbit(got), [0, 1, 1, 1, 1, 0, 0])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64"])
def test_integer_division_by_zero_gives_zero(dtype):
    # Note: the standard leaves integer division by zero unspecified; the project returns
    # 0 for both // and % (scalar_math.h) and never traps.
    x1 = xrt.asarray(np.array([0, 1, 5, np.iinfo(dtype).max], dtype=dtype))
    zero = xrt.zeros((4,), dtype=getattr(xrt, dtype))
    np.testing.assert_array_equal(np.asarray(xrt.floor_divide(x1, zero)), 0)
    np.testing.assert_array_equal(np.asarray(xrt.remainder(x1, zero)), 0)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_min_divided_by_minus_one_wraps(dtype):
    low = np.iinfo(dtype).min
    x1 = xrt.asarray(np.array([low], dtype=dtype))
    minus_one = xrt.asarray(np.array([-1], dtype=dtype))
    assert np.asarray(xrt.floor_divide(x1, minus_one)).tolist() == [low]
    assert np.asarray(xrt.remainder(x1, minus_one)).tolist() == [0]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_pow_with_negative_exponents(dtype):
    # Note: NumPy raises; the standard leaves it to the implementation. Project choice:
    # 1 / x1 rounded towards zero (0 also for a zero base).
    base = xrt.asarray(np.array([1, -1, -1, 2, -2, 0, 5], dtype=dtype))
    exponent = xrt.asarray(np.array([-3, -3, -2, -1, -1, -1, -7], dtype=dtype))
    assert np.asarray(xrt.pow(base, exponent)).tolist() == [1, -1, 1, 0, 0, 0, 0]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint64"])
def test_shifts_by_the_width_or_more(dtype):
    # Note: unspecified by the standard (counts must be < width there); project choice:
    # the mathematical shift by that much, 0 (or -1 for a negative value shifted right).
    bits = np.iinfo(dtype).bits
    signed = np.iinfo(dtype).min < 0
    x1 = xrt.asarray(np.array([1, 5, -5 if signed else 5], dtype=dtype))
    for count in (bits, bits + 1, np.iinfo(dtype).max):
        x2 = xrt.asarray(np.array([count] * 3, dtype=dtype))
        assert np.asarray(xrt.bitwise_left_shift(x1, x2)).tolist() == [0, 0, 0]
        expected = [0, 0, -1 if signed else 0]
        assert np.asarray(xrt.bitwise_right_shift(x1, x2)).tolist() == expected


def test_right_shift_is_arithmetic():
    x1 = xrt.asarray(np.array([-8, -7, -1, 7], dtype=np.int16))
    got = xrt.bitwise_right_shift(x1, xrt.asarray(np.array([1], dtype=np.int16)))
    assert np.asarray(got).tolist() == [-4, -4, -1, 3]  # floor division by 2


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_sign_is_z_over_abs_z(dtype):
    # Note: the standard: 0 for 0, NaN + NaN j for a NaN part, otherwise z / |z| divided
    # part by part (so inf + 0j gives NaN + 0j, where NumPy returns 1).
    values = np.array([3 + 4j, -3 - 4j, 0j, complex(0, -0.0), complex(np.inf, 0),
                       complex(np.nan, 1), complex(1, np.nan)], dtype=dtype)
    got = np.asarray(xrt.sign(xrt.asarray(values)))
    np.testing.assert_allclose(got[:2], [0.6 + 0.8j, -0.6 - 0.8j], rtol=1e-6)
    np.testing.assert_array_equal(got[2:4], [0, 0])
    assert np.isnan(got[4].real) and got[4].imag == 0
    for z in got[5:]:
        assert np.isnan(z.real) and np.isnan(z.imag)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_expm1_special_cases(dtype):
    # Note: the standard's table; NumPy gives NaN + NaN j for the first two.
    inf, nan = np.inf, np.nan
    values = np.array([complex(-inf, inf), complex(-inf, nan), complex(inf, 0.0),
                       complex(nan, 0.0), complex(0.0, 0.0), complex(1.0, inf),
                       complex(inf, inf)], dtype=dtype)
    got = np.asarray(xrt.expm1(xrt.asarray(values)))
    assert got[0].real == -1 and got[0].imag == 0
    assert got[1].real == -1 and got[1].imag == 0
    assert got[2] == complex(inf, 0) and not np.signbit(got[2].imag)
    assert np.isnan(got[3].real) and got[3].imag == 0
    assert got[4] == 0
    assert np.isnan(got[5].real) and np.isnan(got[5].imag)
    assert np.isinf(got[6].real) and np.isnan(got[6].imag)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_arithmetic_on_all_nan_operands(dtype):
    # the one non-finite case the standard fixes for complex * and /
    nan = xrt.asarray(np.array([complex(np.nan, np.nan)], dtype=dtype))
    for fn in (xrt.multiply, xrt.divide):
        got = np.asarray(fn(nan, nan))
        assert np.isnan(got.real).all() and np.isnan(got.imag).all()


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_pow_exact_cases(dtype):
    # exp(x2 * log(x1)) except where the standard (and scalar_math.h) are exact
    base = np.array([complex(np.nan, np.nan), 0j, 0j, 2 + 0j, 4 + 0j], dtype=dtype)
    exponent = np.array([0j, 0j, 2 + 0j, 10 + 0j, 0.5 + 0j], dtype=dtype)
    got = np.asarray(xrt.pow(xrt.asarray(base), xrt.asarray(exponent)))
    np.testing.assert_array_equal(got, [1, 1, 0, 1024, 2])


EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


@pytest.mark.parametrize("dtype", sorted(EPS))
def test_nextafter_steps_by_one_ulp_of_the_dtype(dtype):
    one, two = (xrt.full((1,), v, dtype=getattr(xrt, dtype)) for v in (1.0, 2.0))
    for x1, x2, expected in [(one, two, 1 + EPS[dtype]), (one, -two, 1 - EPS[dtype] / 2)]:
        got = xrt.nextafter(x1, x2)
        assert got.dtype == getattr(xrt, dtype)
        assert float(np.asarray(xrt.astype(got, xrt.float64))[0]) == expected


def test_complex_quotient_keeps_a_zero_term_zero_when_the_other_overflows():
    """Note [Complex quotient]: 1 / (2.2e-311j) is 0 - inf j (libgcc's formula gives a NaN
    real part: 0 * inf); a huge divisor keeps its subnormal quotient."""
    x = np.array([2.2e-311j, 5e-324j, 1e308 + 1e308j, 3 + 4j], dtype=np.complex128)
    r = np.asarray(xrt.reciprocal(tensor(x)))
    assert r[0].real == 0 and r[0].imag == -np.inf
    assert r[1].real == 0 and r[1].imag == -np.inf
    np.testing.assert_allclose(r[2], 0.5e-308 - 0.5e-308j, rtol=1e-15)
    np.testing.assert_allclose(r[3], 0.12 - 0.16j, rtol=1e-15)
    q = np.asarray(xrt.divide(tensor(np.array([2 + 0j])), tensor(x[:1])))
    assert q[0].real == 0 and q[0].imag == -np.inf
