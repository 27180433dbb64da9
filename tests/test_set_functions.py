"""tests/test_set_functions.py: unique_all/_counts/_inverse/_values, isin and repeat, against
NumPy on every device (the tests that take the `device` fixture) and on CUDA against the CPU.

The standard's rules: x is flattened; every NaN (every complex value with a
NaN part) is its own unique value with a count of one; -0.0 and +0.0 are one
value; inverse_indices has x's shape; the index outputs are int64. Values come
out ascending (NaNs last), as NumPy's np.unique(equal_nan=False) returns them.

On CUDA (the tests marked cuda), the native unique, isin and repeat give the CPU's results
bit for bit: every dtype, NaNs (each its own unique value, never found by isin), -0.0 and
+0.0 as one value (unique keeps the first in input order), complex values with NaN parts,
many and few distinct values, sizes on both sides of the kernels' tiles, strided and 0-d
inputs, isin's shared-memory and global searches and invert, repeat by an int and by an
array (zeros included) along any axis or the flattened array, the CPU's errors, a
non-default stream, and isin / repeat returning without waiting for the stream. Without a
GPU, the sources are compiled for sm_90 by test_cuda_jit.py's compile-all test (the families
register samples with kernel_check.h).
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import (ALL, COMPLEX, INTEGER, REAL_FLOATING, arrays,
                    assert_tensor_equal, numpy_dtype, tensor, to_numpy)
from cuda_helpers import both, busy, host, same_bits, same_error
from cuda_helpers import torch  # noqa: F401 (fixture)


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
def test_unique_all_matches_numpy(device, name, data):
    a = data.draw(small_values(name) | arrays(name, shapes))
    values, index, inverse, counts = numpy_unique(a)
    out = xrt.unique_all(tensor(a, device))
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
def test_unique_counts_inverse_values_match_numpy(device, name, data):
    a = data.draw(small_values(name) | arrays(name, shapes))
    values, _, inverse, counts = numpy_unique(a)
    t = tensor(a, device)
    out = xrt.unique_counts(t)
    assert out._fields == ("values", "counts")
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.counts, counts.astype(np.int64))
    out = xrt.unique_inverse(t)
    assert out._fields == ("values", "inverse_indices")
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.inverse_indices, inverse.astype(np.int64))
    assert_tensor_equal(xrt.unique_values(t), values)


def test_nans_are_distinct_and_signed_zeros_are_not(device):
    t = xrt.asarray([np.nan, -0.0, 1.0, np.nan, 0.0, 1.0], device=device)
    out = xrt.unique_all(t)
    assert_tensor_equal(out.values, np.array([-0.0, 1.0, np.nan, np.nan]))
    assert np.signbit(to_numpy(out.values)[0])
    assert_tensor_equal(out.indices, np.array([1, 2, 0, 3]))
    assert_tensor_equal(out.counts, np.array([2, 2, 1, 1]))
    assert_tensor_equal(out.inverse_indices, np.array([2, 0, 1, 3, 0, 1]))


def test_complex_values_with_a_nan_part_are_distinct(device):
    t = xrt.asarray([complex(1, np.nan), complex(1, np.nan), 1 + 0j, complex(np.nan, 0)],
                    device=device)
    out = xrt.unique_counts(t)
    assert out.values.shape == (4,)
    assert_tensor_equal(out.counts, np.array([1, 1, 1, 1]))


def test_inverse_indices_keep_the_input_shape(device):
    a = np.array([[3, 1], [1, 2], [3, 3]], dtype=np.int8)
    out = xrt.unique_inverse(xrt.asarray(a, device=device))
    assert out.inverse_indices.shape == (3, 2)
    assert_tensor_equal(out.values, np.array([1, 2, 3], np.int8))
    assert np.array_equal(to_numpy(out.values)[to_numpy(out.inverse_indices)], a)


@pytest.mark.parametrize("func", [xrt.unique_all, xrt.unique_counts,
                                  xrt.unique_inverse, xrt.unique_values])
def test_zero_d_and_empty_inputs(device, func):
    out = func(xrt.asarray(5, dtype=xrt.int32, device=device))
    values = out if func is xrt.unique_values else out.values
    assert_tensor_equal(values, np.array([5], np.int32))
    if func in (xrt.unique_all, xrt.unique_inverse):
        assert out.inverse_indices.shape == ()
    out = func(xrt.asarray(np.zeros((2, 0), np.float32), device=device))
    values = out if func is xrt.unique_values else out.values
    assert_tensor_equal(values, np.zeros(0, np.float32))
    if func in (xrt.unique_all, xrt.unique_inverse):
        assert out.inverse_indices.shape == (2, 0)


def test_unique_reads_strided_views(device):
    base = np.random.default_rng(0).integers(0, 6, (8, 10)).astype(np.int16)
    view = base[::-2, 1::3].T
    values, index, inverse, counts = numpy_unique(view)
    out = xrt.unique_all(xrt.asarray(base, device=device)[::-2, 1::3].T)
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.indices, index)
    assert_tensor_equal(out.inverse_indices, inverse)
    assert_tensor_equal(out.counts, counts)


@pytest.mark.parametrize("name", ["float32", "int64", "uint8", "float16"])
def test_unique_of_long_inputs(device, name):
    rng = np.random.default_rng(1)
    a = (rng.integers(0, 1000, 200000)).astype(name)
    values, index, inverse, counts = numpy_unique(a)
    out = xrt.unique_all(xrt.asarray(a, device=device))
    assert_tensor_equal(out.values, values)
    assert_tensor_equal(out.indices, index)
    assert_tensor_equal(out.inverse_indices, inverse)
    assert_tensor_equal(out.counts, counts)
    assert_tensor_equal(xrt.unique_values(xrt.asarray(a, device=device)), values)


@pytest.mark.parametrize("func", [xrt.unique_all, xrt.unique_counts,
                                  xrt.unique_inverse, xrt.unique_values])
def test_unique_needs_a_tensor(func):
    with pytest.raises(TypeError, match="Tensor"):
        func([1, 2, 2])


# -------------------------------------------------------------------- isin


@pytest.mark.parametrize("name", INTEGER + REAL_FLOATING + COMPLEX + ("bool",))
@given(data=st.data())
def test_isin_matches_numpy(device, name, data):
    x1 = data.draw(small_values(name) | arrays(name, shapes))
    x2 = data.draw(small_values(name) | arrays(name, shapes))
    invert = data.draw(st.booleans())
    work = [a.astype(np.float32) if name == "bfloat16" else a for a in (x1, x2)]
    expected = np.isin(*work, invert=invert)
    if x1.dtype.kind in "fc" or name == "bfloat16":  # NaN is never found
        expected = expected & ~np.isnan(work[0]) if not invert else expected | np.isnan(work[0])
    assert_tensor_equal(xrt.isin(tensor(x1, device), tensor(x2, device), invert=invert), expected)


@pytest.mark.parametrize("names", [("int8", "int16"), ("uint8", "int32"),
                                   ("uint16", "uint64"), ("float32", "float64")])
def test_isin_promotes_mixed_dtypes(device, names):
    x1 = np.array([[0, 1], [200, 7]]).astype(names[0])
    x2 = np.array([7, 200, 3]).astype(names[1])
    assert_tensor_equal(xrt.isin(xrt.asarray(x1, device=device), xrt.asarray(x2, device=device)),
                        np.isin(x1, x2))


@pytest.mark.parametrize("name", ["int64", "uint32", "float64", "float16", "int8"])
def test_isin_of_long_inputs(device, name):
    # Wide integer ranges take the sorted-array path, short ones the flag table.
    rng = np.random.default_rng(4)
    for scale in (10**9 if name != "float16" else 60000, 50):
        x1 = rng.integers(0, scale, 100000).astype(name)
        x2 = rng.integers(0, scale, 3000).astype(name)
        if x1.dtype.kind == "f":
            x1[::7], x2[::11] = np.nan, np.nan
        assert_tensor_equal(xrt.isin(xrt.asarray(x1, device=device),
                                     xrt.asarray(x2, device=device)), np.isin(x1, x2))


def test_isin_signed_zeros_are_equal(device):
    out = xrt.isin(xrt.asarray([-0.0, 0.0, 1.0], device=device), xrt.asarray([0.0], device=device))
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


def test_isin_empty_inputs(device):
    empty_i32 = xrt.asarray(np.zeros(0, np.int32), device=device)
    empty_i64 = xrt.asarray(np.zeros(0, np.int64), device=device)
    one_two = xrt.asarray([1, 2], device=device)
    assert_tensor_equal(xrt.isin(empty_i32, xrt.asarray([1], device=device)), np.zeros(0, bool))
    assert_tensor_equal(xrt.isin(one_two, empty_i64), np.array([False, False]))
    assert_tensor_equal(xrt.isin(one_two, empty_i64, invert=True), np.array([True, True]))


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


# ==== on CUDA against the CPU =====================================================================

DEVICE = "cuda:0"
cuda = pytest.mark.cuda
rng = np.random.default_rng(13)
FLOATS = ("float16", "bfloat16", "float32", "float64")
UNIQUE = (xrt.unique_all, xrt.unique_counts, xrt.unique_inverse, xrt.unique_values)


def values(name, shape, distinct=None):
    """Random values; distinct=k draws from k values (many repeats)."""
    if name == "bool":
        return rng.random(shape) < 0.5
    dtype = numpy_dtype(name)
    if distinct is not None:
        pool = values(name, (distinct,))
        return pool[rng.integers(0, distinct, size=shape)]
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    x = rng.standard_normal(shape) * 100
    if name.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape) * 100
    return x.astype(dtype)


def with_specials(a):
    """a (float or complex) with NaNs of two payloads, ±0, ±inf, complex NaN parts."""
    flat = a.reshape(-1)
    if flat.size < 8 or not (flat.dtype.kind in "fc" or flat.dtype.name == "bfloat16"):
        return a
    specials = [np.nan, 0.0, -0.0, np.inf, -np.inf, -0.0, 0.0]
    if flat.dtype.kind == "c":
        specials += [complex(1, np.nan), complex(np.nan, 0), complex(-0.0, 0.0),
                     complex(0.0, -0.0), complex(np.inf, np.nan)]
    positions = rng.integers(0, flat.size, size=max(len(specials), flat.size // 6))
    for i, p in enumerate(positions):
        flat[p] = specials[i % len(specials)]
    if flat.dtype.kind == "f" and flat.itemsize >= 4:  # a NaN with another payload
        bits = flat.view(np.uint32 if flat.itemsize == 4 else np.uint64)
        q = rng.integers(0, flat.size)
        flat[q] = np.nan
        bits[q] |= 1
    return a


def check_unique(a):
    cpu, gpu = both(a)
    for fn in UNIQUE:
        want, got = fn(cpu), fn(gpu)
        if fn is xrt.unique_values:
            want, got = (want,), (got,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same_bits(g, w)


def test_native_kernels_registered():
    for op in ("unique", "isin", "repeat"):
        names = [k["name"] for k in xrt.list_kernels(op) if k["device"] == "cuda"]
        assert "nvrtc" in names and "host_fallback" in names, (op, names)


@cuda
def test_explain_names_the_native_kernels():
    x = xrt.asarray(np.array([3, 1, 3, 2], np.int32), device=DEVICE)
    r = xrt.asarray(np.array([1, 0, 2, 1]), device=DEVICE)
    with xrt.explain() as log:
        for fn in UNIQUE:
            fn(x)
        xrt.isin(x, x[:2])
        xrt.isin(x, x[:2], invert=True)
        xrt.repeat(x, 2)
        xrt.repeat(x, r)
        xrt.repeat(xrt.reshape(x, (2, 2)), 3, axis=1)
    for op, calls in (("unique", 4), ("isin", 2), ("repeat", 3)):
        assert log.kernels(op) == ["nvrtc"] * calls, (op, log.kernels(op))


# ---- unique -------------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", ALL)
def test_unique_every_dtype(name):
    for n, distinct in [(1, None), (100, None), (5000, 7), (70001, 1000), (70001, None)]:
        a = values(name, (n,), distinct)
        check_unique(with_specials(a))


@cuda
@pytest.mark.parametrize("name", FLOATS + ("complex64", "complex128"))
def test_unique_nans_and_zeros(name):
    dtype = numpy_dtype(name)
    a = np.array([np.nan, 0.0, -0.0, np.nan, 1.0, -0.0, np.nan], dtype)
    check_unique(a)
    check_unique(a[::-1].copy())
    check_unique(np.full(3000, np.nan, dtype))
    zeros = np.zeros(5000, dtype)
    zeros[rng.random(5000) < 0.5] = -0.0
    check_unique(zeros)
    if name.startswith("complex"):  # every NaN class (NumPy's order), between plain values
        nan = np.nan
        parts = [complex(1, nan), complex(nan, 1), complex(nan, nan), complex(-np.inf, nan),
                 complex(2, 0), complex(nan, -np.inf), complex(1, nan), complex(0, -0.0),
                 complex(-0.0, 0), complex(-1, 5)]
        check_unique(np.array(parts * 3, dtype)[rng.permutation(len(parts) * 3)])


@cuda
def test_unique_shapes_and_views():
    a = with_specials(values("float32", (30, 40), distinct=50))
    cpu, gpu = both(a)
    for view in (lambda t: t, lambda t: t.mT, lambda t: t[::3, ::-2], lambda t: t[4, 7]):
        for fn in UNIQUE:
            want, got = fn(view(cpu)), fn(view(gpu))
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                same_bits(g, w)
    for shape in [(0,), (3, 0), ()]:
        check_unique(values("int16", shape) if shape else np.int16(5))


@cuda
@pytest.mark.parametrize("n", [4095, 4096, 4097, 1 << 18])
def test_unique_sizes(n):
    check_unique(values("int32", (n,), distinct=n // 3 + 1))
    check_unique(values("uint8", (n,)))
    check_unique(with_specials(values("float64", (n,), distinct=17)))


# ---- isin ---------------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", ALL)
def test_isin_every_dtype(name):
    a = with_specials(values(name, (3000,), distinct=40))
    pool = a.reshape(-1)
    for m in (1, 25, 100000):  # shared memory, and past it for every key width
        b = with_specials(np.concatenate([pool[:min(m, 20)], values(name, (m,))])[:m])
        a_cpu, a_gpu = both(a)
        b_cpu, b_gpu = both(b)
        for invert in (False, True):
            same_bits(xrt.isin(a_gpu, b_gpu, invert=invert),
                      xrt.isin(a_cpu, b_cpu, invert=invert))


@cuda
def test_isin_nans_zeros_shapes_and_promotion():
    a = np.array([[np.nan, 0.0, -0.0], [1.0, np.inf, 2.0]], np.float32)
    b = np.array([-0.0, np.nan, np.inf, 7.0], np.float32)
    a_cpu, a_gpu = both(a)
    b_cpu, b_gpu = both(b)
    for x_cpu, x_gpu in ((a_cpu, a_gpu), (a_cpu.mT, a_gpu.mT), (a_cpu[:, ::-2], a_gpu[:, ::-2]),
                         (a_cpu[1, 2], a_gpu[1, 2])):
        for y_cpu, y_gpu in ((b_cpu, b_gpu), (b_cpu[::-1], b_gpu[::-1]),
                             (xrt.reshape(b_cpu, (2, 2)), xrt.reshape(b_gpu, (2, 2)))):
            same_bits(xrt.isin(x_gpu, y_gpu), xrt.isin(x_cpu, y_cpu))
    e_cpu, e_gpu = both(np.zeros(0, np.float32))
    same_bits(xrt.isin(a_gpu, e_gpu), xrt.isin(a_cpu, e_cpu))
    same_bits(xrt.isin(a_gpu, e_gpu, invert=True), xrt.isin(a_cpu, e_cpu, invert=True))
    same_bits(xrt.isin(e_gpu, b_gpu), xrt.isin(e_cpu, b_cpu))
    i_cpu, i_gpu = both(np.array([1, 2, 300], np.int16))
    u_cpu, u_gpu = both(np.array([2, 255], np.uint8))
    same_bits(xrt.isin(i_gpu, u_gpu), xrt.isin(i_cpu, u_cpu))  # promoted to int16
    c_cpu, c_gpu = both(np.array([1 + 1j, complex(np.nan, 1), 2j], np.complex128))
    d_cpu, d_gpu = both(np.array([2j, complex(np.nan, 1), 1 - 1j], np.complex128))
    same_bits(xrt.isin(c_gpu, d_gpu), xrt.isin(c_cpu, d_cpu))
    same_error(lambda p: xrt.isin(*p), (i_cpu, c_cpu), (i_gpu, c_gpu), TypeError)
    s_cpu, s_gpu = both(np.array([1], np.float64))
    same_error(lambda p: xrt.isin(*p), (i_cpu, s_cpu), (i_gpu, s_gpu), TypeError)


# ---- repeat -------------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", ALL)
def test_repeat_every_dtype(name):
    a = values(name, (4, 5, 3))
    cpu, gpu = both(a)
    counts = rng.integers(0, 4, size=5)
    c_cpu, c_gpu = both(counts)
    for kwargs in ({}, {"axis": 0}, {"axis": 1}, {"axis": -1}):
        same_bits(xrt.repeat(gpu, 3, **kwargs), xrt.repeat(cpu, 3, **kwargs))
        same_bits(xrt.repeat(gpu, 0, **kwargs), xrt.repeat(cpu, 0, **kwargs))
    same_bits(xrt.repeat(gpu, c_gpu, axis=1), xrt.repeat(cpu, c_cpu, axis=1))
    flat = rng.integers(0, 3, size=a.size)
    f_cpu, f_gpu = both(flat)
    same_bits(xrt.repeat(gpu, f_gpu), xrt.repeat(cpu, f_cpu))


@cuda
@pytest.mark.parametrize("name", ["int8", "float16", "float32", "int64", "complex128"])
def test_repeat_by_one_count_in_vectors(name):
    # One count along the last axis: whole vectors of outputs per thread, and a tail.
    for shape, repeats in (((70001,), 3), ((70001,), 1), ((3, 4099), 7), ((5,), 2)):
        cpu, gpu = both(values(name, shape))
        same_bits(xrt.repeat(gpu, repeats), xrt.repeat(cpu, repeats))
        same_bits(xrt.repeat(gpu, repeats, axis=-1), xrt.repeat(cpu, repeats, axis=-1))


@cuda
def test_repeat_counts_views_and_errors():
    a = values("float32", (70001,))
    cpu, gpu = both(a)
    for counts in (rng.integers(0, 5, size=a.size), np.zeros(a.size, np.int64),
                   np.where(rng.random(a.size) < 0.001, 1000, 0)):
        for dtype in (np.int64, np.uint8, np.int32):
            c_cpu, c_gpu = both(counts.astype(dtype))
            same_bits(xrt.repeat(gpu, c_gpu), xrt.repeat(cpu, c_cpu))
    one_cpu, one_gpu = both(np.array([2]))
    same_bits(xrt.repeat(gpu, one_gpu), xrt.repeat(cpu, one_cpu))
    m = values("int8", (6, 7))
    m_cpu, m_gpu = both(m)
    same_bits(xrt.repeat(m_gpu.mT, 2, axis=1), xrt.repeat(m_cpu.mT, 2, axis=1))
    same_bits(xrt.repeat(m_gpu[::2, ::-3], 4), xrt.repeat(m_cpu[::2, ::-3], 4))
    z_cpu, z_gpu = both(np.float64(2.5))
    same_bits(xrt.repeat(z_gpu, 3), xrt.repeat(z_cpu, 3))
    e_cpu, e_gpu = both(np.zeros((0, 3), np.int16))
    same_bits(xrt.repeat(e_gpu, 5, axis=1), xrt.repeat(e_cpu, 5, axis=1))
    same_error(lambda t: xrt.repeat(t, -1), cpu, gpu, ValueError)
    bad_cpu, bad_gpu = both(np.array([1, -2, 3]))
    small_cpu, small_gpu = both(np.arange(3.0))
    same_error(lambda p: xrt.repeat(*p), (small_cpu, bad_cpu), (small_gpu, bad_gpu), ValueError)
    wrong_cpu, wrong_gpu = both(np.array([1, 2]))
    same_error(lambda p: xrt.repeat(*p), (small_cpu, wrong_cpu), (small_gpu, wrong_gpu),
               ValueError)
    f_cpu, f_gpu = both(np.array([1.0, 2.0, 3.0]))
    same_error(lambda p: xrt.repeat(*p), (small_cpu, f_cpu), (small_gpu, f_gpu), TypeError)
    same_error(lambda t: xrt.repeat(t, 2, axis=2), m_cpu, m_gpu, Exception)


# ---- streams ------------------------------------------------------------------------------

@cuda
def test_sets_run_on_the_current_stream(torch):  # noqa: F811
    """Inputs written late on a busy stream are seen by the kernels on that stream."""
    a = values("int32", (1 << 18,), distinct=500)
    b = a[:100].copy()
    s = xrt.cuda.Stream()
    base = xrt.asarray(a, device=DEVICE)
    probe = xrt.asarray(b, device=DEVICE)
    xrt.cuda.synchronize()
    with s:
        busy(torch, s)
        x = base + 1          # queued behind the sleep
        y = probe + 1
        values_, counts = xrt.unique_counts(x)
        found = xrt.isin(x, y)
        repeated = xrt.repeat(x, 2)
    s.synchronize()           # the host copies below run on the default stream, not on s
    want_values, want_counts = np.unique(a + 1, return_counts=True)
    np.testing.assert_array_equal(host(values_), want_values)
    np.testing.assert_array_equal(host(counts), want_counts)
    np.testing.assert_array_equal(host(found), np.isin(a + 1, b + 1))
    np.testing.assert_array_equal(host(repeated), np.repeat(a + 1, 2))


@cuda
def test_isin_and_repeat_do_not_wait(torch):  # noqa: F811
    """Sizes known on the host: isin and repeat by an int return with the stream busy."""
    x = xrt.asarray(values("float32", (1 << 16,)), device=DEVICE)
    y = xrt.asarray(values("float32", (1000,)), device=DEVICE)
    xrt.isin(x, y)
    xrt.repeat(x, 3)  # compiled and loaded before the stream is held up
    xrt.cuda.synchronize()
    s = xrt.cuda.Stream()
    with s:
        busy(torch, s, cycles=10 * 200_000_000)
        found = xrt.isin(x, y)
        repeated = xrt.repeat(x, 3)
        assert not s.query()
    s.synchronize()
    np.testing.assert_array_equal(host(found), np.isin(host(x), host(y)))
    np.testing.assert_array_equal(host(repeated), np.repeat(host(x), 3))


# ---- against NumPy ------------------------------------------------------------------------

@cuda
@given(st.data())
def test_sets_match_numpy(data):
    name = data.draw(st.sampled_from(["bool", "int8", "uint16", "int64", "float32",
                                      "float64", "complex64"]))
    dtype = numpy_dtype(name)
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=40))
    elements = hnp.from_dtype(dtype, allow_nan=False) if dtype.kind in "fc" else None
    a = data.draw(hnp.arrays(dtype, shape, elements=elements))
    b = data.draw(hnp.arrays(dtype, data.draw(st.integers(0, 30)), elements=elements))
    x = xrt.asarray(a, device=DEVICE)
    y = xrt.asarray(b, device=DEVICE)
    values_, indices, inverse, counts = xrt.unique_all(x)
    want = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(host(values_), want[0])
    np.testing.assert_array_equal(host(indices), want[1])
    np.testing.assert_array_equal(host(inverse).reshape(-1), want[2].reshape(-1))
    np.testing.assert_array_equal(host(counts), want[3])
    invert = data.draw(st.booleans())
    np.testing.assert_array_equal(host(xrt.isin(x, y, invert=invert)),
                                  np.isin(a, b, invert=invert))
    r = data.draw(st.integers(0, 3))
    np.testing.assert_array_equal(host(xrt.repeat(x, r)), np.repeat(a, r))
    counts_ = data.draw(hnp.arrays(np.int64, shape[:1], elements=st.integers(0, 3)))
    np.testing.assert_array_equal(host(xrt.repeat(x, xrt.asarray(counts_, device=DEVICE),
                                                  axis=0)),
                                  np.repeat(a, counts_, axis=0))
