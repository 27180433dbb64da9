"""tests/test_linalg_cuda_layouts.py: linalg on CUDA for empty stacks, non-contiguous and
broadcast inputs, half precision, 1 x 1 matrices and a non-default stream; cross and outer
compared with the CPU bit for bit.
"""

import numpy as np
import pytest
import xpuruntime as xrt
from common import NUMERIC, numpy_dtype, tensor, to_numpy
from cuda_helpers import busy
from linalg_helpers import (linalg, cuda, rng, random, positive_definite, on, on_cuda, host,
                            close_to, mT)


# ---- shapes, layouts, dtypes --------------------------------------------------------------

FUNCTIONS = ["cholesky", "det", "slogdet", "inv", "qr", "eigh", "eigvalsh", "eig", "eigvals",
             "svd", "svdvals", "pinv", "matrix_rank"]


@pytest.mark.parametrize("fn", FUNCTIONS + ["solve"])
def test_empty_stacks_stay_on_their_device(device, fn):
    x = xrt.zeros((0, 3, 3), device=device)
    out = linalg.solve(x, x) if fn == "solve" else getattr(linalg, fn)(x)
    for t in out if isinstance(out, tuple) else (out,):
        assert t.shape[0] == 0 and t.device == x.device


@cuda
@pytest.mark.parametrize("fn", FUNCTIONS + ["solve"])
def test_non_contiguous_inputs(fn):
    base = positive_definite("float64", (3, 12, 12))
    cases = [  # (CUDA view, the same view on the CPU)
        (on_cuda(base)[::2, ::2, ::2], tensor(base)[::2, ::2, ::2]),  # strided everywhere
        (on_cuda(mT(base).copy()).mT, tensor(base)),  # column-major strides
    ]
    for x, cpu in cases:
        assert x.shape == cpu.shape
        call = (lambda t: linalg.solve(t, t)) if fn == "solve" else getattr(linalg, fn)
        got, expected = call(x), call(cpu)
        got = [host(t) for t in (got if isinstance(got, tuple) else (got,))]
        expected = [to_numpy(t) for t in (expected if isinstance(expected, tuple) else (expected,))]
        if fn in ("eig", "eigvals"):  # each library orders the eigenvalues its own way
            got, expected = [np.sort(np.abs(got[0]))], [np.sort(np.abs(expected[0]))]
        elif fn in ("qr", "eigh", "svd"):  # the factors are unique up to signs
            got, expected = [np.abs(g) for g in got], [np.abs(e) for e in expected]
        for g, e in zip(got, expected):
            close_to(g, e, "float64", scale=np.abs(e).max() * 10 if e.size else 1)


@cuda
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_precision_computes_in_float32(name):
    a = positive_definite("float32", (4, 4)).astype(numpy_dtype(name))
    x = on_cuda(a)
    for fn in ("cholesky", "inv", "det", "eigvalsh", "svdvals", "pinv"):
        got = getattr(linalg, fn)(x)
        assert got.dtype == getattr(xrt, name), fn
        expected = getattr(linalg, fn)(tensor(a))
        np.testing.assert_allclose(host(got).astype(np.float32),
                                   to_numpy(expected).astype(np.float32), rtol=2e-2, atol=2e-2)


def test_one_by_one_matrices(device):
    a = np.array([[[4.0]], [[-2.0]]])
    x = on(device, a)
    np.testing.assert_allclose(host(linalg.det(x), device), [4, -2])
    np.testing.assert_allclose(host(linalg.inv(x), device), 1 / a)
    np.testing.assert_allclose(host(linalg.svdvals(x), device), [[4], [2]])
    np.testing.assert_allclose(host(linalg.eigvalsh(x), device), [[4], [-2]])
    np.testing.assert_array_equal(host(linalg.matrix_rank(x), device), [1, 1])
    np.testing.assert_allclose(host(linalg.cholesky(x[:1]), device), [[[2.0]]])


@cuda
def test_a_non_default_stream_orders_the_work(request):
    """The inputs are written late on our (non-blocking) stream, behind a GPU sleep when
    PyTorch is here: the kernels must run on that stream, after it, to see them."""
    a = positive_definite("float64", (3, 50, 50))
    small = positive_definite("float64", (64, 8, 8))
    x0, y0 = on_cuda(a), on_cuda(small)
    xrt.cuda.synchronize()
    stream = xrt.cuda.Stream()
    with stream:
        try:
            busy(request.getfixturevalue("torch"), stream)
        except pytest.skip.Exception:
            pass
        x, y = x0 * 1.0, y0 * 1.0  # written on the stream, after the sleep
        results = [linalg.cholesky(x), linalg.inv(y), linalg.det(x), linalg.eigvalsh(x),
                   linalg.svdvals(y), linalg.solve(x, x[..., :2]), linalg.qr(y)[1],
                   linalg.pinv(y)]
        hosts = [host(t) for t in results]
    close_to(hosts[0], np.linalg.cholesky(a), "float64", 10)
    close_to(hosts[1], np.linalg.inv(small), "float64")
    np.testing.assert_allclose(hosts[2], np.linalg.det(a), rtol=1e-9)
    close_to(hosts[3], np.linalg.eigvalsh(a), "float64", 100)
    close_to(hosts[4], np.linalg.svd(small, compute_uv=False), "float64", 100)
    close_to(hosts[5], np.linalg.solve(a, a[..., :2]), "float64")
    close_to(np.abs(hosts[6]), np.abs(np.linalg.qr(small)[1]), "float64", 100)
    close_to(hosts[7], np.linalg.pinv(small), "float64", 10)


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    return torch


# ---- cross, outer: the CPU's results bit for bit -------------------------------------------

def _values(name, shape):
    dtype = numpy_dtype(name)
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    a = random("complex128" if name.startswith("complex") else "float64", shape) * 100
    return a.astype(dtype)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[
        a.itemsize])


def assert_same(got, expected):
    """Bit for bit, except that a NaN is any NaN (the GPU's NaNs carry no payload)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, expected)
        return
    wide = np.complex128 if got.dtype.kind == "c" else np.float64  # exact for every float
    g = np.ascontiguousarray(got.astype(wide)).view(np.float64)
    e = np.ascontiguousarray(expected.astype(wide)).view(np.float64)
    nan = np.isnan(e)
    np.testing.assert_array_equal(np.isnan(g), nan)
    np.testing.assert_array_equal(_bits(g[~nan]), _bits(e[~nan]))


@cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_cross_is_the_cpus_bit_for_bit(name):
    a, b = _values(name, (4, 3, 5)), _values(name, (1, 3, 5))
    for axis in (-2,):
        got = linalg.cross(on_cuda(a), on_cuda(b), axis=axis)
        expected = linalg.cross(tensor(a), tensor(b), axis=axis)
        assert_same(host(got), to_numpy(expected))
    # last axis, a transposed view
    c, d = _values(name, (3, 6)), _values(name, (6, 3))
    got = linalg.cross(on_cuda(c).mT, on_cuda(d))
    expected = linalg.cross(tensor(c).mT, tensor(d))
    assert_same(host(got), to_numpy(expected))


@cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_outer_is_the_cpus_bit_for_bit(name):
    a, b = _values(name, (7,)), _values(name, (9,))
    got = linalg.outer(on_cuda(a), on_cuda(b))
    expected = linalg.outer(tensor(a), tensor(b))
    assert_same(host(got), to_numpy(expected))
    got = linalg.outer(on_cuda(a)[::-2], on_cuda(b)[1::3])  # strided views
    expected = linalg.outer(tensor(a)[::-2], tensor(b)[1::3])
    assert_same(host(got), to_numpy(expected))


@cuda
def test_cross_and_outer_keep_special_values():
    a = np.array([[np.inf, 0.0, -0.0], [np.nan, 1.0, 2.0]])
    b = np.array([[1.0, -0.0, 0.0], [3.0, np.inf, -1.0]])
    for fn, args in ((linalg.cross, (a, b)), (linalg.outer, (a[0], b[1]))):
        got = host(fn(*(on_cuda(x) for x in args)))
        expected = to_numpy(fn(*(tensor(x) for x in args)))
        assert_same(got, expected)
    z = np.array([complex(np.inf, 0), complex(0, -0.0), complex(np.nan, 1)])
    got = host(linalg.outer(on_cuda(z), on_cuda(z[::-1])))
    expected = to_numpy(linalg.outer(tensor(z), tensor(z[::-1])))
    assert_same(got, expected)
