"""python/xpuruntime/adapters/pytorch/_attention_ops.py: ``fused_attention`` and the adapter's
attention kernels.

- ``cudnn`` (xpuruntime's, ``_attention.py``): torch ops ``xpu::cudnn_attention`` and its
  backward for torch.compile, an autograd.Function in eager (Note [Eager attention calls]).
- ``flash_v2`` (NVRTC, ``kernels/flash_v2.cu``): ``xpu::flash_attention`` and its backward.
- ``torch``: torch's own SDPA, which also takes every call ours cannot (dropout, GQA, masks
  that need a gradient).
The registry's callables and ``xrt.nn.scaled_dot_product_attention``'s runners of flash_v2
and torch take xpuruntime Tensors (``_run_flash``, ``_run_torch``).
"""

import contextlib
import math
from typing import Optional

import torch
import torch.nn.functional as F

from ... import _attention, _core
from ..._attention import cudnn_available, inference_stats
from . import _flash, _kernels
from ._choose import _autocast, _to_torch, _torch_kernel, choose


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
    """flash_v2's head dims: one of at most 128 for q, k and v alike (padded to 64 or 128);
    batch x heads within a grid's second dimension (65535 blocks)."""
    return (q.shape[3] <= 128 and v.shape[3] == q.shape[3]
            and q.shape[0] * q.shape[1] <= 65535)


def cudnn_fits(q, k, v, mask):
    """cuDNN's: multiples of 8 up to 256, and whole 16-byte rows of a mask."""
    d, dv = q.shape[3], v.shape[3]
    return (d <= 256 and dv <= 256 and d % 8 == 0 and dv % 8 == 0
            and (mask is None or k.shape[2] % 8 == 0))


@torch._dynamo.assume_constant_result
def _cudnn_loads():
    return cudnn_available()


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
    return _flash.flash_forward(torch, _aligned(q), _aligned(k), _aligned(v), attn_mask,
                                  is_causal, scale, like=q)


@flash_attention.register_fake
def _(q, k, v, attn_mask, is_causal, scale):
    return (_kernels._like(torch, q), q.new_empty(q.shape[:3], dtype=torch.float32))


@torch.library.custom_op("xpu::flash_attention_backward", mutates_args=(),
                         device_types="cuda")
def flash_attention_backward(grad: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                             v: torch.Tensor, attn_mask: Optional[torch.Tensor],
                             out: torch.Tensor, lse: torch.Tensor, is_causal: bool,
                             scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _flash.flash_backward(torch, _aligned(grad), _aligned(q), _aligned(k),
                                   _aligned(v), attn_mask, out, lse, is_causal, scale,
                                   like=(q, k, v))


@flash_attention_backward.register_fake
def _(grad, q, k, v, attn_mask, out, lse, is_causal, scale):
    return tuple(_flash._grad_like(torch, t) for t in (q, k, v))


def _save_for_backward(ctx, inputs, output):
    """setup_context of both forward ops: their inputs, the output and the softmax
    statistics (flash_v2's log-sum-exp, cuDNN's stats) the backward reads."""
    q, k, v, attn_mask, is_causal, scale = inputs
    out, stats = output
    ctx.save_for_backward(q, k, v, attn_mask, out, stats)
    ctx.is_causal, ctx.scale = is_causal, scale


def _backward_through(backward_op):
    """The autograd backward of a forward op whose gradients `backward_op` computes."""
    def backward(ctx, grad_out, grad_stats):
        q, k, v, attn_mask, out, stats = ctx.saved_tensors
        dq, dk, dv = backward_op(grad_out, q, k, v, attn_mask, out, stats, ctx.is_causal,
                                 ctx.scale)
        return dq, dk, dv, None, None, None
    return backward


flash_attention.register_autograd(_backward_through(flash_attention_backward),
                                  setup_context=_save_for_backward)


@torch.library.custom_op("xpu::cudnn_attention", mutates_args=(), device_types="cuda")
def cudnn_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    attn_mask: Optional[torch.Tensor], is_causal: bool,
                    scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cuDNN's fused attention forward: (out, stats), stats fp32 [B, H, Sq, 1]."""
    return _kernels.cudnn_forward(torch, _aligned(q), _aligned(k), _aligned(v), attn_mask,
                                  is_causal, scale, like=q)


@cudnn_attention.register_fake
def _(q, k, v, attn_mask, is_causal, scale):
    return (_kernels._like(torch, q, v.shape[-1]),
            q.new_empty(q.shape[:3] + (1,), dtype=torch.float32))


@torch.library.custom_op("xpu::cudnn_attention_backward", mutates_args=(),
                         device_types="cuda")
def cudnn_attention_backward(grad: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                             v: torch.Tensor, attn_mask: Optional[torch.Tensor],
                             out: torch.Tensor, stats: torch.Tensor, is_causal: bool,
                             scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _kernels.cudnn_backward(torch, _aligned(grad), _aligned(q), _aligned(k),
                                   _aligned(v), attn_mask, out, stats, is_causal, scale,
                                   likes=(q, k, v))


@cudnn_attention_backward.register_fake
def _(grad, q, k, v, attn_mask, out, stats, is_causal, scale):
    return tuple(_kernels._like(torch, t) for t in (q, k, v))


cudnn_attention.register_autograd(_backward_through(cudnn_attention_backward),
                                  setup_context=_save_for_backward)


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
        like = q
        q, k, v = _aligned(q), _aligned(k), _aligned(v)
        out, stats = _kernels.cudnn_forward(torch, q, k, v, mask, is_causal, scale, like=like)
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
                                      with_stats=inference_stats(bool(is_causal)), like=q)[0]
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
    with on_our_stream(q):
        tq, tk, tv = (_to_torch(t) for t in (q, k, v))
        tm = None if mask is None else _to_torch(mask)
        out = _flash_v2(_aligned(tq), _aligned(tk), _aligned(tv), tm, is_causal, scale)
        return _core.from_dlpack(out.detach())


def _run_torch(q, k, v, mask, is_causal, scale):
    with on_our_stream(q), _torch_kernel():
        tq, tk, tv = (_to_torch(t) for t in (q, k, v))
        tm = None if mask is None else _to_torch(mask)
        out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, is_causal=is_causal,
                                             scale=scale)
        return _core.from_dlpack(out.detach())


# Note [torch work on our Tensors]: the adapter's kernels run torch on xpuruntime Tensors
# (the runners above, the norm kernels of _ops.py). All of it, the DLPack conversions
# included, runs inside on_our_stream:
# - torch's current stream is our current stream there, so torch's kernels are ordered
#   with ours, and neither conversion has a stream to wait for (outside, torch's current
#   stream differs from ours whenever ours is a created stream: each conversion then
#   recorded an event and made a stream wait, and under a capture of ours that wait tied
#   the legacy stream to the capturing one, which CUDA refuses, so the capture failed);
# - while a graph of ours captures that stream, torch's allocations come from a torch
#   MemPool the graph keeps (Note [Foreign work in our graphs] in cpp/src/cuda/graph.cpp):
#   the replays use those addresses, so torch must not hand them to anyone else. (Under a
#   capture of torch's own, torch routes them itself.)
@contextlib.contextmanager
def on_our_stream(t):
    """torch on xpuruntime's current stream of t's device (Note [torch work on our
    Tensors])."""
    ours = _core.current_stream(t.device)
    with torch.cuda.stream(torch_stream_of(ours)):
        pool = None
        if ours.ptr != 0 and torch.cuda.is_current_stream_capturing():
            pool = _core._cuda._capture_kept(ours, "torch_mempool", _new_mempool)
        if pool is None:
            yield
        else:
            with torch.cuda.use_mem_pool(pool, device=t.device.index):
                yield


def _new_mempool():
    if not hasattr(torch.cuda, "use_mem_pool"):
        raise _core.CudaError(
            f"the PyTorch adapter's kernels inside a CUDA graph of xpuruntime's need "
            f"torch.cuda.MemPool (torch 2.5 or newer; this is {torch.__version__}): pin "
            f"xpuruntime's own kernels (math, cudnn) for the capture")
    return torch.cuda.MemPool()


# Note [The legacy stream in torch]: torch.cuda.ExternalStream(0) is not the legacy default
# stream: torch reads a stream pointer of 0 as "none given" and hands out a new stream from
# its pool, which does not wait for the legacy stream. Our current stream is the legacy one
# (ptr 0) unless a user sets another, so torch work meant to run there ran unordered with
# ours: the native engine's attention on flash_v2 read Q, K and V before they were written
# and its output was read before flash_v2 wrote it (wrong fp16/bf16 results, seen when the
# GPU was busy). torch's default stream is the legacy stream, so ptr 0 maps to it.
def torch_stream_of(stream):
    """xpuruntime's CUDA Stream as a torch stream on the same handle."""
    if stream.ptr == 0:
        return torch.cuda.default_stream(stream.device.index)
    return torch.cuda.ExternalStream(stream.ptr, device=f"cuda:{stream.device.index}")


def _attention_flash(q, k, v, *rest):
    return _run_flash(q, k, v, None, False, 1.0 / math.sqrt(q.shape[-1]))


def _attention_torch(q, k, v, *rest):
    return _run_torch(q, k, v, None, False, 1.0 / math.sqrt(q.shape[-1]))


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
