"""python/xpuruntime/special.py: functions outside the Array API standard that models need,
each one kernel on CPU and CUDA (like ``torch.special`` and ``scipy.special``).

``erf`` and ``gelu`` serve the native inference engine (ONNX ``Erf``, ``Gelu``) and the
PyTorch adapter; they take real floating-point arrays (float16 and bfloat16 compute in
float32) and raise ``TypeError`` for anything else, as the standard's functions do.
"""

from . import _core

__all__ = ["erf", "gelu"]


def erf(x, /):
    """The error function, 2/sqrt(pi) times the integral of exp(-t^2) from 0 to x."""
    return _core.erf(x)


def gelu(x, /, *, approximate="none"):
    """GELU, x * Phi(x) with Phi the standard normal CDF (``approximate="none"``), or its
    tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (``"tanh"``), as in
    ONNX Gelu and ``torch.nn.functional.gelu``."""
    if approximate == "none":
        return _core.gelu(x)
    if approximate == "tanh":
        return _core.gelu_tanh(x)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
