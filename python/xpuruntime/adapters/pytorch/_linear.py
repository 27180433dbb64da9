"""python/xpuruntime/adapters/pytorch/_linear.py: ``fused_linear``, a dense layer with its bias
and activation fused into the product (one cublasLtMatmul epilogue on CUDA, Note [Fused
linear] in cpp/src/core/linear_ops.cpp), as a torch custom op with autograd and a fake
kernel for torch.compile.

The forward runs xpuruntime's ``linear`` op on torch's current stream, so a KernelPolicy
pins its kernel (``linear="cublaslt"`` or ``"composite"``) and ``explain()`` records it.
The backward is torch's: the activation's derivative at the pre-activation (recomputed with
one product for GELU, read from the output for ReLU), then the three gradient products.
"""

import math
from typing import Optional

import torch
import torch.nn.functional as F

from ... import _core
from ...nn import _ACTIVATIONS as ACTIVATIONS
from . import _kernels
from ._choose import _autocast, _xrt

_TORCH_GELU = {2: "none", 3: "tanh"}


@torch.library.custom_op("xpu::fused_linear", mutates_args=(), device_types=("cpu", "cuda"))
def fused_linear_op(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                    activation: int) -> torch.Tensor:
    def run():
        return _core._linear(_xrt(x), _xrt(weight), None if bias is None else _xrt(bias),
                             activation)
    if x.is_cuda:
        with _kernels.torch_stream(torch, x.device.index):
            return torch.from_dlpack(run())
    return torch.from_dlpack(run())


@fused_linear_op.register_fake
def _(x, weight, bias, activation):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


def _setup(ctx, inputs, output):
    x, weight, bias, activation = inputs
    ctx.activation = activation
    ctx.has_bias = bias is not None
    ctx.save_for_backward(x, weight, bias, output)


def _activation_grad(grad, x, weight, bias, out, activation):
    """d loss / d pre-activation, in float32 for 16-bit inputs."""
    if activation == 0:
        return grad
    if activation == 1:
        return grad * (out > 0)
    pre = F.linear(x, weight, bias)
    if pre.dtype in (torch.float16, torch.bfloat16):
        pre = pre.float()
    if activation == 2:  # x Phi(x): Phi(x) + x phi(x)
        d = 0.5 * (1 + torch.erf(pre * (1 / math.sqrt(2)))) + \
            pre * torch.exp(-0.5 * pre * pre) * (1 / math.sqrt(2 * math.pi))
    else:  # 0.5 x (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3)
        c = math.sqrt(2 / math.pi)
        t = torch.tanh(c * (pre + 0.044715 * pre ** 3))
        d = 0.5 * (1 + t) + 0.5 * pre * (1 - t * t) * c * (1 + 3 * 0.044715 * pre * pre)
    return (grad.to(d.dtype) * d).to(grad.dtype)


def _backward(ctx, grad):
    x, weight, bias, out = ctx.saved_tensors
    g = _activation_grad(grad, x, weight, bias, out, ctx.activation)
    g2 = g.reshape(-1, g.shape[-1])
    grad_x = grad_w = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_x = g @ weight
    if ctx.needs_input_grad[1]:
        grad_w = g2.t() @ x.reshape(-1, x.shape[-1])
    if ctx.has_bias and ctx.needs_input_grad[2]:
        grad_b = g2.sum(0)
    return grad_x, grad_w, grad_b, None


fused_linear_op.register_autograd(_backward, setup_context=_setup)


def _torch_linear(x, weight, bias, code):
    y = F.linear(x, weight, bias)
    if code == 1:
        return F.relu(y)
    if code in _TORCH_GELU:
        return F.gelu(y, approximate=_TORCH_GELU[code])
    return y


def fused_linear(x, weight, bias=None, activation=None):
    """``activation(F.linear(x, weight, bias))`` with activation None, "relu", "gelu" or
    "gelu_tanh": one cuBLASLt call on CUDA (the erf "gelu" adds one elementwise kernel,
    cuBLASLt's GELU being the tanh form); on CPU xpuruntime's matmul with the bias and
    activation in place. Real floating tensors of one dtype and device (after autocast) run
    on xpuruntime; anything else runs torch's ops, with the same result."""
    try:
        code = ACTIVATIONS[activation]
    except (KeyError, TypeError):
        raise ValueError(f"fused_linear: activation must be one of None, 'relu', 'gelu', "
                         f"'gelu_tanh', got {activation!r}") from None
    x, weight, bias = _autocast(x, weight, bias)
    tensors = [t for t in (x, weight, bias) if t is not None]
    ours = (all(t.device == x.device for t in tensors) and x.device.type in ("cpu", "cuda")
            and x.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64)
            and all(t.dtype == x.dtype for t in tensors) and x.dim() >= 1
            and weight.dim() == 2 and x.shape[-1] == weight.shape[1]
            and (bias is None or tuple(bias.shape) == (weight.shape[0],)))
    if not ours:
        return _torch_linear(x, weight, bias, code)
    return fused_linear_op(x.contiguous(), weight, bias, code)
