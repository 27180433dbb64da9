"""tests/test_fft.py: the fft extension against numpy.fft (transforms, n/s/axes/norm,
real and Hermitian transforms, frequencies, shifts) and its errors, on every device.

The CPU computes in double, so its float32 results are held to the rounding alone
(assert_close). The tests that take the `device` fixture run one body on the CPU and on CUDA
(cuFFT, cuda/fft_kernels.cpp): every function of xrt.fft, the three norms, n shorter and
longer than the axis, axes anywhere and in any order, prime and odd lengths and length 1,
strided, transposed and negative-stride inputs, float32/complex64 and float64/complex128.
Their tolerance (check) is measured against the largest value of NumPy's double-precision
result and grows with log2(n), since cuFFT computes in the dtype's precision. CUDA alone:
a non-default stream, graph capture, threads, the plan cache, and that list_kernels/explain
name the cuFFT kernels; without a GPU, the sources of the fft family's NVRTC kernels are
compiled for sm_90 here.
"""

import inspect
import itertools
import math
import subprocess
import sys
import threading

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import ALL, CUDA_DEVICE, arrays, assert_tensor_equal, numpy_dtype, tensor, to_numpy
from cuda_helpers import busy, core, torch, torch_stream  # noqa: F401 (fixture)

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


# ------------------------------------------------------------ one axis


@pytest.mark.parametrize("func", ["fft", "ifft"])
@given(data=st.data())
def test_complex_transforms_match_numpy(func, data):
    a, axis = data.draw(lines())
    n = data.draw(st.none() | st.integers(1, 2 * a.shape[axis] + 3))
    norm = data.draw(norms)
    t = getattr(xrt.fft, func)(tensor(a), n=n, axis=axis, norm=norm)
    expected = getattr(np.fft, func)(widened(a), n=n, axis=axis, norm=norm)
    assert_close(t, expected, complex_of(a.dtype.name))


@pytest.mark.parametrize("func", ["rfft", "ihfft"])
@given(data=st.data())
def test_real_input_transforms_match_numpy(func, data):
    a, axis = data.draw(lines(REAL))
    n = data.draw(st.none() | st.integers(1, 2 * a.shape[axis] + 3))
    norm = data.draw(norms)
    t = getattr(xrt.fft, func)(tensor(a), n=n, axis=axis, norm=norm)
    expected = getattr(np.fft, func)(widened(a), n=n, axis=axis, norm=norm)
    assert_close(t, expected, complex_of(a.dtype.name))


@pytest.mark.parametrize("func", ["irfft", "hfft"])
@given(data=st.data())
def test_hermitian_input_transforms_match_numpy(func, data):
    a, axis = data.draw(lines())
    default_ok = a.shape[axis] > 1  # n = 2*(M-1) must be at least 1
    n_values = st.integers(1, 2 * a.shape[axis] + 3)
    n = data.draw(n_values | st.none() if default_ok else n_values)
    norm = data.draw(norms)
    t = getattr(xrt.fft, func)(tensor(a), n=n, axis=axis, norm=norm)
    expected = getattr(np.fft, func)(widened(a), n=n, axis=axis, norm=norm)
    assert_close(t, expected, real_of(a.dtype.name))


@pytest.mark.parametrize("n", [1, 2, 3, 53, 64, 97, 127, 128, 210, 243, 289, 293, 1000,
                               1009, 4096, 2 * 3 * 5 * 7 * 11 * 13, 65537])
def test_lengths_of_every_algorithm(n):
    """Radix 2/4/3/5, generic odd radices and Bluestein (97, 293, 1009, 65537) at once."""
    x = random_array(n, (n,), "complex128")
    assert_close(xrt.fft.fft(tensor(x)), np.fft.fft(x), "complex128")
    assert_close(xrt.fft.ifft(tensor(x)), np.fft.ifft(x), "complex128")
    r = x.real.copy()
    assert_close(xrt.fft.rfft(tensor(r)), np.fft.rfft(r), "complex128")
    h = x[: n // 2 + 1].copy()
    assert_close(xrt.fft.irfft(tensor(h), n=n), np.fft.irfft(h, n=n), "float64")
    assert_close(xrt.fft.hfft(tensor(h), n=n), np.fft.hfft(h, n=n), "float64")


@pytest.mark.parametrize("n", [1, 2, 7, 8, 97, 100, 101])
@pytest.mark.parametrize("norm", NORMS)
def test_round_trips(n, norm):
    x = random_array(1, (3, n), "complex128")
    back = xrt.fft.ifft(xrt.fft.fft(tensor(x), norm=norm), norm=norm)
    assert_close(back, x, "complex128")
    r = x.real.copy()
    back = xrt.fft.irfft(xrt.fft.rfft(tensor(r), norm=norm), n=n, norm=norm)
    assert_close(back, r, "float64")
    back = xrt.fft.ihfft(xrt.fft.hfft(tensor(x), n=n, norm=norm), n=n, norm=norm)
    herm = np.fft.ihfft(np.fft.hfft(x, n=n, norm=norm), n=n, norm=norm)
    assert_close(back, herm, "complex128")


def test_imaginary_parts_of_the_real_bins_are_ignored():
    """irfft reads only the real part of X[0] and, for even n, of X[n/2]."""
    x = np.array([1 + 5j, 2 - 1j, 3 + 2j, 4 + 7j])
    for n in (6, 7):
        assert_close(xrt.fft.irfft(tensor(x), n=n), np.fft.irfft(x, n=n), "float64")
    rf = to_numpy(xrt.fft.rfft(tensor(np.arange(6.0))))
    assert rf[0].imag == 0 and rf[-1].imag == 0


# ------------------------------------------------------------ layouts and special values


@pytest.mark.parametrize("func", ["fft", "rfft", "irfft"])
def test_strided_and_negative_stride_inputs(func):
    base = random_array(5, (7, 40), "float64")
    for view in (base[::-1, ::-2], base.T, base[2:5, 1::3], base[:, ::-1].T):
        t = getattr(xrt.fft, func)(tensor(view), axis=0)
        expected = getattr(np.fft, func)(view, axis=0)
        assert_close(t, expected, "float64" if func == "irfft" else "complex128")


def test_axis_of_a_larger_array_matches_numpy():
    """Strided lines are gathered in groups: every line must still be its own."""
    a = random_array(9, (5, 33, 17), "complex64")
    for axis in range(3):
        assert_close(xrt.fft.fft(tensor(a), axis=axis), np.fft.fft(widened(a), axis=axis),
                     "complex64")


@pytest.mark.parametrize("shape, axis", [((64, 1000), 0),   # a batch split over threads
                                         ((3 * 2**15,), 0),  # one transform's passes split
                                         ((40009,), 0)])     # Bluestein, inner passes split
def test_results_do_not_depend_on_thread_count(shape, axis):
    a = random_array(3, shape, "complex128")
    before = xrt.num_threads()
    try:
        xrt.set_num_threads(1)
        one = to_numpy(xrt.fft.fft(tensor(a), axis=axis)).copy()
        xrt.set_num_threads(4)
        four = to_numpy(xrt.fft.fft(tensor(a), axis=axis)).copy()
    finally:
        xrt.set_num_threads(before)
    np.testing.assert_array_equal(one, four)
    assert_close(xrt.fft.fft(tensor(a), axis=axis), np.fft.fft(a, axis=axis), "complex128")


def test_many_lengths_survive_plan_eviction():
    """More lengths than the plan cache holds, twice over."""
    for _ in range(2):
        for n in range(200, 250):
            x = random_array(n, (n,), "complex128")
            assert_close(xrt.fft.fft(tensor(x)), np.fft.fft(x), "complex128")


def test_nan_propagates_and_zeros_stay_zero():
    x = np.zeros(12, dtype=np.complex128)
    assert_tensor_equal(xrt.fft.fft(tensor(x)), np.zeros(12, dtype=np.complex128))
    x[3] = np.nan
    assert np.all(np.isnan(to_numpy(xrt.fft.fft(tensor(x)))))
    r = np.zeros(9)
    r[0] = np.nan
    assert np.all(np.isnan(to_numpy(xrt.fft.rfft(tensor(r)))))


def test_infinity_gives_non_finite_results():
    x = np.zeros(8)
    x[2] = np.inf
    assert not np.any(np.isfinite(to_numpy(xrt.fft.fft(tensor(x)))))


def test_a_delta_has_a_flat_spectrum():
    x = np.zeros(97, dtype=np.complex128)
    x[0] = 1
    assert_close(xrt.fft.fft(tensor(x)), np.ones(97, dtype=np.complex128), "complex128")


def test_empty_batches_and_padding_from_nothing(device):
    a = np.zeros((0, 5), dtype=np.complex128)
    assert_tensor_equal(xrt.fft.fft(place(device, a)), np.fft.fft(a))
    check(device, xrt.fft.fft(place(device, a.astype(np.complex64))), np.fft.fft(a),
          "complex64", 5)
    assert_tensor_equal(xrt.fft.rfft(place(device, np.zeros((0, 5)))),
                        np.zeros((0, 3), np.complex128))
    b = np.zeros((3, 0), dtype=np.complex128)
    assert_tensor_equal(xrt.fft.fft(place(device, b), n=4), np.zeros((3, 4), np.complex128))
    assert_tensor_equal(xrt.fft.irfft(place(device, b), n=6), np.zeros((3, 6)))
    with pytest.raises(ValueError, match="length 0"):
        xrt.fft.fft(place(device, b))


# ------------------------------------------------------------ n dimensions


@st.composite
def nd_cases(draw, dtypes=FFT_DTYPES, last_side_min=1):
    name = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9))
    a = random_array(draw(st.integers(0, 2**32 - 1)), shape, name)
    axes = draw(st.none() | st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1,
                                     max_size=a.ndim, unique_by=lambda i: i % a.ndim))
    s = None
    if axes is not None and draw(st.booleans()):
        s = [draw(st.integers(1, 12) | st.just(-1)) for _ in axes]
    return a, s, axes


@pytest.mark.parametrize("func", ["fftn", "ifftn"])
@given(case=nd_cases(), norm=norms)
def test_complex_nd_transforms_match_numpy(func, case, norm):
    a, s, axes = case
    t = getattr(xrt.fft, func)(tensor(a), s=s, axes=axes, norm=norm)
    expected = getattr(np.fft, func)(widened(a), s=s, axes=axes, norm=norm)
    assert_close(t, expected, complex_of(a.dtype.name))


@given(case=nd_cases(REAL), norm=norms)
def test_rfftn_matches_numpy(case, norm):
    a, s, axes = case
    t = xrt.fft.rfftn(tensor(a), s=s, axes=axes, norm=norm)
    assert_close(t, np.fft.rfftn(widened(a), s=s, axes=axes, norm=norm), complex_of(a.dtype.name))


@given(case=nd_cases(), norm=norms)
def test_irfftn_matches_numpy(case, norm):
    a, s, axes = case
    last = (a.ndim - 1) if axes is None else axes[-1] % a.ndim
    if s is None and a.shape[last] == 1:  # 2*(M-1) = 0 output points: an error
        with pytest.raises(ValueError):
            xrt.fft.irfftn(tensor(a), s=s, axes=axes, norm=norm)
        return
    t = xrt.fft.irfftn(tensor(a), s=s, axes=axes, norm=norm)
    assert_close(t, np.fft.irfftn(widened(a), s=s, axes=axes, norm=norm), real_of(a.dtype.name))


def test_nd_round_trip_with_odd_last_axis():
    a = random_array(2, (4, 6, 7), "float64")
    back = xrt.fft.irfftn(xrt.fft.rfftn(tensor(a)), s=(4, 6, 7), axes=(0, 1, 2))
    assert_close(back, a, "float64")


@pytest.mark.parametrize("func", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_inputs_are_left_untouched(device, func):
    """The n-d transforms overwrite their own intermediates, never the input."""
    a = random_array(6, (4, 6, 5), "float64" if func == "rfftn" else "complex128")
    t = place(device, a)
    getattr(xrt.fft, func)(t)
    getattr(xrt.fft, func)(t, s=(4, 6, 5), axes=(0, 1, 2))
    assert_tensor_equal(t, a)


def test_empty_axes():
    a = random_array(0, (3, 4), "float32")
    assert_close(xrt.fft.fftn(tensor(a), axes=()), a.astype(np.complex64), "complex64")
    with pytest.raises(ValueError, match="at least one axis"):
        xrt.fft.rfftn(tensor(a), axes=())


# ------------------------------------------------------------ frequencies


@pytest.mark.parametrize("func", ["fftfreq", "rfftfreq"])
@given(n=st.integers(1, 300), d=st.floats(0.01, 100) | st.floats(-100, -0.01),
       dtype=st.sampled_from([None, "float32", "float64"]))
def test_frequencies_match_numpy(device, func, n, d, dtype):
    kwargs = {} if dtype is None else {"dtype": getattr(xrt, dtype)}
    t = getattr(xrt.fft, func)(n, d=d, device=device, **kwargs)
    assert t.device == xrt.Device(device)
    expected = getattr(np.fft, func)(n, d=d).astype(dtype or "float64")
    assert_tensor_equal(t, expected)


def test_frequencies_defaults_and_device():
    assert_tensor_equal(xrt.fft.fftfreq(4), np.array([0.0, 0.25, -0.5, -0.25]))
    assert_tensor_equal(xrt.fft.rfftfreq(5, d=0.5, device="cpu"), np.fft.rfftfreq(5, d=0.5))
    assert xrt.fft.fftfreq(3, device=xrt.Device("cpu")).device == xrt.Device("cpu")
    # A NumPy scalar spacing is taken as its exact value (NumPy computes n*d in float32).
    d = np.float32(0.1)
    assert_tensor_equal(xrt.fft.fftfreq(6, d=d), np.fft.fftfreq(6, d=float(d)))


# ------------------------------------------------------------ shifts


@pytest.mark.parametrize("func", ["fftshift", "ifftshift"])
@given(data=st.data())
def test_shifts_match_numpy(func, dtype_name, data):
    a = data.draw(arrays(dtype_name, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0,
                                                       max_side=6)))
    axes = st.none()
    if a.ndim:
        axis = st.integers(-a.ndim, a.ndim - 1)
        axes |= axis | st.lists(axis, max_size=a.ndim, unique_by=lambda i: i % a.ndim).map(tuple)
    axes = data.draw(axes)
    t = getattr(xrt.fft, func)(tensor(a), axes=axes)
    nothing_to_shift = a.ndim == 0 or axes == ()  # NumPy's roll fails on these
    assert_tensor_equal(t, a if nothing_to_shift else getattr(np.fft, func)(a, axes=axes))


def test_shift_of_a_strided_view_and_round_trip():
    base = np.arange(60.0).reshape(6, 10)
    view = base[::-1, 1::2]
    t = xrt.fft.fftshift(tensor(view))
    assert_tensor_equal(t, np.fft.fftshift(view))
    assert_tensor_equal(xrt.fft.ifftshift(t), view)


def test_shift_returns_a_new_array():
    a = np.arange(5.0)
    t = tensor(a)
    out = xrt.fft.fftshift(t, axes=())
    assert out._data_ptr() != t._data_ptr()
    assert_tensor_equal(out, a)


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


SPEC_SIGNATURES = {
    "fft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "ifft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "ifftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "rfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "irfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "rfftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "irfftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "hfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "ihfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
    "rfftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
    "fftshift": "(x, /, *, axes=None)",
    "ifftshift": "(x, /, *, axes=None)",
}


@pytest.mark.parametrize("name", sorted(SPEC_SIGNATURES))
def test_signatures_are_the_standards(name):
    assert str(inspect.signature(getattr(xrt.fft, name))) == SPEC_SIGNATURES[name]
    assert name in xrt.fft.__all__


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


# ---- every device: one axis ----------------------------------------------------------------------

# A 3-d array puts every transformed axis first, in the middle (batch dimensions on both
# sides: cuFFT writes contiguous lines that a kernel scatters) and last.
SHAPE = (3, 10, 7)


def lengths_for(func, size):
    """n values: the default, shorter and longer than the axis."""
    return [None, max(1, size - 3), size + 4]


@pytest.mark.parametrize("func, names", [
    ("fft", ("float32", "complex64", "float64", "complex128")),
    ("ifft", ("float32", "complex64", "float64", "complex128")),
    ("rfft", REAL),
    ("ihfft", REAL),
    ("irfft", ("float32", "complex64", "float64", "complex128")),
    ("hfft", ("float32", "complex64", "float64", "complex128")),
])
def test_one_axis_transforms_match_numpy(device, func, names):
    out_real = func in ("irfft", "hfft")
    cases = itertools.product(names, (0, 1, 2, -1), NORMS)
    for seed, (name, axis, norm) in enumerate(cases):
        a = random_array(seed, SHAPE, name)
        x = place(device, a)
        for n in lengths_for(func, a.shape[axis]):
            t = getattr(xrt.fft, func)(x, n=n, axis=axis, norm=norm)
            expected = getattr(np.fft, func)(widened(a), n=n, axis=axis, norm=norm)
            size = n or a.shape[axis]
            check(device, t, expected, REAL_OF[name] if out_real else COMPLEX_OF[name], 2 * size)


LENGTHS = [1, 2, 3, 4, 5, 7, 8, 16, 17, 53, 64, 97, 127, 128, 210, 243, 289, 293, 1000, 1009,
           4096, 2 * 3 * 5 * 7 * 11 * 13, 65537]


@pytest.mark.parametrize("name", ["complex64", "complex128"])
@pytest.mark.parametrize("n", LENGTHS)
def test_lengths_primes_and_one(device, name, n):
    x = random_array(n, (2, n), name)
    d = place(device, x)
    check(device, xrt.fft.fft(d), np.fft.fft(widened(x)), name, n)
    check(device, xrt.fft.ifft(d), np.fft.ifft(widened(x)), name, n)
    r = np.ascontiguousarray(x.real)
    check(device, xrt.fft.rfft(place(device, r)), np.fft.rfft(widened(r)), name, n)
    h = np.ascontiguousarray(x[:, : n // 2 + 1])
    real = REAL_OF[name]
    check(device, xrt.fft.irfft(place(device, h), n=n), np.fft.irfft(widened(h), n=n), real, n)
    check(device, xrt.fft.hfft(place(device, h), n=n), np.fft.hfft(widened(h), n=n), real, n)
    check(device, xrt.fft.ihfft(place(device, r)), np.fft.ihfft(widened(r)), name, n)


def test_large_batches_and_long_transforms(device):
    for shape, axis, name in [((4096, 256), -1, "complex64"), ((256, 4096), 0, "complex64"),
                              ((1 << 20,), 0, "complex128"), ((3, 100003), 1, "complex64")]:
        a = random_array(len(shape), shape, name)
        check(device, xrt.fft.fft(place(device, a), axis=axis),
              np.fft.fft(widened(a), axis=axis), name, shape[axis])
    r = random_array(4, (1000, 1001), "float32")
    check(device, xrt.fft.rfft(place(device, r)), np.fft.rfft(widened(r)), "complex64", 1001)


def test_hermitian_transforms_ignore_the_imaginary_parts_of_the_real_bins(device):
    """irfft/hfft read only the real part of X[0] and, for even n, of X[n/2] (as NumPy)."""
    x = np.array([[1 + 5j, 2 - 1j, 3 + 2j, 4 + 7j]] * 2)
    for func, n in itertools.product(("irfft", "hfft"), (6, 7)):
        check(device, getattr(xrt.fft, func)(place(device, x), n=n),
              getattr(np.fft, func)(x, n=n), "float64", n)


@pytest.mark.parametrize("func", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("name", REAL)
def test_strided_transposed_and_negative_stride_inputs(device, func, name):
    base_name = name if func in ("rfft", "ihfft") else COMPLEX_OF[name]
    base = random_array(5, (9, 40), base_name)
    d = place(device, base)
    views = [
        (base[::-1, ::-2], d[::-1, ::-2]),
        (base.T, xrt.permute_dims(d, (1, 0))),
        (base[2:7, 1::3], d[2:7, 1::3]),
        (base[:, ::-1].T, xrt.permute_dims(d[:, ::-1], (1, 0))),
        (base[1:, 1:], d[1:, 1:]),  # an odd offset: real data misaligned for R2C
    ]
    out = REAL_OF[name] if func in ("irfft", "hfft") else COMPLEX_OF[name]
    for (view, dview), axis in itertools.product(views, (0, 1)):
        t = getattr(xrt.fft, func)(dview, axis=axis)
        expected = getattr(np.fft, func)(widened(view), axis=axis)
        check(device, t, expected, out, view.shape[axis] * 2)


@pytest.mark.parametrize("func", ["irfft", "hfft", "irfftn", "fftn", "ifftn"])
def test_c2r_inputs_and_their_views_are_left_untouched(device, func):
    """cuFFT's C2R overwrites its input: the kernels hand it a copy."""
    a = random_array(6, (4, 6, 5), "complex64")
    x = place(device, a)
    getattr(xrt.fft, func)(x)
    getattr(xrt.fft, func)(x[:, ::2])
    np.testing.assert_array_equal(host(x), a)


def test_nan_and_infinity_propagate(device):
    x = np.zeros(12, dtype=np.complex64)
    x[3] = np.nan
    assert np.all(np.isnan(host(xrt.fft.fft(place(device, x)))))
    r = np.zeros(8)
    r[2] = np.inf
    assert not np.any(np.isfinite(host(xrt.fft.rfft(place(device, r)))))


# ---- every device: n dimensions ------------------------------------------------------------------

ND_SHAPE = (4, 6, 5)
ND_AXES = [None, (0,), (2, 0), (1, 2), (-1, -2), (0, 1, 2), (2, 0, 1), (1, 0, 2)]


def sides(a, axes, choice):
    """s: None, shorter or longer than the axes."""
    if choice == 0 or axes is None:
        return None
    return [max(1, a.shape[ax] - 2) if choice == 1 else a.shape[ax] + 3 for ax in axes]


@pytest.mark.parametrize("func", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("name", ["float32", "complex64", "float64", "complex128"])
def test_nd_transforms_match_numpy(device, func, name):
    if func == "rfftn" and name.startswith("complex"):
        return
    a = random_array(7, ND_SHAPE, name)
    x = place(device, a)
    out = REAL_OF[name] if func == "irfftn" else COMPLEX_OF[name]
    for axes, choice, norm in itertools.product(ND_AXES, (0, 1, 2), NORMS):
        s = sides(a, axes, choice)
        t = getattr(xrt.fft, func)(x, s=s, axes=axes, norm=norm)
        expected = getattr(np.fft, func)(widened(a), s=s, axes=axes, norm=norm)
        check(device, t, expected, out, 2 * a.size)


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_2d_transforms_as_fft2(device, name):
    """fft2/ifft2/rfft2/irfft2 are the n-d transforms over the last two axes."""
    a = random_array(8, (3, 32, 48), name)
    x = place(device, a)
    for norm in NORMS:
        check(device, xrt.fft.fftn(x, axes=(-2, -1), norm=norm),
              np.fft.fft2(widened(a), norm=norm), name, 2 * 32 * 48)
        check(device, xrt.fft.ifftn(x, axes=(-2, -1), norm=norm),
              np.fft.ifft2(widened(a), norm=norm), name, 2 * 32 * 48)
        r = np.ascontiguousarray(a.real)
        check(device, xrt.fft.rfftn(place(device, r), axes=(-2, -1), norm=norm),
              np.fft.rfft2(widened(r), norm=norm), name, 2 * 32 * 48)
        check(device, xrt.fft.irfftn(x, axes=(-2, -1), norm=norm),
              np.fft.irfft2(widened(a), norm=norm), REAL_OF[name], 2 * 32 * 94)


def test_nd_round_trip_of_a_large_square(device):
    a = random_array(9, (512, 512), "float32")
    back = xrt.fft.irfftn(xrt.fft.rfftn(place(device, a)), s=(512, 512), axes=(0, 1))
    check(device, back, a.astype(np.float64), "float32", 512 * 512)


# ---- every device: frequencies and shifts --------------------------------------------------------

@pytest.mark.parametrize("func", ["fftfreq", "rfftfreq"])
def test_frequencies_are_the_cpu_values(device, func):
    for n, d, dtype in itertools.product((1, 2, 7, 8, 1000, 99999), (1.0, 0.1, -2.5),
                                         (None, xrt.float32, xrt.float64)):
        kwargs = {} if dtype is None else {"dtype": dtype}
        t = getattr(xrt.fft, func)(n, d=d, device=device, **kwargs)
        want = getattr(xrt.fft, func)(n, d=d, **kwargs)
        assert t.device == xrt.Device(device) and t.dtype == want.dtype
        np.testing.assert_array_equal(host(t), to_numpy(want))
        np.testing.assert_allclose(host(t), getattr(np.fft, func)(n, d=d), rtol=1e-6)


@pytest.mark.parametrize("func", ["fftshift", "ifftshift"])
def test_shifts_of_views_match_numpy(device, func):
    a = random_array(10, (5, 6, 7), "complex64")
    x = place(device, a)
    for axes in (None, 0, (1,), (2, 0), (-1, -2, -3)):
        np.testing.assert_array_equal(host(getattr(xrt.fft, func)(x, axes=axes)),
                                      getattr(np.fft, func)(a, axes=axes))
    view = a[::-1, 1::2]
    np.testing.assert_array_equal(host(getattr(xrt.fft, func)(x[::-1, 1::2])),
                                  getattr(np.fft, func)(view))


# CUDA-only tests run on the first CUDA device.
DEVICE = CUDA_DEVICE


# ---- CUDA: registration and sources (no GPU needed) ----------------------------------------------

@pytest.mark.parametrize("op", ["fft_c2c", "fft_r2c", "fft_c2r"])
def test_transforms_are_registered_as_cufft(op):
    assert uses_cufft(op)


@pytest.mark.parametrize("op", ["fftfreq", "rfftfreq"])
def test_frequencies_are_native(op):
    assert any(k["device"] == "cuda" and k["name"] == "nvrtc" for k in xrt.list_kernels(op))


def test_fft_samples_compile():
    if not xrt.cuda.status()["nvrtc"]["found"]:
        pytest.skip("NVRTC is not installed (pip install nvidia-cuda-nvrtc)")
    result = core._cuda._compile_all(arch="sm_90", family="fft")
    assert result["failures"] == []
    assert result["compiled"] >= 20


def test_cufft_version_or_how_to_install_it():
    try:
        version = xrt.cuda.cufft_version()
    except xrt.CudaError as e:
        assert "pip install nvidia-cufft" in str(e)
    else:
        assert version >= 11000


# ---- CUDA: streams, graphs, threads, dispatch ----------------------------------------------------

@pytest.mark.cuda
def test_transforms_run_on_the_current_stream_without_waiting(torch):  # noqa: F811
    """The inputs are written on a busy stream by torch; transforms queued on that stream
    must read them after the write, and must return before it has happened."""
    a = random_array(11, (64, 1000), "complex64")
    r = np.ascontiguousarray(a[:, :999].real)
    x, xr = place(DEVICE, np.zeros_like(a)), place(DEVICE, np.zeros_like(r))
    s = xrt.cuda.Stream()
    with s:  # plans and kernels made here, so that the calls below only enqueue
        xrt.fft.ifft(x, axis=0), xrt.fft.irfft(x), xrt.fft.rfft(xr)
    sources = torch.from_numpy(a).cuda(), torch.from_numpy(r).cuda()
    torch.cuda.synchronize()
    s.synchronize()
    busy(torch, s)
    with torch.cuda.stream(torch_stream(torch, s)):
        torch.from_dlpack(x).copy_(sources[0])
        torch.from_dlpack(xr).copy_(sources[1])
    with s:
        y = xrt.fft.ifft(x, axis=0)
        z = xrt.fft.irfft(x)
        w = xrt.fft.rfft(xr)
        assert not s.query()  # nothing waited for the sleep
        check(DEVICE, y, np.fft.ifft(widened(a), axis=0), "complex64", 64)
        check(DEVICE, z, np.fft.irfft(widened(a)), "float32", 2000)
        check(DEVICE, w, np.fft.rfft(widened(r)), "complex64", 999)


@pytest.mark.cuda
def test_graph_capture_and_replay(torch):  # noqa: F811
    a = random_array(12, (16, 256), "complex64")
    x = place(DEVICE, a)
    xrt.fft.fft(x), xrt.fft.irfft(x)  # plans are made before the capture
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        y = xrt.fft.fft(x)
        z = xrt.fft.irfft(x, norm="ortho")
    b = random_array(13, (16, 256), "complex64")
    torch.from_dlpack(x).copy_(torch.from_numpy(b).cuda())
    torch.cuda.synchronize()
    g.replay()
    check(DEVICE, y, np.fft.fft(widened(b)), "complex64", 256)
    check(DEVICE, z, np.fft.irfft(widened(b), norm="ortho"), "float32", 512)


@pytest.mark.cuda
def test_threads_with_their_own_streams():
    errors = []

    def work(seed):
        try:
            with xrt.cuda.Stream():
                for k in range(20):
                    a = random_array(seed * 100 + k, (8, 100 + seed), "complex64")
                    check(DEVICE, xrt.fft.fft(place(DEVICE, a)), np.fft.fft(widened(a)),
                          "complex64", 100)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.cuda
def test_plan_cache_is_bounded_and_reused():
    xrt.cuda.clear_cufft_plan_cache()
    try:
        xrt.cuda.set_cufft_plan_cache_capacity(3)
        for n in range(100, 108):
            a = random_array(n, (n,), "complex64")
            check(DEVICE, xrt.fft.fft(place(DEVICE, a)), np.fft.fft(widened(a)), "complex64", n)
        info = xrt.cuda.cufft_plan_cache_info(DEVICE)
        assert info["size"] == 3 and info["capacity"] == 3 and info["evictions"] >= 5
        hits = info["hits"]
        a = random_array(0, (107,), "complex64")
        check(DEVICE, xrt.fft.fft(place(DEVICE, a)), np.fft.fft(widened(a)), "complex64", 107)
        assert xrt.cuda.cufft_plan_cache_info(DEVICE)["hits"] == hits + 1
        xrt.cuda.set_cufft_plan_cache_capacity(0)  # no caching: plans die after each call
        check(DEVICE, xrt.fft.fft(place(DEVICE, a)), np.fft.fft(widened(a)), "complex64", 107)
        assert xrt.cuda.cufft_plan_cache_info(DEVICE)["size"] == 0
    finally:
        xrt.cuda.set_cufft_plan_cache_capacity(64)
    with pytest.raises(ValueError):
        xrt.cuda.set_cufft_plan_cache_capacity(-1)


@pytest.mark.cuda
def test_explain_names_the_cufft_kernels():
    a = random_array(14, (4, 8), "complex64")
    x, xr = place(DEVICE, a), place(DEVICE, a.real)
    with xrt.explain() as log:
        xrt.fft.fftn(x)
        xrt.fft.rfft(xr)
        xrt.fft.irfft(x)
        xrt.fft.fftfreq(8, device=DEVICE)
        xrt.fft.rfftfreq(8, device=DEVICE)
    assert log.kernels("fft_c2c") == ["cufft", "cufft"]
    assert log.kernels("fft_r2c") == ["cufft"]
    assert log.kernels("fft_c2r") == ["cufft"]
    assert log.kernels("fftfreq") == ["nvrtc"]
    assert log.kernels("rfftfreq") == ["nvrtc"]


MISSING_CUFFT = """
import numpy as np
import xpuruntime as xrt
xrt._core._cuda.set_library_finder(None)  # cuFFT is opened on first use: hide the wheels
x = xrt.asarray(np.ones(8, np.complex64), device="cuda:0")
try:
    xrt.fft.fft(x)
except xrt.CudaError as e:
    print("CudaError:", e)
else:
    print("loaded")
"""


@pytest.mark.cuda
def test_missing_cufft_is_a_cuda_error():
    run = subprocess.run([sys.executable, "-c", MISSING_CUFFT], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    if run.stdout.startswith("loaded"):
        pytest.skip("cuFFT is on the system's library path too")
    assert "CudaError" in run.stdout and "pip install nvidia-cufft" in run.stdout
