"""python/xpuruntime/nn.py: the layers models are made of, as single ops (like
``torch.nn.functional``): ``linear`` with a fused bias and activation.

On CUDA ``linear`` is one cuBLASLt product whose epilogue adds the bias and applies ReLU or
tanh-GELU (the erf GELU adds one elementwise kernel), chosen under the op name ``linear`` so a
``KernelPolicy`` can pin ``"cublaslt"`` or ``"composite"``; on CPU it is the matmul kernel
with the bias and activation applied in place. See Note [Fused linear] in
``cpp/src/core/linear_ops.cpp``.
"""

from . import _core
from .special import erf, gelu

__all__ = ["erf", "gelu", "linear", "relu"]

_ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3}


def linear(x, weight, bias=None, *, activation=None):
    """``activation(x @ weight.T + bias)``: x (..., in_features), weight (out_features,
    in_features), bias (out_features,) or None; activation None, "relu", "gelu" (erf form)
    or "gelu_tanh". Returns (..., out_features) in the promoted real floating dtype."""
    try:
        code = _ACTIVATIONS[activation]
    except (KeyError, TypeError):
        raise ValueError(f"linear: activation must be one of None, 'relu', 'gelu', "
                         f"'gelu_tanh', got {activation!r}") from None
    return _core._linear(x, weight, bias, code)


def relu(x, /):
    """max(x, 0) elementwise."""
    return _core.maximum(x, 0)
