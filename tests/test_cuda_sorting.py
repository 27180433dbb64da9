"""tests/test_cuda_sorting.py: the native CUDA sort, argsort and searchsorted give the CPU's
results bit for bit: every real numeric dtype, ascending and descending, ties kept in input order,
NaN / ±0 / ±inf, rows of every length the kernels tell apart (0, 1, 31, 1000 in shared
memory; 2049, 10^5 and 2^20 through the radix sort), many short rows, other axes and
strided views.

Without a GPU, the kernels' sources are compiled for sm_90 by test_cuda_jit.py's
compile-all test (the family registers samples with kernel_check.h).
"""

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, numpy_dtype, tensor, to_numpy

pytestmark = pytest.mark.cuda

# bool is not a real numeric dtype: sort, argsort and searchsorted reject it (TypeError).
REAL = tuple(n for n in ALL if not n.startswith("complex") and n != "bool")
FLOATS = ("float16", "bfloat16", "float32", "float64")
rng = np.random.default_rng(5)


def values(name, shape, few=False):
    """Random values of dtype `name`; few=True draws from a handful (many ties)."""
    if name == "bool":
        return rng.random(shape) < 0.5
    dtype = numpy_dtype(name)
    if few:
        return rng.integers(0, 4, size=shape).astype(dtype)
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    x = rng.standard_normal(shape) * 100
    return x.astype(dtype)


def with_specials(a):
    """a (float) with NaNs of two payloads, ±0 and ±inf spread over it."""
    flat = a.reshape(-1)
    k = flat.size
    if k == 0:
        return a
    bits = flat.view(np.uint16 if flat.itemsize == 2 else
                     np.uint32 if flat.itemsize == 4 else np.uint64)
    specials = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf]
    positions = rng.integers(0, k, size=max(1, k // 5))
    for i, p in enumerate(positions):
        flat[p] = specials[i % len(specials)]
    if k > 3:  # a NaN with another payload
        q = rng.integers(0, k)
        flat[q] = np.nan
        bits[q] |= 1
    return a


def bits(t):
    a = to_numpy(t.to_device("cpu") if str(t.device) != "cpu" else t)
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def check(a, axis=-1, descending=False, stable=True):
    cpu = tensor(a)
    gpu = cpu.to_device("cuda:0")
    for fn in (xrt.sort, xrt.argsort):
        want = fn(cpu, axis=axis, descending=descending, stable=stable)
        got = fn(gpu, axis=axis, descending=descending, stable=stable)
        assert str(got.device) != "cpu"
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(bits(got), bits(want), err_msg=f"{fn.__name__} {a.dtype}")


def test_native_kernels_registered():
    for op in ("sort", "argsort", "searchsorted"):
        assert any(k["device"] == "cuda" and k["name"] == "nvrtc" for k in xrt.list_kernels(op))


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("n", [0, 1, 2, 31, 1000, 2049])
@pytest.mark.parametrize("descending", [False, True])
def test_lengths(name, n, descending):
    a = values(name, (3, n))
    if name in FLOATS:
        a = with_specials(a)
    check(a, descending=descending)


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("descending", [False, True])
def test_ties_are_stable(name, descending):
    for n in (31, 1000, 5000):
        check(values(name, (2, n), few=True), descending=descending)


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "uint8", "float16", "bfloat16"])
def test_long_row(name):
    a = values(name, (1 << 20,))
    if name in FLOATS:
        a = with_specials(a)
    check(a)
    check(a, descending=True)


@pytest.mark.parametrize("name", ["float32", "int16"])
def test_many_short_rows(name):
    check(values(name, (20000, 7)))
    check(values(name, (3000, 100), few=True), descending=True)
    check(values(name, (50, 4000)))


def test_other_axes_and_views():
    a = with_specials(values("float32", (5, 300, 4)))
    for axis in (0, 1, 2, -1):
        check(a, axis=axis)
        check(a, axis=axis, descending=True)
    cpu = tensor(values("int32", (64, 64)))
    gpu = cpu.to_device("cuda:0")
    for view in (lambda t: t[::2, ::-3], lambda t: t.mT):
        np.testing.assert_array_equal(bits(xrt.sort(view(gpu), axis=-1)),
                                      bits(xrt.sort(view(cpu), axis=-1)))
        np.testing.assert_array_equal(bits(xrt.argsort(view(gpu), axis=0)),
                                      bits(xrt.argsort(view(cpu), axis=0)))


@pytest.mark.parametrize("name", ["bool", "complex64"])
def test_rejected_dtypes(name):
    x = tensor(np.zeros(4, numpy_dtype(name))).to_device("cuda:0")
    for fn in (xrt.sort, xrt.argsort):
        with pytest.raises(TypeError):
            fn(x)
    with pytest.raises(TypeError):
        xrt.searchsorted(x, x)


def test_zero_dim_and_empty():
    for shape in [(), (0,), (4, 0), (0, 5)]:
        a = np.zeros(shape, np.float32) if shape == () else values("float32", shape)
        if shape == ():
            with pytest.raises(Exception):
                xrt.sort(tensor(a).to_device("cuda:0"))
            continue
        check(a)


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(name, side):
    a = values(name, (500,), few=True)
    if name in FLOATS:
        a = with_specials(a)
    x1 = xrt.sort(tensor(a))
    needles = values(name, (7, 30), few=True)
    if name in FLOATS:
        needles = with_specials(needles)
    x2 = tensor(needles)
    want = xrt.searchsorted(x1, x2, side=side)
    got = xrt.searchsorted(x1.to_device("cuda:0"), x2.to_device("cuda:0"), side=side)
    np.testing.assert_array_equal(bits(got), bits(want))
    sorter = xrt.argsort(tensor(a))
    want = xrt.searchsorted(tensor(a), x2, side=side, sorter=sorter)
    got = xrt.searchsorted(tensor(a).to_device("cuda:0"), x2.to_device("cuda:0"), side=side,
                           sorter=sorter.to_device("cuda:0"))
    np.testing.assert_array_equal(bits(got), bits(want))


def test_searchsorted_bad_sorter():
    a = tensor(np.arange(10, dtype=np.float32)).to_device("cuda:0")
    sorter = tensor(np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 10], np.int64)).to_device("cuda:0")
    with pytest.raises(IndexError):
        xrt.searchsorted(a, a, sorter=sorter)
    # the device stays usable
    np.testing.assert_array_equal(bits(xrt.searchsorted(a, a)), np.arange(10, dtype=np.uint64))
