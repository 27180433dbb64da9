"""tests/elementwise_cuda_helpers.py: what the elementwise tests on CUDA share: the ulp
bounds (explained in test_elementwise_cuda_functions.py's docstring), the random inputs of
every dtype, moving arrays to CUDA and back, and the comparisons of a CUDA result with the
CPU's (same, close, both).
"""

import numpy as np

import xpuruntime as xrt
from common import COMPLEX, INTEGER
from common import CUDA_DEVICE, numpy_dtype, tensor, to_numpy


CUDA = CUDA_DEVICE
REAL_ULPS = 8          # real results of inexact functions (see test_elementwise_cuda_functions.py)
HALF_ULPS = 1          # float16/bfloat16 results of inexact functions
COMPLEX_ULPS = 8       # complex results, norm-wise
rng = np.random.default_rng(2025)


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


def gpu(a):
    return tensor(a).to_device(CUDA)


def host(t):
    assert t.device == xrt.Device(CUDA)
    return to_numpy(t.to_device("cpu"))


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
