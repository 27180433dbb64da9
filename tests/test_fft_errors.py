"""tests/test_fft_errors.py: the fft extension's errors (dtypes, arguments), its signatures
against the standard's, and float32 results rounded once from the double result.
"""

import inspect

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, numpy_dtype, tensor, to_numpy
from fft_helpers import FFT_DTYPES, random_array, widened


# ------------------------------------------------------------ errors and signatures


BAD_DTYPES = [n for n in ALL if n not in FFT_DTYPES]


@pytest.mark.parametrize("name", BAD_DTYPES)
@pytest.mark.parametrize("func", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                  "ifftn", "rfftn", "irfftn"])
def test_non_fft_dtypes_raise_type_error(device, func, name):
    t = xrt.zeros((4,), dtype=getattr(xrt, name), device=device)
    with pytest.raises(TypeError, match=name):
        getattr(xrt.fft, func)(t)


@pytest.mark.parametrize("func", ["rfft", "ihfft", "rfftn"])
@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_real_only_transforms_reject_complex(device, func, name):
    with pytest.raises(TypeError, match=name):
        getattr(xrt.fft, func)(xrt.zeros((4,), dtype=getattr(xrt, name), device=device))


@pytest.mark.parametrize("name", ["int64", "float16", "bfloat16", "complex128", "bool"])
def test_frequencies_need_a_real_fft_dtype(name):
    with pytest.raises(TypeError, match=name):
        xrt.fft.fftfreq(4, dtype=getattr(xrt, name))


def test_argument_errors(device):
    """Checked in the core before any backend runs: the same errors on every device."""
    x = xrt.zeros((4, 6), dtype=xrt.complex128, device=device)
    with pytest.raises(ValueError, match="norm"):
        xrt.fft.fft(x, norm="none")
    with pytest.raises(ValueError, match="norm"):
        xrt.fft.fftn(x, norm=None)
    for bad_n in (0, -1):
        with pytest.raises(ValueError, match="n must be at least 1"):
            xrt.fft.fft(x, n=bad_n)
        with pytest.raises(ValueError, match="n must be at least 1"):
            xrt.fft.irfft(x, n=bad_n)
    with pytest.raises(ValueError, match="points"):
        xrt.fft.irfft(xrt.zeros((1,), dtype=xrt.complex128, device=device))
    with pytest.raises(IndexError, match="out of bounds"):
        xrt.fft.fft(x, axis=2)
    with pytest.raises(IndexError, match="out of bounds"):
        xrt.fft.fft(x, axis=-3)
    with pytest.raises(IndexError):
        xrt.fft.fft(xrt.zeros((), dtype=xrt.complex128, device=device))
    with pytest.raises(ValueError, match="requires axes"):
        xrt.fft.fftn(x, s=(2, 2))
    with pytest.raises(ValueError, match="repeated axis"):
        xrt.fft.fftn(x, axes=(0, -2))
    with pytest.raises(ValueError, match="repeated axis"):
        xrt.fft.fftshift(x, axes=(1, 1))
    with pytest.raises(ValueError, match="entries"):
        xrt.fft.fftn(x, s=(2,), axes=(0, 1))
    with pytest.raises(ValueError, match="at least 1"):
        xrt.fft.ifftn(x, s=(0, 2), axes=(0, 1))
    with pytest.raises(TypeError, match="integer"):
        xrt.fft.fft(x, n=2.5)
    with pytest.raises(TypeError, match="Tensor"):
        xrt.fft.fft(np.zeros(4))
    with pytest.raises(ValueError, match="n must be at least 1"):
        xrt.fft.fftfreq(0)
    with pytest.raises(ValueError, match="must not be zero"):
        xrt.fft.rfftfreq(4, d=0.0)
    for bad_d in (True, 1j, "1"):
        with pytest.raises(TypeError, match="d must be a real number"):
            xrt.fft.fftfreq(4, d=bad_d)


# The standard's signatures, with its keyword-only parameters positional where NumPy's fft
# takes them by position (Note [NumPy's positional arguments] in bind_reductions.cpp).
SPEC_SIGNATURES = {
    **{name: "(x, /, n=None, axis=-1, norm='backward')"
       for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{name: "(x, /, s=None, axes=None, norm='backward')"
       for name in ("fftn", "ifftn", "rfftn", "irfftn")},
    "fftfreq": "(n, /, d=1.0, *, dtype=None, device=None)",
    "rfftfreq": "(n, /, d=1.0, *, dtype=None, device=None)",
    "fftshift": "(x, /, axes=None)",
    "ifftshift": "(x, /, axes=None)",
}


@pytest.mark.parametrize("name", sorted(SPEC_SIGNATURES))
def test_signatures_are_the_standards(name):
    assert str(inspect.signature(getattr(xrt.fft, name))) == SPEC_SIGNATURES[name]
    assert name in xrt.fft.__all__


def test_numpys_positional_arguments_mean_what_they_mean_in_numpy():
    x = xrt.asarray(np.arange(12.0).reshape(3, 4))
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(np.asarray(xrt.fft.fft(x, 6, 0, "ortho")),
                               np.fft.fft(a, 6, 0, "ortho"))
    np.testing.assert_allclose(np.asarray(xrt.fft.rfftn(x, (2, 4), (0, 1))),
                               np.fft.rfftn(a, (2, 4), (0, 1)))
    np.testing.assert_allclose(np.asarray(xrt.fft.fftfreq(5, 0.5)), np.fft.fftfreq(5, 0.5))
    np.testing.assert_allclose(np.asarray(xrt.fft.fftshift(x, 1)), np.fft.fftshift(a, 1))
    with pytest.raises(TypeError):
        xrt.fft.fftfreq(5, 0.5, xrt.float32)  # dtype stays keyword-only


@pytest.mark.parametrize("name", sorted(SPEC_SIGNATURES))
def test_positional_only_parameters_refuse_keywords(name):
    first = "n" if name.endswith("freq") else "x"
    arg = 4 if first == "n" else xrt.zeros((4,), dtype=xrt.float64)
    with pytest.raises(TypeError, match="positional-only"):
        getattr(xrt.fft, name)(**{first: arg})


def test_float32_results_are_rounded_once():
    """Computed in double: the complex64 result is the rounded double result."""
    a = random_array(4, (1000,), "complex64")
    t = to_numpy(xrt.fft.fft(tensor(a)))
    exact = np.fft.fft(widened(a)).astype(np.complex64)
    assert np.max(np.abs(t - exact)) <= 2 * np.finfo(np.float32).eps * np.max(np.abs(exact))
    assert numpy_dtype("complex64") == t.dtype
