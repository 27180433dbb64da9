"""tests/test_set_functions.py: unique_all/_counts/_inverse/_values and isin
against NumPy.

The standard's rules: x is flattened; every NaN (every complex value with a
NaN part) is its own unique value with a count of one; -0.0 and +0.0 are one
value; inverse_indices has x's shape; the index outputs are int64. Values come
out ascending (NaNs last), as NumPy's np.unique(equal_nan=False) returns them.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import (ALL, COMPLEX, INTEGER, REAL_FLOATING, arrays,
                    assert_tensor_equal, numpy_dtype, tensor, to_numpy)

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)


def numpy_unique(a):
    """np.unique with every output, inverse in a's shape; bfloat16 through
    float32 (exact) since NumPy does not order ml_dtypes' NaNs."""
    work = a.astype(np.float32) if a.dtype.name == "bfloat16" else a
    values, index, inverse, counts = np.unique(
        work, return_index=True, return_inverse=True, return_counts=True,
        equal_nan=False)
    return values.astype(a.dtype), index, inverse.reshape(a.shape), counts


def small_values(name):
    """Arrays with repeats (few distinct values), specials for floats."""
    if name == "bool":
        return arrays(name, shapes)
    if name in INTEGER:
        return arrays(name, shapes, min_value=0, max_value=3)
    specials = st.sampled_from([0.0, -0.0, 1.0, -1.5, np.nan, np.inf, -np.inf])
    if name in COMPLEX:
        parts = st.builds(complex, specials, specials)
        return hnp.arrays(numpy_dtype(name), shapes, elements=parts)
    return hnp.arrays(np.float64, shapes, elements=specials).map(
        lambda a: a.astype(numpy_dtype(name)))


@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_unique_all_matches_numpy(name, data):
    a = data.draw(small_values(name) | arrays(name, shapes))
    values, index, inverse, counts = numpy_unique(a)
    out = xrt.unique_all(tensor(a))
    assert type(out).__name__ == "UniqueAllResult"
    assert out._fields == ("values", "indices", "inverse_indices", "counts")
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.indices, index.astype(np.int64))
    assert_tensor_equal(out.inverse_indices, inverse.astype(np.int64))
    assert_tensor_equal(out.counts, counts.astype(np.int64))
    # Each unique value is the first occurrence of its group (so -0.0 when
    # that came first).
    flat = a.reshape(-1)
    if flat.size and a.dtype.kind == "f":
        assert np.array_equal(np.signbit(to_numpy(out.values)), np.signbit(flat[index]))


@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_unique_counts_inverse_values_match_numpy(name, data):
    a = data.draw(small_values(name) | arrays(name, shapes))
    values, _, inverse, counts = numpy_unique(a)
    t = tensor(a)
    out = xrt.unique_counts(t)
    assert out._fields == ("values", "counts")
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.counts, counts.astype(np.int64))
    out = xrt.unique_inverse(t)
    assert out._fields == ("values", "inverse_indices")
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.inverse_indices, inverse.astype(np.int64))
    assert_tensor_equal(xrt.unique_values(t), values)


def test_nans_are_distinct_and_signed_zeros_are_not():
    t = xrt.asarray([np.nan, -0.0, 1.0, np.nan, 0.0, 1.0])
    out = xrt.unique_all(t)
    assert_tensor_equal(out.values, np.array([-0.0, 1.0, np.nan, np.nan]))
    assert np.signbit(to_numpy(out.values)[0])
    assert_tensor_equal(out.indices, np.array([1, 2, 0, 3]))
    assert_tensor_equal(out.counts, np.array([2, 2, 1, 1]))
    assert_tensor_equal(out.inverse_indices, np.array([2, 0, 1, 3, 0, 1]))


def test_complex_values_with_a_nan_part_are_distinct():
    t = xrt.asarray([complex(1, np.nan), complex(1, np.nan), 1 + 0j, complex(np.nan, 0)])
    out = xrt.unique_counts(t)
    assert out.values.shape == (4,)
    assert_tensor_equal(out.counts, np.array([1, 1, 1, 1]))


def test_inverse_indices_keep_the_input_shape():
    a = np.array([[3, 1], [1, 2], [3, 3]], dtype=np.int8)
    out = xrt.unique_inverse(xrt.asarray(a))
    assert out.inverse_indices.shape == (3, 2)
    assert_tensor_equal(out.values, np.array([1, 2, 3], np.int8))
    assert np.array_equal(to_numpy(out.values)[to_numpy(out.inverse_indices)], a)


@pytest.mark.parametrize("func", [xrt.unique_all, xrt.unique_counts,
                                  xrt.unique_inverse, xrt.unique_values])
def test_zero_d_and_empty_inputs(func):
    out = func(xrt.asarray(5, dtype=xrt.int32))
    values = out if func is xrt.unique_values else out.values
    assert_tensor_equal(values, np.array([5], np.int32))
    if func in (xrt.unique_all, xrt.unique_inverse):
        assert out.inverse_indices.shape == ()
    out = func(xrt.asarray(np.zeros((2, 0), np.float32)))
    values = out if func is xrt.unique_values else out.values
    assert_tensor_equal(values, np.zeros(0, np.float32))
    if func in (xrt.unique_all, xrt.unique_inverse):
        assert out.inverse_indices.shape == (2, 0)


def test_unique_reads_strided_views():
    base = np.random.default_rng(0).integers(0, 6, (8, 10)).astype(np.int16)
    view = base[::-2, 1::3].T
    values, index, inverse, counts = numpy_unique(view)
    out = xrt.unique_all(xrt.asarray(view))
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.indices, index)
    assert_tensor_equal(out.inverse_indices, inverse)
    assert_tensor_equal(out.counts, counts)


@pytest.mark.parametrize("name", ["float32", "int64", "uint8", "float16"])
def test_unique_of_long_inputs(name):
    rng = np.random.default_rng(1)
    a = (rng.integers(0, 1000, 200000)).astype(name)
    values, index, inverse, counts = numpy_unique(a)
    out = xrt.unique_all(xrt.asarray(a))
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.indices, index)
    assert_tensor_equal(out.inverse_indices, inverse)
    assert_tensor_equal(out.counts, counts)
    assert_tensor_equal(xrt.unique_values(xrt.asarray(a)), values)


@pytest.mark.parametrize("func", [xrt.unique_all, xrt.unique_counts,
                                  xrt.unique_inverse, xrt.unique_values])
def test_unique_needs_a_tensor(func):
    with pytest.raises(TypeError, match="Tensor"):
        func([1, 2, 2])


# -------------------------------------------------------------------- isin


@pytest.mark.parametrize("name", INTEGER + REAL_FLOATING + COMPLEX + ("bool",))
@given(data=st.data())
def test_isin_matches_numpy(name, data):
    x1 = data.draw(small_values(name) | arrays(name, shapes))
    x2 = data.draw(small_values(name) | arrays(name, shapes))
    invert = data.draw(st.booleans())
    work = [a.astype(np.float32) if name == "bfloat16" else a for a in (x1, x2)]
    expected = np.isin(*work, invert=invert)
    if x1.dtype.kind in "fc" or name == "bfloat16":  # NaN is never found
        expected = expected & ~np.isnan(work[0]) if not invert else expected | np.isnan(work[0])
    assert_tensor_equal(xrt.isin(tensor(x1), tensor(x2), invert=invert), expected)


@pytest.mark.parametrize("names", [("int8", "int16"), ("uint8", "int32"),
                                   ("uint16", "uint64"), ("float32", "float64")])
def test_isin_promotes_mixed_dtypes(names):
    x1 = np.array([[0, 1], [200, 7]]).astype(names[0])
    x2 = np.array([7, 200, 3]).astype(names[1])
    assert_tensor_equal(xrt.isin(xrt.asarray(x1), xrt.asarray(x2)), np.isin(x1, x2))


@pytest.mark.parametrize("name", ["int64", "uint32", "float64", "float16", "int8"])
def test_isin_of_long_inputs(name):
    # Wide integer ranges take the sorted-array path, short ones the flag table.
    rng = np.random.default_rng(4)
    for scale in (10**9 if name != "float16" else 60000, 50):
        x1 = rng.integers(0, scale, 100000).astype(name)
        x2 = rng.integers(0, scale, 3000).astype(name)
        if x1.dtype.kind == "f":
            x1[::7], x2[::11] = np.nan, np.nan
        assert_tensor_equal(xrt.isin(xrt.asarray(x1), xrt.asarray(x2)), np.isin(x1, x2))


def test_isin_signed_zeros_are_equal():
    out = xrt.isin(xrt.asarray([-0.0, 0.0, 1.0]), xrt.asarray([0.0]))
    assert_tensor_equal(out, np.array([True, True, False]))


@pytest.mark.parametrize("x1, x2, invert, expected", [
    (3, [1, 2, 3], False, True), (4, [1, 2, 3], False, False),
    (3, [1, 2, 3], True, False), ([1, 2, 3], 2, False, [False, True, False]),
    ([[1, 2], [2, 2]], 2, True, [[True, False], [False, False]]),
])
def test_isin_takes_python_scalars(x1, x2, invert, expected):
    a = x1 if isinstance(x1, int) else xrt.asarray(x1, dtype=xrt.int16)
    b = x2 if isinstance(x2, int) else xrt.asarray(x2, dtype=xrt.int16)
    out = xrt.isin(a, b, invert=invert)
    assert_tensor_equal(out, np.array(expected))


def test_isin_empty_inputs():
    assert_tensor_equal(xrt.isin(xrt.asarray(np.zeros(0, np.int32)), xrt.asarray([1])),
                        np.zeros(0, bool))
    assert_tensor_equal(xrt.isin(xrt.asarray([1, 2]), xrt.asarray(np.zeros(0, np.int64))),
                        np.array([False, False]))
    assert_tensor_equal(xrt.isin(xrt.asarray([1, 2]), xrt.asarray(np.zeros(0, np.int64)),
                                 invert=True), np.array([True, True]))


@pytest.mark.parametrize("call, error, match", [
    (lambda: xrt.isin(1, 2), TypeError, "at least one"),
    (lambda: xrt.isin(xrt.ones(2, dtype=xrt.int64), xrt.ones(2, dtype=xrt.uint64)),
     TypeError, "promotion"),
    (lambda: xrt.isin(xrt.ones(2, dtype=xrt.int32), xrt.ones(2)), TypeError, "promotion"),
    (lambda: xrt.isin(xrt.ones(2, dtype=xrt.int32), 1.5), TypeError, "float"),
    (lambda: xrt.isin(xrt.ones(2, dtype=xrt.int32), "a"), TypeError, "scalar"),
    (lambda: xrt.isin(xrt.ones(2, dtype=xrt.uint8), 300), OverflowError, "300"),
], ids=["scalars", "int64-uint64", "int-float", "float-scalar", "string", "overflow"])
def test_isin_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
