"""tests/test_special.py: xpuruntime.special (erf, gelu) on CPU and CUDA: values against the
C library's erf in double, the IEEE special values, every real floating dtype, strided
inputs, and clear errors for what it does not take."""

import math

import numpy as np
import pytest

import xpuruntime as xrt
from xpuruntime import special

GRID = np.concatenate([np.linspace(-8, 8, 4001), [0.0, -0.0, 1e-30, -1e-30, 3e-8, 40.0]])
ERF = np.vectorize(math.erf)


def host(t, dtype=None):
    """t on the CPU as NumPy (float64 when dtype is float64)."""
    t = t.to_device("cpu")
    return np.asarray(xrt.astype(t, dtype) if dtype is not None else t)


def gelu_reference(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + ERF(x / math.sqrt(2)))


# (dtype, relative tolerance near the result's scale)
FLOATS = [("float32", 2e-6), ("float64", 1e-14), ("float16", 2e-3), ("bfloat16", 1.6e-2)]


@pytest.mark.parametrize("name,rtol", FLOATS)
def test_erf_matches_the_c_library(device, name, rtol):
    dtype = getattr(xrt, name)
    x = xrt.astype(xrt.asarray(GRID, device=device), dtype)
    exact = ERF(host(x, xrt.float64))
    got = special.erf(x)
    assert got.dtype == dtype and got.device == x.device
    got = host(got, xrt.float64)
    np.testing.assert_allclose(got, exact, rtol=rtol, atol=rtol * 1e-3)


def test_erf_special_values(device):
    x = xrt.asarray([math.inf, -math.inf, math.nan, 0.0, -0.0], device=device)
    got = host(special.erf(x))
    assert got[0] == 1.0 and got[1] == -1.0 and math.isnan(got[2])
    assert got[3] == 0.0 and not math.copysign(1, got[3]) < 0
    assert got[4] == 0.0 and math.copysign(1, got[4]) < 0  # erf keeps the zero's sign


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("name,rtol", FLOATS)
def test_gelu(device, approximate, name, rtol):
    dtype = getattr(xrt, name)
    x = xrt.astype(xrt.asarray(GRID, device=device), dtype)
    exact = gelu_reference(host(x, xrt.float64),
                           approximate)
    got = special.gelu(x, approximate=approximate)
    assert got.dtype == dtype
    got = host(got, xrt.float64)
    # gelu(x) is ~x for large x and ~0 for very negative x: an absolute floor at the scale
    # of the dtype's rounding of x.
    np.testing.assert_allclose(got, exact, rtol=rtol, atol=rtol * 8)


def test_gelu_infinities_and_nan(device):
    x = xrt.asarray([math.inf, -math.inf, math.nan], device=device)
    for approximate in ("none", "tanh"):
        got = host(special.gelu(x, approximate=approximate))
        assert got[0] == math.inf and math.isnan(got[2])
        # x * Phi(x) at -inf: -inf * 0 is NaN in IEEE arithmetic, as in torch.
        assert math.isnan(got[1]) or got[1] == 0.0


def test_strided_and_broadcast_inputs(device):
    base = xrt.reshape(xrt.linspace(-3, 3, 60, device=device), (6, 10))
    view = base[::2, 1::3]  # non-contiguous
    expected = ERF(host(view, xrt.float64))
    got = host(special.erf(view))
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-7)
    row = xrt.broadcast_to(xrt.asarray([0.5, -1.5], device=device), (3, 2))
    got = host(special.gelu(row))
    np.testing.assert_allclose(got, np.broadcast_to(gelu_reference(np.array([0.5, -1.5]),
                                                                   "none"), (3, 2)), rtol=2e-6)


def test_empty_and_zero_d(device):
    assert special.erf(xrt.empty((0, 3), device=device)).shape == (0, 3)
    zero_d = special.gelu(xrt.asarray(1.0, device=device))
    assert zero_d.shape == () and abs(float(zero_d) - 0.8413447460685429) < 1e-6


@pytest.mark.parametrize("dtype", ["int32", "bool", "complex64"])
def test_non_real_float_inputs_raise_type_error(dtype):
    x = xrt.ones(3, dtype=getattr(xrt, dtype))
    with pytest.raises(TypeError, match="real floating-point"):
        special.erf(x)
    with pytest.raises(TypeError, match="real floating-point"):
        special.gelu(x)


def test_bad_arguments():
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        special.gelu(xrt.ones(2), approximate="fast")
    with pytest.raises(TypeError):
        special.erf([1.0, 2.0])  # an array, not a list
