"""python/xpuruntime/adapters/__init__.py: bridges to other array libraries, each optional
and imported only when used (``import xpuruntime`` imports no framework).

- ``cupy``: CuPy's memory from xpuruntime's caching allocator, streams shared both ways.
- ``jax``: zero-copy exchange with JAX arrays (DLPack), on CPU and CUDA.
- ``pytorch``: kernel policies, fused attention and norms, autocast, graph capture and the
  allocator for PyTorch training (also ``xpuruntime.pytorch``).
- ``_cuda_array_interface``: ``__cuda_array_interface__`` (version 3, with the stream) on
  CUDA tensors, and its import in ``xrt.asarray`` (Numba, cuDF).
"""

import importlib

__all__ = ["cupy", "jax", "pytorch"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
