"""python/xpuruntime/adapters/pytorch/_ops.py: fused attention and norms as torch custom ops
(autograd, fake tensors for torch.compile) and as kernels of xpuruntime's registry.

- Registry: op ``attention`` has kernels ``flash_v2`` (ours) and ``torch`` (torch's SDPA);
  ``layer_norm`` and ``rms_norm`` have ``fused`` (ours) and ``torch``. A KernelPolicy pins
  them (``KernelPolicy(attention="torch")``), ``BestPerformance`` times them, and
  ``explain()`` records each choice. The registered callables take xpuruntime Tensors, so
  the kernels also run on our arrays directly (``xrt_torch.attention(q, k, v)``).
- torch: ``xpu::flash_attention`` / ``xpu::flash_attention_backward``, ``xpu::fused_norm`` /
  ``xpu::fused_norm_backward`` (one pair serves layer and RMS norm). The public functions
  ``fused_attention``, ``fused_layernorm`` and ``fused_rmsnorm`` choose the kernel through
  the registry, then call the custom op or torch's own function.
- Under torch.compile the registry cannot be asked (fake tensors have no memory): the
  choice is made at trace time from the policy's pin, else our kernel where it applies.
"""

import contextlib
import math
import threading
from typing import Optional

import torch
import torch.nn.functional as F

from ... import _attention, _core
from ..._attention import cudnn_available, inference_stats
from . import _kernels

# ---- choosing through the registry ------------------------------------------------------


def _xrt(t):
    return _core.from_dlpack(t.detach())


@torch._dynamo.assume_constant_result
def _pinned(op):
    """The current policy's pin for op ("" when none), read once at trace time."""
    policy = _core._current_policy()
    return policy.get(op) or policy.get(f"cuda:{op}") or ""


def choose(op, inputs, output_like, default):
    """The kernel name the current policy picks for op (recorded by ``explain()``).

    inputs are torch tensors (their dtypes and shapes are what the registry sees);
    `default` is the kernel a trace under torch.compile takes when the policy pins none."""
    if torch.compiler.is_compiling():
        pinned = _pinned(op)
        return pinned or default
    # On torch's stream: importing a tensor then needs no wait between streams (a wait on
    # a capturing stream from outside the capture would break a graph capture).
    with _kernels.torch_stream(torch, output_like.device.index):
        _choosing.active = True
        try:
            return _core._select_kernel(op, [_xrt(t) for t in inputs], [_xrt(output_like)])
        finally:
            _choosing.active = False


# Note [Adapter kernels in the registry]: the adapter's kernels share their op names with
# xpuruntime's own ops (``layer_norm``, ``rms_norm``), so that one policy steers both; but
# they run on torch tensors through the adapter's own calls, and the registry sees them only
# while the adapter chooses (``_choosing``). Anywhere else (``xrt.nn.layer_norm``'s dispatch,
# whose kernels take the weight, bias and eps the adapter's runners do not) they decline,
# and xpuruntime's kernels run.
_choosing = threading.local()


def _while_choosing(supports=None):
    def check(*args, **kwargs):
        if not getattr(_choosing, "active", False):
            return False
        return supports is None or supports(*args, **kwargs)
    return check


def _to_torch(x):
    return torch.from_dlpack(x)


# Set while a fused_* function runs torch's own op after choosing the torch kernel, so that
# an active reroute passes that call straight to torch instead of choosing again.
passthrough = threading.local()


@contextlib.contextmanager
def _torch_kernel():
    previous = getattr(passthrough, "on", False)
    passthrough.on = True
    try:
        yield
    finally:
        passthrough.on = previous


def _autocast(*tensors):
    """Under torch's autocast (or ours), floating CUDA inputs in the autocast dtype: our
    kernels compute in fp32 inside and give the autocast dtype out (see ``autocast``)."""
    if not torch.is_autocast_enabled("cuda"):
        return tensors
    dtype = torch.get_autocast_dtype("cuda")
    return tuple(t.to(dtype) if t is not None and t.is_cuda and t.is_floating_point() else t
                 for t in tensors)


# ---- attention ----------------------------------------------------------------------------


def _ours_possible(q, k, v, mask, dropout_p, enable_gqa):
    """Whether one of our attention kernels may run this call (else torch's SDPA does)."""
    return (q.dim() == 4 and k.dim() == 4 and v.dim() == 4 and q.is_cuda
            and q.dtype in (torch.float16, torch.bfloat16)
            and k.dtype == q.dtype and v.dtype == q.dtype
            and q.shape[:2] == k.shape[:2] == v.shape[:2] and k.shape[2] == v.shape[2]
            and q.shape[3] == k.shape[3] and min(q.shape) > 0 and min(k.shape) > 0
            and v.shape[3] > 0 and dropout_p == 0.0 and not enable_gqa
            and (mask is None or not mask.requires_grad))


def flash_fits(q, k, v):
    """flash_v2's head dims: one of at most 128 for q, k and v alike (padded to 64 or 128)."""
    return q.shape[3] <= 128 and v.shape[3] == q.shape[3]


def cudnn_fits(q, k, v, mask):
    """cuDNN's: multiples of 8 up to 256, and whole 16-byte rows of a mask."""
    d, dv = q.shape[3], v.shape[3]
    return (d <= 256 and dv <= 256 and d % 8 == 0 and dv % 8 == 0
            and (mask is None or k.shape[2] % 8 == 0))


@torch._dynamo.assume_constant_result
def _cudnn_loads():
    return cudnn_available()


def attention_supported(q, k, v, mask=None, dropout_p=0.0, enable_gqa=False):
    """Whether one of our kernels (cudnn, flash_v2) runs this call (else torch's SDPA does)."""
    return _ours_possible(q, k, v, mask, dropout_p, enable_gqa) and (
        flash_fits(q, k, v) or cudnn_fits(q, k, v, mask))


def _attention_default(q, k, v, mask):
    """The kernel a torch.compile trace takes with no pin: the fastest that fits."""
    if cudnn_fits(q, k, v, mask) and _cudnn_loads():
        return "cudnn"
    return "flash_v2" if flash_fits(q, k, v) else "torch"


def _aligned(t):
    """t with a last stride of 1 and 16-byte rows, copying only when it has neither."""
    ok = (t.stride(-1) == 1 and t.data_ptr() % 16 == 0
          and all(s * t.element_size() % 16 == 0 for s in t.stride()[:-1]))
    return t if ok else t.contiguous()


def _mask_for(mask, q, k):
    """An additive mask in q's dtype, broadcast to [B, H, Sq, Sk] (zero strides)."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        mask = torch.zeros((), dtype=q.dtype, device=q.device).masked_fill(
            ~mask, float("-inf")) if mask.dim() == 0 else torch.where(
            mask, torch.zeros((), dtype=q.dtype, device=q.device),
            torch.full((), float("-inf"), dtype=q.dtype, device=q.device))
    mask = mask.to(q.dtype)
    mask = mask.expand(q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    return mask if mask.stride(-1) == 1 else mask.contiguous()


@torch.library.custom_op("xpu::flash_attention", mutates_args=(), device_types="cuda")
def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    attn_mask: Optional[torch.Tensor], is_causal: bool,
                    scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """flash_v2 forward: (out, lse2) for head dims 64 and 128 (see Note [flash_v2 layout])."""
    return _kernels.flash_forward(torch, _aligned(q), _aligned(k), _aligned(v), attn_mask,
                                  is_causal, scale)


@flash_attention.register_fake
def _(q, k, v, attn_mask, is_causal, scale):
    return (q.new_empty(q.shape), q.new_empty(q.shape[:3], dtype=torch.float32))


@torch.library.custom_op("xpu::flash_attention_backward", mutates_args=(),
                         device_types="cuda")
def flash_attention_backward(grad: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                             v: torch.Tensor, attn_mask: Optional[torch.Tensor],
                             out: torch.Tensor, lse: torch.Tensor, is_causal: bool,
                             scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _kernels.flash_backward(torch, _aligned(grad), _aligned(q), _aligned(k),
                                   _aligned(v), attn_mask, out, lse, is_causal, scale)


@flash_attention_backward.register_fake
def _(grad, q, k, v, attn_mask, out, lse, is_causal, scale):
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape))


def _attention_setup(ctx, inputs, output):
    q, k, v, attn_mask, is_causal, scale = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, attn_mask, out, lse)
    ctx.is_causal, ctx.scale = is_causal, scale


def _attention_backward(ctx, grad_out, grad_lse):
    q, k, v, attn_mask, out, lse = ctx.saved_tensors
    dq, dk, dv = flash_attention_backward(grad_out, q, k, v, attn_mask, out, lse,
                                          ctx.is_causal, ctx.scale)
    return dq, dk, dv, None, None, None


flash_attention.register_autograd(_attention_backward, setup_context=_attention_setup)


@torch.library.custom_op("xpu::cudnn_attention", mutates_args=(), device_types="cuda")
def cudnn_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    attn_mask: Optional[torch.Tensor], is_causal: bool,
                    scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cuDNN's fused attention forward: (out, stats), stats fp32 [B, H, Sq, 1]."""
    return _kernels.cudnn_forward(torch, _aligned(q), _aligned(k), _aligned(v), attn_mask,
                                  is_causal, scale)


@cudnn_attention.register_fake
def _(q, k, v, attn_mask, is_causal, scale):
    return (q.new_empty(q.shape[:3] + v.shape[3:]),
            q.new_empty(q.shape[:3] + (1,), dtype=torch.float32))


@torch.library.custom_op("xpu::cudnn_attention_backward", mutates_args=(),
                         device_types="cuda")
def cudnn_attention_backward(grad: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                             v: torch.Tensor, attn_mask: Optional[torch.Tensor],
                             out: torch.Tensor, stats: torch.Tensor, is_causal: bool,
                             scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _kernels.cudnn_backward(torch, _aligned(grad), _aligned(q), _aligned(k),
                                   _aligned(v), attn_mask, out, stats, is_causal, scale)


@cudnn_attention_backward.register_fake
def _(grad, q, k, v, attn_mask, out, stats, is_causal, scale):
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape))


def _cudnn_setup(ctx, inputs, output):
    q, k, v, attn_mask, is_causal, scale = inputs
    out, stats = output
    ctx.save_for_backward(q, k, v, attn_mask, out, stats)
    ctx.is_causal, ctx.scale = is_causal, scale


def _cudnn_backward(ctx, grad_out, grad_stats):
    q, k, v, attn_mask, out, stats = ctx.saved_tensors
    dq, dk, dv = cudnn_attention_backward(grad_out, q, k, v, attn_mask, out, stats,
                                          ctx.is_causal, ctx.scale)
    return dq, dk, dv, None, None, None


cudnn_attention.register_autograd(_cudnn_backward, setup_context=_cudnn_setup)


# Note [Eager attention calls]: a torch.library custom op costs about 130 us of host time per
# call in eager mode on torch 2.11 (measured on the H200 machine: 268 us for a tiny cuDNN
# attention through the op against 29 us for torch's SDPA), which shows in training loops
# whose kernels are short. Eager calls therefore take an autograd.Function (forward and
# backward on the same kernels) or, without gradients, the kernel itself (the statistics
# written only where that is faster: Note [cuDNN inference statistics] in _attention.py);
# torch.compile traces keep the custom op (fake tensors, the compiled graph).
class _CudnnAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, mask, is_causal, scale):
        q, k, v = _aligned(q), _aligned(k), _aligned(v)
        out, stats = _kernels.cudnn_forward(torch, q, k, v, mask, is_causal, scale)
        ctx.save_for_backward(q, k, v, mask, out, stats)
        ctx.is_causal, ctx.scale = is_causal, scale
        return out

    @staticmethod
    def backward(ctx, grad):
        q, k, v, mask, out, stats = ctx.saved_tensors
        dq, dk, dv = _kernels.cudnn_backward(torch, _aligned(grad), q, k, v, mask, out, stats,
                                             ctx.is_causal, ctx.scale)
        return dq, dk, dv, None, None, None


def fused_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                    enable_gqa=False):
    """Scaled dot-product attention with torch's SDPA signature, on the kernel the policy
    picks for op ``attention``: ``cudnn`` (cuDNN's fused attention: head dims that are
    multiples of 8 up to 256) where cuDNN loads, else ``flash_v2`` (head dims up to 128,
    zero-padded to 64 or 128), for CUDA fp16/bf16 [B, H, S, D] without dropout; ``torch`` is
    torch's own SDPA, which also takes every other call. Works under autograd and
    torch.compile."""
    q, k, v = _autocast(q, k, v)
    kernel = "torch"
    if _ours_possible(q, k, v, attn_mask, dropout_p, enable_gqa):
        mask = _mask_for(attn_mask, q, k)
        kernel = choose("attention", [q, k, v] + ([mask] if mask is not None else []), q,
                        _attention_default(q, k, v, mask))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if kernel == "cudnn" and cudnn_fits(q, k, v, mask):
        if torch.compiler.is_compiling():
            return cudnn_attention(q, k, v, mask, bool(is_causal), scale)[0]
        # Note [Eager attention calls]
        if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
            return _CudnnAttention.apply(q, k, v, mask, bool(is_causal), scale)
        return _kernels.cudnn_forward(torch, _aligned(q), _aligned(k), _aligned(v), mask,
                                      bool(is_causal), scale,
                                      with_stats=inference_stats(bool(is_causal)))[0]
    if kernel == "flash_v2" and flash_fits(q, k, v):
        return _flash_v2(q, k, v, mask, bool(is_causal), scale)
    with _torch_kernel():
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                              dropout_p=dropout_p, is_causal=is_causal,
                                              scale=scale, enable_gqa=enable_gqa)


def _flash_v2(q, k, v, mask, is_causal, scale):
    d = q.shape[-1]
    padded = 64 if d <= 64 else 128
    if padded != d:
        q, k, v = (F.pad(t, (0, padded - d)) for t in (q, k, v))
    out, _ = flash_attention(q, k, v, mask, is_causal, scale)
    return out if padded == d else out[..., :d]


def _attention_kernel_supports(q, k, v, *rest):
    return (q.ndim == 4 and str(q.dtype) in ("float16", "bfloat16")
            and q.device.type == "cuda" and 0 < q.shape[3] <= 128 and v.shape[3] == q.shape[3])


def _run_flash(q, k, v, mask, is_causal, scale):
    """flash_v2 on xpuruntime Tensors ([B, H, S, D], mask additive or None): a runner of
    ``xrt.nn.scaled_dot_product_attention``."""
    tq, tk, tv = (_to_torch(t) for t in (q, k, v))
    tm = None if mask is None else _to_torch(mask)
    with _our_stream(q):
        out = _flash_v2(_aligned(tq), _aligned(tk), _aligned(tv), tm, is_causal, scale)
    return _core.from_dlpack(out.detach())


def _run_torch(q, k, v, mask, is_causal, scale):
    tq, tk, tv = (_to_torch(t) for t in (q, k, v))
    tm = None if mask is None else _to_torch(mask)
    with _our_stream(q), _torch_kernel():
        out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, is_causal=is_causal,
                                             scale=scale)
    return _core.from_dlpack(out.detach())


def _our_stream(t):
    """torch on xpuruntime's current stream of t's device, for kernels run on our Tensors."""
    ptr = _core.current_stream(t.device).ptr
    return torch.cuda.stream(torch.cuda.ExternalStream(ptr, device=f"cuda:{t.device.index}"))


def _attention_flash(q, k, v, *rest):
    return _run_flash(q, k, v, None, False, 1.0 / math.sqrt(q.shape[-1]))


def _attention_torch(q, k, v, *rest):
    return _run_torch(q, k, v, None, False, 1.0 / math.sqrt(q.shape[-1]))


# ---- norms --------------------------------------------------------------------------------


def norm_supported(x, normalized_shape, weight, bias):
    n = math.prod(normalized_shape)
    return (x.is_cuda and x.dtype in (torch.float16, torch.bfloat16, torch.float32)
            and tuple(x.shape[x.dim() - len(normalized_shape):]) == tuple(normalized_shape)
            and all(t is None or (t.dtype == x.dtype and t.shape == tuple(normalized_shape))
                    for t in (weight, bias))
            and _kernels.norm_plan(x.dtype, n) is not None)


@torch.library.custom_op("xpu::fused_norm", mutates_args=(), device_types="cuda")
def fused_norm(x: torch.Tensor, n: int, weight: Optional[torch.Tensor],
               bias: Optional[torch.Tensor], eps: float,
               rms: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Layer norm (rms=False) or RMS norm over the last n elements: (y, mean, rstd)."""
    x2d = x.contiguous().view(-1, n)
    w = None if weight is None else weight.contiguous().view(n)
    b = None if bias is None else bias.contiguous().view(n)
    y, mean, rstd = _kernels.norm_forward(torch, rms, x2d, w, b, eps)
    return y.view(x.shape), mean, rstd


@fused_norm.register_fake
def _(x, n, weight, bias, eps, rms):
    rows = x.numel() // n if n else 0
    return (x.new_empty(x.shape), x.new_empty((0 if rms else rows,), dtype=torch.float32),
            x.new_empty((rows,), dtype=torch.float32))


@torch.library.custom_op("xpu::fused_norm_backward", mutates_args=(), device_types="cuda")
def fused_norm_backward(grad: torch.Tensor, x: torch.Tensor, n: int,
                        weight: Optional[torch.Tensor], mean: torch.Tensor, rstd: torch.Tensor,
                        rms: bool, want_weight: bool, want_bias: bool
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dweight, dbias); the gradients not wanted are empty tensors."""
    w = None if weight is None else weight.contiguous().view(n)
    dx, dw, db = _kernels.norm_backward(torch, rms, grad.contiguous().view(-1, n),
                                        x.contiguous().view(-1, n), w, mean, rstd,
                                        want_weight, want_bias)
    empty = x.new_empty(0)
    return (dx.view(x.shape), empty if dw is None else dw.to(x.dtype),
            empty if db is None else db.to(x.dtype))


@fused_norm_backward.register_fake
def _(grad, x, n, weight, mean, rstd, rms, want_weight, want_bias):
    return (x.new_empty(x.shape), x.new_empty((n,) if want_weight else (0,)),
            x.new_empty((n,) if want_bias else (0,)))


def _norm_setup(ctx, inputs, output):
    x, n, weight, bias, eps, rms = inputs
    _, mean, rstd = output
    ctx.save_for_backward(x, weight, mean, rstd)
    ctx.n, ctx.rms, ctx.has_bias = n, rms, bias is not None


def _norm_backward(ctx, grad_y, grad_mean, grad_rstd):
    x, weight, mean, rstd = ctx.saved_tensors
    want_w = weight is not None and ctx.needs_input_grad[2]
    want_b = ctx.has_bias and ctx.needs_input_grad[3]
    dx, dw, db = fused_norm_backward(grad_y, x, ctx.n, weight, mean, rstd, ctx.rms, want_w,
                                     want_b)
    return (dx, None, dw.view(weight.shape) if want_w else None,
            db.view(weight.shape if weight is not None else (ctx.n,)) if want_b else None,
            None, None)


fused_norm.register_autograd(_norm_backward, setup_context=_norm_setup)


def _shape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def fused_layernorm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``F.layer_norm`` on the kernel the policy picks for op ``layer_norm`` (``fused``: one
    read and one write of x, fp32 statistics; ``torch``: torch's own)."""
    shape = _shape(normalized_shape)
    x, weight, bias = _autocast(x, weight, bias)
    supported = norm_supported(x, shape, weight, bias)
    kernel = (choose("layer_norm", [x], x, "fused" if supported else "torch") if x.is_cuda
              else "torch")
    if kernel != "fused":
        with _torch_kernel():
            return F.layer_norm(x, shape, weight, bias, eps)
    return fused_norm(x, math.prod(shape), weight, bias, float(eps), False)[0]


def fused_rmsnorm(x, normalized_shape, weight=None, eps=None):
    """``F.rms_norm`` on the kernel the policy picks for op ``rms_norm``; eps=None means
    the dtype's machine epsilon, as in torch."""
    shape = _shape(normalized_shape)
    x, weight = _autocast(x, weight)
    supported = norm_supported(x, shape, weight, None)
    kernel = (choose("rms_norm", [x], x, "fused" if supported else "torch") if x.is_cuda
              else "torch")
    if kernel != "fused":
        with _torch_kernel():
            return F.rms_norm(x, shape, weight, eps)
    eps = torch.finfo(x.dtype).eps if eps is None else float(eps)
    return fused_norm(x, math.prod(shape), weight, None, eps, True)[0]


def _norm_kernel_supports(x, *rest):
    return (x.device.type == "cuda" and str(x.dtype) in ("float16", "bfloat16", "float32")
            and x.ndim >= 1 and _kernels.norm_plan(_TORCH_DTYPES[str(x.dtype)],
                                                   x.shape[-1]) is not None)


_TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def _norm_kernel(rms, fused):
    def run(x, *rest):
        tx = _to_torch(x)
        n = tx.shape[-1]
        if rms:
            y = (fused_norm(tx, n, None, None, torch.finfo(tx.dtype).eps, True)[0] if fused
                 else F.rms_norm(tx, (n,)))
        else:
            y = (fused_norm(tx, n, None, None, 1e-5, False)[0] if fused
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


def attention(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """Attention on xpuruntime Tensors ([..., S, D] on CUDA) through the registry: the
    policy's kernel for op ``attention`` runs (``xrt.nn.scaled_dot_product_attention``, which
    runs this adapter's flash_v2 and torch kernels too)."""
    for t in (q, k, v):
        if not isinstance(t, _core.Tensor):
            raise TypeError("attention takes xpuruntime Tensors; for torch tensors use "
                            "fused_attention")
    return _attention.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                                   is_causal=is_causal, scale=scale)
