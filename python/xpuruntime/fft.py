"""python/xpuruntime/fft.py: the Array API ``fft`` extension (``xpuruntime.fft``).

The functions are native (``cpp/bindings/bind_fft.cpp`` over ``cpp/src/core/fft_ops.cpp``
and ``cpp/src/cpu/fft_kernels.cpp``), wrapped with the standard's signatures.

- On CPU, transforms compute in double precision: float32/complex64 inputs give
  complex64/float32 results rounded once, float64/complex128 give complex128/float64. On
  CUDA they run through cuFFT (``cpp/src/cuda/fft_kernels.cpp``) in the dtype's precision,
  as PyTorch and CuPy do.
- Note: fft, ifft, fftn, ifftn, irfft, irfftn and hfft also accept real float32/float64
  input (as NumPy does); rfft, rfftn and ihfft require it. Other dtypes raise TypeError.
- Repeated axes in ``axes`` raise ValueError (the standard leaves them unspecified).
"""

from . import _core
from ._array_api import _signatures

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

for _name in __all__:
    globals()[_name] = getattr(_core._fft, _name)
del _name

_signatures.install_namespace(globals(), _signatures.FFT, __name__)
