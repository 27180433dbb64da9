"""tests/fft_helpers.py: what the fft tests share: the dtypes, norms and lengths, random
inputs, the hypothesis strategy of one-axis cases, and the comparisons with numpy.fft
(check, measured against the largest value of NumPy's double-precision result and growing
with log2(n); assert_close, the rounding alone for the CPU's float32 results).
"""

import math

import numpy as np
from hypothesis import strategies as st

import xpuruntime as xrt
from common import tensor, to_numpy


FFT_DTYPES = ("float32", "float64", "complex64", "complex128")
REAL = ("float32", "float64")
NORMS = ("backward", "ortho", "forward")
COMPLEX_OF = {"float32": "complex64", "float64": "complex128",
              "complex64": "complex64", "complex128": "complex128"}
REAL_OF = {"float32": "float32", "float64": "float64",
           "complex64": "float32", "complex128": "float64"}

PRIMES = [p for p in range(2, 300) if all(p % q for q in range(2, int(p**0.5) + 1))]
PRIME_POWERS = [p**k for p in (2, 3, 5, 7, 11, 13, 17) for k in range(2, 9) if p**k <= 300]
# Lengths 1..300: small and smooth ones, primes (those above ~70 take the Bluestein path),
# prime powers, and everything in between.
lengths = st.integers(1, 300) | st.sampled_from(PRIMES) | st.sampled_from(PRIME_POWERS)
norms = st.sampled_from(NORMS)


def random_array(seed, shape, name):
    """Standard normal values of dtype `name` (complex: both parts)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if name.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(name)


def complex_of(name):
    return "complex64" if name in ("float32", "complex64") else "complex128"


def real_of(name):
    return "float32" if name in ("float32", "complex64") else "float64"


def widened(a):
    """The exact values of `a` in double precision (the reference computes there)."""
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def place(device, a):
    """A copy of `a` on `device` (a copy on the CPU too, so that a check that the input is
    left untouched compares with values no transform could have written)."""
    return tensor(np.array(a, copy=True, order="C"), device)


def host(t):
    return to_numpy(t)


def check(device, t, expected, name, n):
    """t: a tensor on `device` of dtype `name` and expected's shape, within a tolerance that
    grows with log2(n) (cuFFT computes in the dtype's precision)."""
    assert isinstance(t, xrt.Tensor)
    assert t.device == xrt.Device(device)
    assert t.dtype == getattr(xrt, name)
    expected = np.asarray(expected)
    assert t.shape == expected.shape
    if expected.size == 0:
        return
    single = name in ("float32", "complex64")
    tol = (4e-7 if single else 2e-15) * (8 + 2 * math.log2(max(n, 2)))
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    error = float(np.max(np.abs(host(t).astype(expected.dtype) - expected)))
    assert error <= tol * scale, (error / scale, tol)


def uses_cufft(op):
    return any(k["device"] == "cuda" and k["name"] == "cufft" for k in xrt.list_kernels(op))


def assert_close(t, expected, dtype_name):
    """dtype and shape exact; values within max|error| / max|expected| <= tol: the
    transforms compute in double, so float32 results are off by their rounding only."""
    assert isinstance(t, xrt.Tensor)
    assert t.dtype == getattr(xrt, dtype_name)
    expected = np.asarray(expected)
    assert t.shape == expected.shape
    actual = to_numpy(t).astype(expected.dtype)
    if expected.size == 0:
        return
    tol = 1e-12 if dtype_name in ("float64", "complex128") else 1e-6
    scale = max(np.max(np.abs(expected)), 1e-300)
    assert np.max(np.abs(actual - expected)) <= tol * scale


@st.composite
def lines(draw, dtypes=FFT_DTYPES):
    """(NumPy array, axis): 1 to 3 dimensions, a length from `lengths` along axis."""
    name = draw(st.sampled_from(dtypes))
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    axis = draw(st.integers(-ndim, ndim - 1))
    shape[axis] = draw(lengths)
    return random_array(draw(st.integers(0, 2**32 - 1)), tuple(shape), name), axis
