"""python/xpuruntime/adapters/pytorch/_ops.py: fused norms as torch custom ops (autograd, fake
tensors for torch.compile), and the registration of the adapter's kernels (these and
``_attention_ops.py``'s) in xpuruntime's registry.

- Registry: op ``attention`` has kernels ``flash_v2`` and ``torch`` here, beside xpuruntime's
  ``cudnn`` and ``math``; ``layer_norm`` and ``rms_norm`` have ``fused`` (ours) and
  ``torch``. A KernelPolicy pins them (``KernelPolicy(attention="torch")``),
  ``BestPerformance`` times them, and ``explain()`` records each choice. The registered
  callables take xpuruntime Tensors, so the kernels also run on our arrays directly
  (``xrt_torch.attention(q, k, v)``).
- torch: ``xpu::fused_norm`` / ``xpu::fused_norm_backward`` (one pair serves layer and RMS
  norm). ``fused_layernorm`` and ``fused_rmsnorm`` choose the kernel through the registry
  (``_choose.py``), then call the custom op or torch's own function.
"""

import math
from typing import Optional

import torch
import torch.nn.functional as F

from ... import _attention, _core
from . import _kernels
from ._attention_ops import (
    _attention_flash,
    _attention_kernel_supports,
    _attention_torch,
    _run_flash,
    _run_torch,
    on_our_stream,
)
from ._choose import _autocast, _to_torch, _torch_kernel, _while_choosing, choose

# ---- norms --------------------------------------------------------------------------------


def norm_supported(x, normalized_shape, weight, bias):
    """Whether the fused kernels take this call: CUDA rows of a 16-bit or float32 x whose
    weight and bias (one dtype: x's or float32, autocast's parameters) sit on x's device."""
    n = math.prod(normalized_shape)
    params = [t for t in (weight, bias) if t is not None]
    return (x.is_cuda and x.dtype in (torch.float16, torch.bfloat16, torch.float32)
            and tuple(x.shape[x.dim() - len(normalized_shape):]) == tuple(normalized_shape)
            and all(t.device == x.device and t.dtype in (x.dtype, torch.float32)
                    and tuple(t.shape) == tuple(normalized_shape) for t in params)
            and len({t.dtype for t in params}) <= 1
            and _kernels.norm_plan(x.dtype, n) is not None)


def _norm_forward(x, n, weight, bias, eps, rms):
    x2d = x.contiguous().view(-1, n)
    w = None if weight is None else weight.contiguous().view(n)
    b = None if bias is None else bias.contiguous().view(n)
    y, mean, rstd = _kernels.norm_forward(torch, rms, x2d, w, b, eps)
    return y.view(x.shape), mean, rstd


def _norm_grads(grad, x, n, weight, bias, mean, rstd, rms, want_weight, want_bias):
    """(dx, dweight or None, dbias or None), the parameters' in their own dtype."""
    w = None if weight is None else weight.contiguous().view(n)
    b = None if bias is None else bias.view(n)
    dx, dw, db = _kernels.norm_backward(torch, rms, grad.contiguous().view(-1, n),
                                        x.contiguous().view(-1, n), w, b, mean, rstd,
                                        want_weight, want_bias)
    return dx.view(x.shape), dw, db


@torch.library.custom_op("xpu::fused_norm", mutates_args=(), device_types="cuda")
def fused_norm(x: torch.Tensor, n: int, weight: Optional[torch.Tensor],
               bias: Optional[torch.Tensor], eps: float,
               rms: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Layer norm (rms=False) or RMS norm over the last n elements: (y, mean, rstd)."""
    return _norm_forward(x, n, weight, bias, eps, rms)


@fused_norm.register_fake
def _(x, n, weight, bias, eps, rms):
    rows = x.numel() // n if n else 0
    return (x.new_empty(x.shape), x.new_empty((0 if rms else rows,), dtype=torch.float32),
            x.new_empty((rows,), dtype=torch.float32))


@torch.library.custom_op("xpu::fused_norm_backward", mutates_args=(), device_types="cuda")
def fused_norm_backward(grad: torch.Tensor, x: torch.Tensor, n: int,
                        weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                        mean: torch.Tensor, rstd: torch.Tensor, rms: bool, want_weight: bool,
                        want_bias: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dweight, dbias); the gradients not wanted are empty tensors."""
    dx, dw, db = _norm_grads(grad, x, n, weight, bias, mean, rstd, rms, want_weight,
                             want_bias)
    empty = x.new_empty(0)
    return dx, empty if dw is None else dw, empty if db is None else db


@fused_norm_backward.register_fake
def _(grad, x, n, weight, bias, mean, rstd, rms, want_weight, want_bias):
    param = weight if weight is not None else bias
    like = x if param is None else param
    return (x.new_empty(x.shape), like.new_empty((n,) if want_weight else (0,)),
            like.new_empty((n,) if want_bias else (0,)))


def _param_grads(weight, bias, n, dw, db, want_w, want_b):
    shape = weight.shape if weight is not None else (n,)
    return (dw.view(shape) if want_w else None,
            db.view(bias.shape if bias is not None else shape) if want_b else None)


def _norm_setup(ctx, inputs, output):
    x, n, weight, bias, _, rms = inputs
    _, mean, rstd = output
    ctx.save_for_backward(x, weight, bias, mean, rstd)
    ctx.n, ctx.rms = n, rms


def _norm_backward(ctx, grad_y, grad_mean, grad_rstd):
    x, weight, bias, mean, rstd = ctx.saved_tensors
    want_w = weight is not None and ctx.needs_input_grad[2]
    want_b = bias is not None and ctx.needs_input_grad[3]
    dx, dw, db = fused_norm_backward(grad_y, x, ctx.n, weight, bias, mean, rstd, ctx.rms,
                                     want_w, want_b)
    return (dx, None, *_param_grads(weight, bias, ctx.n, dw, db, want_w, want_b), None, None)


fused_norm.register_autograd(_norm_backward, setup_context=_norm_setup)


class _FusedNorm(torch.autograd.Function):
    """The norms in eager calls with gradients (Note [Eager attention calls]: a custom op
    costs about 60 us of host time per call in eager mode, on the same kernels)."""

    @staticmethod
    def forward(ctx, x, weight, bias, n, eps, rms):
        y, mean, rstd = _norm_forward(x, n, weight, bias, eps, rms)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.n, ctx.rms = n, rms
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias, mean, rstd = ctx.saved_tensors
        want_w = weight is not None and ctx.needs_input_grad[1]
        want_b = bias is not None and ctx.needs_input_grad[2]
        dx, dw, db = _norm_grads(grad, x, ctx.n, weight, bias, mean, rstd, ctx.rms, want_w,
                                 want_b)
        return (dx, *_param_grads(weight, bias, ctx.n, dw, db, want_w, want_b), None, None,
                None)


def _run_norm(x, n, weight, bias, eps, rms):
    """The fused norm's output: the custom op under torch.compile, else the kernels
    through an autograd.Function (or bare, when no gradient is wanted)."""
    if torch.compiler.is_compiling():
        return fused_norm(x, n, weight, bias, eps, rms)[0]
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad
                                       for t in (x, weight, bias)):
        return _FusedNorm.apply(x, weight, bias, n, eps, rms)
    return _norm_forward(x, n, weight, bias, eps, rms)[0]


def _shape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def fused_layernorm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``F.layer_norm`` on the kernel the policy picks for op ``layer_norm`` (``fused``: one
    read and one write of x, fp32 statistics; ``torch``: torch's own). Under autocast x
    runs in the autocast dtype and float32 weights stay float32."""
    shape = _shape(normalized_shape)
    xc, = _autocast(x)
    supported = norm_supported(xc, shape, weight, bias)
    kernel = (choose("layer_norm", [xc], xc, "fused" if supported else "torch") if x.is_cuda
              else "torch")
    if kernel != "fused":
        with _torch_kernel():
            return F.layer_norm(x, shape, weight, bias, eps)
    return _run_norm(xc, math.prod(shape), weight, bias, float(eps), False)


def fused_rmsnorm(x, normalized_shape, weight=None, eps=None):
    """``F.rms_norm`` on the kernel the policy picks for op ``rms_norm``; eps=None means
    the dtype's machine epsilon, as in torch."""
    shape = _shape(normalized_shape)
    xc, = _autocast(x)
    supported = norm_supported(xc, shape, weight, None)
    kernel = (choose("rms_norm", [xc], xc, "fused" if supported else "torch") if x.is_cuda
              else "torch")
    if kernel != "fused":
        with _torch_kernel():
            return F.rms_norm(x, shape, weight, eps)
    eps = torch.finfo(xc.dtype).eps if eps is None else float(eps)
    return _run_norm(xc, math.prod(shape), weight, None, eps, True)


def _norm_kernel_supports(x, *rest):
    return (x.device.type == "cuda" and str(x.dtype) in ("float16", "bfloat16", "float32")
            and x.ndim >= 1 and _kernels.norm_plan(_TORCH_DTYPES[str(x.dtype)],
                                                   x.shape[-1]) is not None)


_TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def _norm_kernel(rms, fused):
    def run(x, *rest):
        with on_our_stream(x):  # Note [torch work on our Tensors]
            tx = _to_torch(x)
            n = tx.shape[-1]
            if rms:
                y = (_run_norm(tx, n, None, None, torch.finfo(tx.dtype).eps, True) if fused
                     else F.rms_norm(tx, (n,)))
            else:
                y = (_run_norm(tx, n, None, None, 1e-5, False) if fused
                     else F.layer_norm(tx, (n,)))
            return _core.from_dlpack(y.detach())
    return run


# ---- registration -------------------------------------------------------------------------

_REGISTERED = (
    ("attention", "flash_v2", _attention_flash, _attention_kernel_supports, 10),
    ("attention", "torch", _attention_torch, None, 0),
    # Note [Adapter kernels in the registry]; "torch" above xpuruntime's own (priority 0).
    ("layer_norm", "fused", _norm_kernel(False, True), _while_choosing(_norm_kernel_supports), 10),
    ("layer_norm", "torch", _norm_kernel(False, False), _while_choosing(), 1),
    ("rms_norm", "fused", _norm_kernel(True, True), _while_choosing(_norm_kernel_supports), 10),
    ("rms_norm", "torch", _norm_kernel(True, False), _while_choosing(), 1),
)


def register_kernels():
    """Adds the adapter's kernels to xpuruntime's registry (once per process), and their
    runners to ``xrt.nn.scaled_dot_product_attention``."""
    _attention.add_runner("flash_v2", _run_flash)
    _attention.add_runner("torch", _run_torch)
    present = {(k["op"], k["name"]) for k in _core.list_kernels() if k["device"] == "cuda"}
    for op, name, fn, supports, priority in _REGISTERED:
        if (op, name) not in present:
            _core.register_kernel(op, name, fn, device="cuda", supports=supports,
                                  priority=priority)
