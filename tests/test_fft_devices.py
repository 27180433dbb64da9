"""tests/test_fft_devices.py: one body on the CPU and on CUDA (cuFFT, cuda/fft_kernels.cpp)
against numpy.fft: every function of xrt.fft, the three norms, n shorter and longer than the
axis, axes anywhere and in any order, prime and odd lengths and length 1, strided,
transposed and negative-stride inputs, float32/complex64 and float64/complex128.
Their tolerance (check) is measured against the largest value of NumPy's double-precision
result and grows with log2(n), since cuFFT computes in the dtype's precision.
"""

import itertools

import numpy as np
import pytest

import xpuruntime as xrt
from common import to_numpy
from fft_helpers import REAL, NORMS, COMPLEX_OF, REAL_OF, random_array, widened, place, host, check


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
