"""python/xpuruntime/adapters/jax.py: zero-copy exchange with JAX arrays through DLPack, on
the CPU and on CUDA.

``to_jax(t)`` gives a ``jax.Array`` over the tensor's memory; ``from_jax(a)`` a Tensor over
the array's. Note: JAX arrays are immutable, so an imported one is read-only only if JAX says
so; writing to it behind JAX's back is the caller's responsibility, as with any DLPack view.
"""

from .. import _core


def to_jax(t):
    """The tensor as a jax.Array, without a copy (JAX reads our stream handshake)."""
    import jax.dlpack

    return jax.dlpack.from_dlpack(t)


def from_jax(a):
    """The jax.Array as a Tensor, without a copy."""
    return _core.from_dlpack(a)
