"""tests/linalg_helpers.py: what the linalg tests share: the dtypes, the hypothesis
strategies for stacks of matrices and the tolerance per dtype (test_linalg_*.py), and the
well-conditioned random matrices and comparisons of the tests on every device and on CUDA
(test_linalg_cuda_*.py).
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
import xpuruntime as xrt
from common import CUDA_DEVICE, arrays, tensor, to_numpy
from hypothesis import strategies as st


linalg = xrt.linalg
FLOATS = ("float32", "float64", "complex64", "complex128")
REAL = ("float32", "float64")

stacks = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
sizes = st.integers(0, 5)


def tolerance(name):
    return 1e-4 if name in ("float32", "complex64") else 1e-10


def elements(name, bound=10):
    """Finite values up to bound, without subnormals (LAPACK's results on those are as
    far from the exact ones as NumPy's)."""
    finite = {"allow_nan": False, "allow_infinity": False, "allow_subnormal": False}
    if name in ("complex64", "complex128"):
        return {"max_magnitude": bound, **finite}
    return {"min_value": -bound, "max_value": bound, **finite}


def matrices(data, name, rows=None, cols=None, stack=None, bound=10):
    """A stack of rows x cols matrices of dtype `name` (drawn where not given)."""
    rows = data.draw(sizes) if rows is None else rows
    cols = data.draw(sizes) if cols is None else cols
    stack = data.draw(stacks) if stack is None else stack
    return data.draw(arrays(name, tuple(stack) + (rows, cols), **elements(name, bound)))


def invertible(a):
    """a made strictly diagonally dominant: nonsingular and well conditioned."""
    n = a.shape[-1]
    weight = np.abs(a).sum(axis=-1, keepdims=True) + 1
    return (a + np.eye(n, dtype=a.dtype) * weight).astype(a.dtype)


def hermitian(a):
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(a.dtype)


def adjoint(a):
    return np.conj(np.swapaxes(a, -1, -2))


def close(t, expected, name, scale=1.0):
    """t matches expected within the dtype's tolerance (atol relative to scale)."""
    tol = tolerance(name)
    np.testing.assert_allclose(to_numpy(t), expected, rtol=tol, atol=tol * scale)


def scale_of(a):
    return max(1.0, float(np.max(np.abs(a), initial=0)))


cuda = pytest.mark.cuda

# Relative tolerances: cuSOLVER and LAPACK round differently (other blockings, other
# algorithms for the batched routines); the matrices below are well conditioned.
TOL = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-10, "complex128": 1e-10}
rng = np.random.default_rng(11)

# Orders that take the batched routines (<= 32) and the per-matrix ones.
SHAPES = [(1, 1), (3, 3), (4, 6, 6), (2, 3, 8, 8), (33, 33), (3, 40, 40), (100, 100)]


def random(name, shape):
    a = rng.standard_normal(shape)
    if name.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(name)


def well_conditioned(name, shape):
    n = shape[-1]
    return (random(name, shape) + n * np.eye(n)).astype(name)


def positive_definite(name, shape):
    b = random(name, shape)
    n = shape[-1]
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)).astype(name)


def random_hermitian(name, shape):
    b = random(name, shape)
    return ((b + np.conj(np.swapaxes(b, -1, -2))) / 2).astype(name)


def on(device, a):
    return tensor(np.ascontiguousarray(a), device)


def on_cuda(a):
    return on(CUDA_DEVICE, a)


def host(t, device=CUDA_DEVICE):
    """A result as a NumPy array, after checking that it is on `device`."""
    assert t.device == xrt.Device(device)
    return to_numpy(t)


def close_to(got, expected, name, scale=1.0):
    expected = np.asarray(expected)
    tol = TOL[name] * max(1.0, float(scale))
    np.testing.assert_allclose(got, expected, rtol=TOL[name], atol=tol)


def mT(a):
    return np.swapaxes(a, -1, -2)


def identity_like(q):
    k = q.shape[-1]
    return np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k))


def _cpu_error(fn, *arrays):
    with pytest.raises(linalg.LinAlgError) as info:
        fn(*(tensor(a) for a in arrays))
    return info.value
