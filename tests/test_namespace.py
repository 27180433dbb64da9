"""tests/test_namespace.py: the namespace on every device: views, in-place operators, Python
scalars and errors with one body for the CPU and CUDA, and on CUDA one call of every family
(native kernels where they exist, the host fallback elsewhere) against the CPU's result.
Without a GPU, the CPU-only part checks the error a CUDA tensor gives."""

import numpy as np
import pytest

import xpuruntime as xrt
from common import CUDA_DEVICE, to_numpy

rng = np.random.default_rng(3)


def on(device, a):
    return xrt.asarray(a, device=device)


def gpu(a):
    return on(CUDA_DEVICE, a)


def host(t, device=CUDA_DEVICE):
    """A result as a NumPy array, after checking that it is on `device`."""
    assert str(t.device) == device, t.device
    return to_numpy(t)


def same(got, want):
    np.testing.assert_array_equal(host(got), np.from_dlpack(want))


# Ops whose CUDA kernels round differently from the CPU's (cuBLAS, device libm, another
# summation order); everything else must match bit for bit.
APPROXIMATE = {"matmul", "linalg.inv", "linalg.det", "linalg.eigh", "linalg.solve", "fft.fft",
               "fft.rfft", "exp", "mean axis 1", "var", "sum axis 0"}


@pytest.mark.skipif("xrt.cuda.is_available()")
def test_cuda_tensor_without_cuda_says_why():
    with pytest.raises(xrt.CudaError, match="not available"):
        xrt.asarray([1.0], device="cuda:0")


A = rng.standard_normal((5, 7)).astype(np.float32)
M = rng.standard_normal((4, 4)) + 4 * np.eye(4)
I = rng.integers(-5, 5, size=20)

CASES = {
    "sum axis 0": lambda x: xrt.sum(x(A), axis=0),
    "max": lambda x: xrt.max(x(A)),
    "mean axis 1": lambda x: xrt.mean(x(A), axis=1),
    "var": lambda x: xrt.var(x(A), correction=1),
    "argmax": lambda x: xrt.argmax(x(A), axis=1),
    "cumulative_sum": lambda x: xrt.cumulative_sum(x(I)),
    "sort": lambda x: xrt.sort(x(A), axis=1),
    "argsort descending": lambda x: xrt.argsort(x(I), descending=True),
    "unique_values": lambda x: xrt.unique_values(x(I)),
    "unique_counts": lambda x: xrt.unique_counts(x(I)).counts,
    "searchsorted": lambda x: xrt.searchsorted(x(np.sort(I)), x(np.array([0, 3]))),
    "nonzero": lambda x: xrt.nonzero(x(I))[0],
    "where": lambda x: xrt.where(x(A) > 0, x(A), 0.0),
    "mask getitem": lambda x: x(A)[x(A) > 0],
    "integer getitem": lambda x: x(I)[x(np.array([3, 1, -1]))],
    "slice getitem": lambda x: x(A)[1:4, ::-2],
    "take": lambda x: xrt.take(x(A), x(np.array([0, 2])), axis=1),
    "concat": lambda x: xrt.concat([x(A), x(A)], axis=0),
    "flip": lambda x: xrt.flip(x(A), axis=1),
    "roll": lambda x: xrt.roll(x(I), 3),
    "tril": lambda x: xrt.tril(x(A)),
    "matmul": lambda x: x(M) @ x(M),
    "linalg.inv": lambda x: xrt.linalg.inv(x(M)),
    "linalg.det": lambda x: xrt.linalg.det(x(M)),
    "linalg.eigh": lambda x: xrt.linalg.eigh(x(M + M.T)).eigenvalues,
    "linalg.solve": lambda x: xrt.linalg.solve(x(M), x(M[:, :1])),
    "fft.fft": lambda x: xrt.fft.fft(x(A.astype(np.complex64))),
    "fft.rfft": lambda x: xrt.fft.rfft(x(A)),
    "exp": lambda x: xrt.exp(x(A)),
    "add broadcast": lambda x: x(A) + x(A[0]),
    "astype": lambda x: xrt.astype(x(A), xrt.int32),
    "isin": lambda x: xrt.isin(x(I), x(np.array([1, 2]))),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_matches_cpu(name):
    make = CASES[name]
    want = make(xrt.asarray)
    got = make(gpu)
    if name in APPROXIMATE:
        want = np.from_dlpack(want)
        # cuFFT computes complex64 in float32 (the CPU in double): its error is relative to
        # the largest value, not to each one.
        atol = 2e-6 * np.max(np.abs(want)) if name.startswith("fft.") else 1e-12
        np.testing.assert_allclose(host(got), want, rtol=1e-6, atol=atol)
    else:
        same(got, want)


def test_setitem_on_views(device):
    a = np.arange(24.0).reshape(4, 6)
    x = on(device, a.copy())
    x[1:3, ::2] = -1.0
    a[1:3, ::2] = -1.0
    x[x > 20] = 0.0
    a[a > 20] = 0.0
    x[on(device, np.array([0, 3])), 1] = 7.0
    a[[0, 3], 1] = 7.0
    np.testing.assert_array_equal(host(x, device), a)


def test_inplace_operator_on_a_strided_view(device):
    a = np.arange(12.0)
    x = on(device, a.copy())
    v = x[::3]
    v += 100.0
    a[::3] += 100.0
    np.testing.assert_array_equal(host(x, device), a)


def test_python_scalars_and_conversions(device):
    x = on(device, np.array([1.5, -2.0]))
    assert float(x[0]) == 1.5
    assert int(on(device, np.array(7))) == 7
    assert bool(on(device, np.array(True))) is True
    np.testing.assert_array_equal(host(x * 2, device), np.array([3.0, -4.0]))


def test_errors_on_every_device(device):
    with pytest.raises(ValueError):
        on(device, np.ones((2, 3))) + on(device, np.ones((4,)))
    with pytest.raises(TypeError):
        xrt.bitwise_and(on(device, np.ones(2)), on(device, np.ones(2)))
    with pytest.raises(IndexError):
        on(device, np.ones(3))[5]


@pytest.mark.cuda
def test_a_cuda_and_a_cpu_operand_are_an_error():
    with pytest.raises(ValueError, match="device"):
        gpu(np.ones(2)) + xrt.asarray(np.ones(2))
