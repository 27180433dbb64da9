"""python/xpuruntime/fft.py: the Array API ``fft`` extension (``xpuruntime.fft``).

The signatures are the standard's; the work is in C++ (``cpp/src/core/fft_ops.cpp`` and
``cpp/src/cpu/fft_kernels.cpp``).

- Transforms compute in double precision: float32/complex64 inputs give complex64/float32
  results rounded once, float64/complex128 give complex128/float64.
- Note: fft, ifft, fftn, ifftn, irfft, irfftn and hfft also accept real float32/float64
  input (as NumPy does); rfft, rfftn and ihfft require it. Other dtypes raise TypeError.
- Repeated axes in ``axes`` raise ValueError (the standard leaves them unspecified).
"""

from ._core import _fft

__all__ = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """One-dimensional discrete Fourier transform along ``axis``."""
    return _fft.fft(x, n, axis, norm)


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """One-dimensional inverse discrete Fourier transform along ``axis``."""
    return _fft.ifft(x, n, axis, norm)


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """N-dimensional discrete Fourier transform over ``axes`` (default: all)."""
    return _fft.fftn(x, s, axes, norm)


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """N-dimensional inverse discrete Fourier transform over ``axes`` (default: all)."""
    return _fft.ifftn(x, s, axes, norm)


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """One-dimensional DFT of real input: the ``n//2 + 1`` non-negative frequencies."""
    return _fft.rfft(x, n, axis, norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """Inverse of ``rfft``: ``n`` (default ``2*(M-1)``) real values along ``axis``."""
    return _fft.irfft(x, n, axis, norm)


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """N-dimensional DFT of real input (the last axis in ``axes`` is halved)."""
    return _fft.rfftn(x, s, axes, norm)


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """Inverse of ``rfftn``."""
    return _fft.irfftn(x, s, axes, norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """DFT of a signal with Hermitian symmetry, given by its first half: real output."""
    return _fft.hfft(x, n, axis, norm)


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """Inverse of ``hfft``: the ``n//2 + 1`` coefficients of real input."""
    return _fft.ihfft(x, n, axis, norm)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies ``[0, 1, ..., -1] / (d*n)`` of a length-``n`` transform."""
    return _fft.fftfreq(n, d, dtype, device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The ``n//2 + 1`` non-negative sample frequencies (for ``rfft``)."""
    return _fft.rfftfreq(n, d, dtype, device)


def fftshift(x, /, *, axes=None):
    """Moves the zero-frequency term to the centre along ``axes`` (default: all)."""
    return _fft.fftshift(x, axes)


def ifftshift(x, /, *, axes=None):
    """Inverse of ``fftshift``."""
    return _fft.ifftshift(x, axes)
