"""tests/fuzz/targets_indexing.py: x[key] and x[key] = v with keys at the int64 limits,
huge slices, None, Ellipsis, booleans and integer arrays, against NumPy."""

import hypothesis.strategies as st
import numpy as np
from hypothesis import given

import xpuruntime as xrt
from fuzz_settings import fuzz_settings

ERRORS = (IndexError, TypeError, ValueError, OverflowError)
LIMITS = [0, 1, 2, -1, -2, 3, 2**31, -(2**31), 2**62, 2**63 - 1, -(2**63), 2**63, 2**64]

ints = st.one_of(st.integers(-4, 4), st.sampled_from(LIMITS))
bounds = st.one_of(st.none(), ints)
slices = st.builds(slice, bounds, bounds, st.one_of(st.none(), st.sampled_from(
    [1, 2, -1, -3, 0, 2**63 - 1, -(2**63), 2**64])))
items = st.one_of(ints, slices, st.just(None), st.just(Ellipsis), st.booleans(),
                  st.lists(st.integers(-4, 3), max_size=3))
keys = st.one_of(items, st.tuples(items), st.tuples(items, items),
                 st.tuples(items, items, items))
shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@fuzz_settings()
@given(shapes, keys)
def getitem_matches_numpy(shape, key):
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    x = xrt.asarray(a)
    try:
        want = a[key]
    except (IndexError, TypeError, ValueError, OverflowError):
        want = None
    try:
        got = x[key]
    except ERRORS:
        return  # an error where NumPy has one, or a stricter refusal; never a crash
    assert want is not None, f"NumPy refuses {key!r} on {shape}, xpuruntime gave {got!r}"
    np.testing.assert_array_equal(np.asarray(got), want)


@fuzz_settings()
@given(shapes, keys, st.one_of(st.integers(-5, 5), st.floats(-2, 2), st.integers(2**63, 2**64)))
def setitem_matches_numpy(shape, key, value):
    a = np.zeros(shape, dtype=np.float64)
    x = xrt.asarray(a.copy())
    try:
        a[key] = value
        ok = True
    except (IndexError, TypeError, ValueError, OverflowError):
        ok = False
    try:
        x[key] = value
    except ERRORS:
        return
    if ok:
        np.testing.assert_array_equal(np.asarray(x), a)
