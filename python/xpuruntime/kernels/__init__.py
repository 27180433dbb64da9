"""python/xpuruntime/kernels/__init__.py: user kernels with CuPy's classes, on xpuruntime's
NVRTC JIT and its caches (also at the top level: ``xrt.RawKernel`` ...).

- ``_raw.py``: RawKernel and RawModule (a user's CUDA C++ source).
- ``_elementwise.py``: ElementwiseKernel (an operation per element, with broadcasting).
- ``_reduction.py``: ReductionKernel (map, deterministic reduce, post-map).
- ``_params.py``: CuPy's parameter syntax and type inference; ``_layout.py``: what the
  generated kernels share (broadcasting, dimension merging, device-side helpers).
"""

from ._elementwise import ElementwiseKernel
from ._raw import RawKernel, RawModule
from ._reduction import ReductionKernel

__all__ = ["ElementwiseKernel", "RawKernel", "RawModule", "ReductionKernel"]
