"""python/xpuruntime/nn.py: the layers models are made of, as single ops (like
``torch.nn.functional``): ``linear`` with a fused bias and activation, and the row ops
``softmax``, ``log_softmax``, ``layer_norm`` and ``rms_norm`` (one kernel each where the
composed forms take five to nine; Note [Row ops] in ``cpp/src/core/norm_ops.cpp``), and
``scaled_dot_product_attention`` (cuDNN's fused attention on CUDA; ``_attention.py``).

On CUDA ``linear`` is one cuBLASLt product whose epilogue adds the bias and applies ReLU or
tanh-GELU (the erf GELU adds one elementwise kernel), chosen under the op name ``linear`` so a
``KernelPolicy`` can pin ``"cublaslt"`` or ``"composite"``; on CPU it is the matmul kernel
with the bias and activation applied in place. See Note [Fused linear] in
``cpp/src/core/linear_ops.cpp``. A float32 weight on the CPU can be rearranged once into a
``PackedLinearWeight`` for the CPU's register-tiled kernel (Note [Packed linear weights]).
"""

import operator

from . import _attention, _core
from ._attention import scaled_dot_product_attention
from .special import erf, gelu

__all__ = ["PackedLinearWeight", "add_layer_norm", "add_rms_norm", "erf", "gelu",
           "layer_norm", "linear", "log_softmax", "relu", "rms_norm",
           "scaled_dot_product_attention", "softmax"]

_attention.register_kernels()

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
    if type(weight) is PackedLinearWeight:
        return _core._linear_packed(x, weight._packed, weight.out_features, bias, code)
    return _core._linear(x, weight, bias, code)


class PackedLinearWeight:
    """A float32 weight (out_features, in_features) on the CPU, rearranged once into panels
    of 32 output features for the CPU's register-tiled linear kernel (AVX-512 where the CPU
    has it): pass it to ``linear`` as the weight. Worth it when the weight is used many
    times with few input rows, as in serving (the native engine packs its constant
    weights). A copy: later writes to the original weight do not reach it.
    TypeError for other dtypes, ValueError off the CPU or for a non-matrix."""

    __slots__ = ("_packed", "in_features", "out_features")

    def __init__(self, weight):
        if not isinstance(weight, _core.Tensor):
            raise TypeError(f"PackedLinearWeight: weight must be a Tensor, got "
                            f"{type(weight).__name__}")
        self._packed = _core._pack_linear_weight(weight)
        self.out_features, self.in_features = weight.shape

    @property
    def shape(self):
        """(out_features, in_features), the weight's shape."""
        return (self.out_features, self.in_features)

    @property
    def dtype(self):
        return _core.float32

    @property
    def device(self):
        return self._packed.device

    def __repr__(self):
        return (f"<xpuruntime.nn.PackedLinearWeight out_features={self.out_features} "
                f"in_features={self.in_features}>")


def relu(x, /):
    """max(x, 0) elementwise."""
    return _core.maximum(x, 0)


def _axis(axis, name):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, got {type(axis).__name__}") from None
    if not -2**63 <= axis < 2**63:
        raise IndexError(f"{name}: axis {axis} is out of bounds")
    return axis


def _eps(eps, name):
    try:
        return float(eps)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: eps must be a real number, got {eps!r}") from None


def softmax(x, /, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along ``axis``, in one kernel; float16 and bfloat16
    compute in float32. A slice holding NaN, or all -inf, gives NaN."""
    return _core._softmax(x, _axis(axis, "softmax"), False)


def log_softmax(x, /, axis=-1):
    """x - max - log(sum(exp(x - max))) along ``axis``, in one kernel."""
    return _core._softmax(x, _axis(axis, "log_softmax"), True)


def _normalized_ndim(x, normalized_shape, name):
    if isinstance(normalized_shape, int) or hasattr(normalized_shape, "__index__"):
        normalized_shape = (operator.index(normalized_shape),)
    try:
        shape = tuple(operator.index(d) for d in normalized_shape)
    except TypeError:
        raise TypeError(f"{name}: normalized_shape must be an int or a sequence of ints, got "
                        f"{normalized_shape!r}") from None
    if not hasattr(x, "shape"):
        return len(shape)  # not an array: the op says so
    x_shape = tuple(x.shape)
    if not shape or len(shape) > len(x_shape) or x_shape[len(x_shape) - len(shape):] != shape:
        raise ValueError(f"{name}: normalized_shape {shape} must be the trailing dimensions "
                         f"of x (shape {x_shape})")
    return len(shape)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing ``normalized_shape``
    axes (the biased variance, as ``torch.nn.functional.layer_norm`` and ONNX's
    LayerNormalization); weight and bias optional, of that shape."""
    n = _normalized_ndim(x, normalized_shape, "layer_norm")
    return _core._layer_norm(x, n, weight, bias, _eps(eps, "layer_norm"))


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape`` axes
    (``torch.nn.functional.rms_norm``, ONNX's RMSNormalization); eps None is the machine
    epsilon of x's dtype, as in PyTorch."""
    n = _normalized_ndim(x, normalized_shape, "rms_norm")
    if eps is None:
        from ._array_api._data_type_functions import finfo
        try:
            eps = finfo(x.dtype).eps
        except (AttributeError, TypeError, ValueError):
            eps = 1e-6  # not a float array: the op says what is wrong
    return _core._rms_norm(x, n, weight, _eps(eps, "rms_norm"))


def add_layer_norm(x, residual, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``(layer_norm(x + residual), x + residual)`` in one kernel: a transformer block's
    residual add and the norm after it (the sum rounded to the dtype before the norm reads
    it, as the two ops would); x and residual of one shape."""
    n = _normalized_ndim(x, normalized_shape, "layer_norm")
    return _core._add_norm(x, residual, n, weight, bias, _eps(eps, "layer_norm"), False)


def add_rms_norm(x, residual, normalized_shape, weight=None, eps=None):
    """``(rms_norm(x + residual), x + residual)`` in one kernel; eps None is the machine
    epsilon of x's dtype."""
    n = _normalized_ndim(x, normalized_shape, "rms_norm")
    if eps is None:
        from ._array_api._data_type_functions import finfo
        try:
            eps = finfo(x.dtype).eps
        except (AttributeError, TypeError, ValueError):
            eps = 1e-6
    return _core._add_norm(x, residual, n, weight, None, _eps(eps, "rms_norm"), True)
