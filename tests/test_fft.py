"""tests/test_fft.py: the fft extension against numpy.fft: one-axis complex, real and
Hermitian transforms (n/norm, lengths of every algorithm, round trips), layouts and special
values, n-dimensional transforms (s/axes), frequencies and shifts.

The CPU computes in double, so its float32 results are held to the rounding alone
(assert_close). The tests that take the `device` fixture run on the CPU and on CUDA. Errors
and signatures: test_fft_errors.py; every device by layout: test_fft_devices.py; CUDA
alone: test_fft_cuda.py.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import arrays, assert_tensor_equal, tensor, to_numpy
from fft_helpers import (FFT_DTYPES, REAL, NORMS, norms, random_array, complex_of, real_of, widened,
                         place, check, assert_close, lines)


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
