"""python/xpuruntime/adapters/pytorch/_reroute.py: kernel policies for torch ops.

``set_kernel_policy(matmul="cublaslt", attention="flash_v2")`` makes the policy xpuruntime's
global one (so array code and torch ops follow the same pins) and, while it names an op
below, sends torch's calls of that op on CUDA tensors to xpuruntime's kernels:

=============  ==========================================================================
op             torch functions rerouted
=============  ==========================================================================
matmul         torch.matmul / mm / addmm (beta = alpha = 1), Tensor.matmul / mm / @,
               F.linear (nn.Linear): xpuruntime's matmul through DLPack, bias added by torch
               and its gradient summed by the adapter's column sum (in a graph capture
               too, where the products are torch's)
attention      F.scaled_dot_product_attention (nn.MultiheadAttention's fast path excluded)
layer_norm     F.layer_norm (nn.LayerNorm)
rms_norm       F.rms_norm (nn.RMSNorm)
=============  ==========================================================================

Note [Rerouting cost]: the reroute is a ``TorchFunctionMode`` entered only while a policy
names one of these ops, so without one torch pays nothing. While it is on, every torch
function call passes one dict lookup in Python (the measured cost is in docs/pytorch.md);
unnamed ops go straight back to torch. Modes are per thread in torch: the reroute applies
on the thread that set the policy (autograd's backward threads run our backward
functions explicitly, so gradients are not affected).
"""

import contextlib
import threading

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ... import _core
from ...policies import KernelPolicy
from . import _attention_ops, _choose, _kernels, _ops

# ---- matmul through xpuruntime ------------------------------------------------------------


def _xmm(a, b):
    """a @ b on xpuruntime's matmul (the policy's kernel), on torch's current stream.

    A stack of rows times one matrix ([..., M, K] @ [K, N], nn.Linear's case) runs as one
    2-D product over all rows, not as a batch of small ones."""
    if b.dim() == 2 and a.dim() > 2 and a.is_contiguous():
        lead = a.shape[:-1]
        return _xmm(a.reshape(-1, a.shape[-1]), b).view(*lead, b.shape[-1])
    with _kernels.torch_stream(torch, a.device.index):
        out = _core.matmul(_core.from_dlpack(a), _core.from_dlpack(b))
        return torch._C._from_dlpack(out.__dlpack__(stream=-1))


class _Matmul(torch.autograd.Function):
    """a @ b for a, b of 2 or more dimensions (batch dimensions broadcast)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _xmm(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = _xmm(grad, b.mT).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            if b.dim() == 2 and a.dim() > 2:  # sum over the rows of every batch at once
                rows_a = a.reshape(-1, a.shape[-1])
                grad_b = _xmm(rows_a.mT, grad.reshape(-1, grad.shape[-1]))
            else:
                grad_b = _xmm(a.mT, grad).sum_to_size(b.shape)
        return grad_a, grad_b


_AUTOCAST_CAST = (torch.float16, torch.bfloat16, torch.float32)


def _matmul_ok(a, b):
    """Whether our matmul takes a @ b: CUDA operands of 2 or more dimensions in one floating
    dtype, or in any of the 16/32-bit ones under autocast (which brings both to its dtype:
    a bf16 activation times a float32 weight, autocast's everyday case)."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.is_cuda
            and b.is_cuda and a.dim() >= 2 and b.dim() >= 2):
        return False
    if (torch.is_autocast_enabled("cuda") and a.dtype in _AUTOCAST_CAST
            and b.dtype in _AUTOCAST_CAST):
        return True
    return a.dtype == b.dtype and a.dtype in (*_AUTOCAST_CAST, torch.float64)


def _mixed(a, b):
    """a and b in torch's autocast dtype when autocast is on (as torch's mm would run)."""
    if torch.is_autocast_enabled("cuda"):
        dtype = torch.get_autocast_dtype("cuda")
        a, b = (t.to(dtype) if t.dtype in _AUTOCAST_CAST else t for t in (a, b))
    return a, b


# Note [Warming up for a capture]: capture_graph's warm-up must take the paths the capture
# takes. The capture runs torch's matmul (see _eligible), forward and backward, so the
# warm-up does too: torch creates a cuBLAS handle per thread on first use, which inside a
# capture fails (CUBLAS_STATUS_NOT_INITIALIZED) when nothing earlier in the process used
# torch's matmul on that thread. Counted, process-wide: the backward runs on autograd's
# own thread.
_warming_for_capture = 0
_warming_lock = threading.Lock()


@contextlib.contextmanager
def warming_for_capture():
    global _warming_for_capture
    with _warming_lock:
        _warming_for_capture += 1
    try:
        yield
    finally:
        with _warming_lock:
            _warming_for_capture -= 1


def _eligible(a, b):
    # Note: during a torch graph capture our matmul's output would come from xpuruntime's
    # allocator, outside the graph's private pool (its block could be reused while the
    # graph still writes it on replay), so torch's matmul runs there instead, and in the
    # warm-up before it (Note [Warming up for a capture]).
    return (_matmul_ok(a, b) and not _warming_for_capture
            and not torch.cuda.is_current_stream_capturing())


def _matmul(func, args, kwargs):
    a, b = args[0], args[1]
    if kwargs or not _eligible(a, b):
        return func(*args, **kwargs)
    return _Matmul.apply(*_mixed(a, b))


def _addmm(func, args, kwargs):
    bias, a, b = args[0], args[1], args[2]
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    if len(args) > 3 or beta != 1 or alpha != 1 or "out" in kwargs or not _eligible(a, b):
        return func(*args, **kwargs)
    out = _Matmul.apply(*_mixed(a, b))
    return out + bias.to(out.dtype)


class _BiasLinear(torch.autograd.Function):
    """F.linear with a bias whose gradient our column sum gives (Note [Bias gradients]); the
    products are ours (`ours`) or, in a graph capture and its warm-up, torch's."""

    @staticmethod
    def forward(ctx, x, weight, bias, ours):
        ctx.save_for_backward(x, weight)
        ctx.ours, ctx.bias_dtype = ours, bias.dtype
        b = bias.to(x.dtype)
        if ours:
            return _xmm(x, weight.t()) + b
        with _choose._torch_kernel():
            return F.linear(x, weight, b)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        n = weight.shape[0]
        g2 = grad.reshape(-1, n).contiguous()
        x2 = x.reshape(-1, x.shape[-1])
        grad_x = grad_w = grad_b = None
        with _choose._torch_kernel():
            if ctx.needs_input_grad[0]:
                grad_x = _xmm(grad, weight) if ctx.ours else grad @ weight
            if ctx.needs_input_grad[1]:
                grad_w = _xmm(g2.mT, x2) if ctx.ours else g2.t() @ x2
            if ctx.needs_input_grad[2]:
                grad_b = _kernels.column_sum(torch, g2, ctx.bias_dtype)
                if grad_b is None:
                    grad_b = g2.sum(0, dtype=torch.float32).to(ctx.bias_dtype)
        return grad_x, grad_w, grad_b, None


def _bias_linear_ok(x, weight, bias):
    return (_matmul_ok(x, weight) and weight.dim() == 2 and isinstance(bias, torch.Tensor)
            and bias.dim() == 1 and bias.shape[0] == weight.shape[0]
            and bias.device == x.device and bias.dtype in (torch.float16, torch.bfloat16,
                                                            torch.float32))


def _linear(func, args, kwargs):
    x, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else kwargs.get("bias")
    if bias is not None and _bias_linear_ok(x, weight, bias):
        # Note [Bias gradients]: torch sums a 16-bit bias gradient with its generic
        # reduction (8 us for 2048 x 768 bf16 on the H200, 130 us of a small GPT's 1.4 ms
        # step); the norms' column sum takes 2-3 us, accumulates in float32 in a fixed order
        # and writes the bias's own dtype (no cast back to a float32 parameter). It runs in
        # a graph capture too: its buffers come from torch's allocator, on torch's stream.
        x2, w2 = _mixed(x, weight)
        return _BiasLinear.apply(x2, w2, bias, _eligible(x, weight))
    if not _eligible(x, weight):
        return func(*args, **kwargs)
    out = _Matmul.apply(*_mixed(x, weight.t()))
    return out if bias is None else out + bias.to(out.dtype)


def _sdpa(func, args, kwargs):
    q, k, v = args[0], args[1], args[2]
    names = ("attn_mask", "dropout_p", "is_causal", "scale")
    options = dict(zip(names, args[3:]), **kwargs)
    if not q.is_cuda:
        return func(*args, **kwargs)
    return _attention_ops.fused_attention(q, k, v, **options)


def _layer_norm(func, args, kwargs):
    if not args[0].is_cuda:
        return func(*args, **kwargs)
    return _ops.fused_layernorm(*args, **kwargs)


def _rms_norm(func, args, kwargs):
    if not args[0].is_cuda:
        return func(*args, **kwargs)
    return _ops.fused_rmsnorm(*args, **kwargs)


_HANDLERS = {
    "matmul": {torch.matmul: _matmul, torch.Tensor.matmul: _matmul,
               torch.Tensor.__matmul__: _matmul, torch.mm: _matmul, torch.Tensor.mm: _matmul,
               torch.addmm: _addmm, F.linear: _linear},
    "attention": {F.scaled_dot_product_attention: _sdpa},
    "layer_norm": {F.layer_norm: _layer_norm},
    "rms_norm": {F.rms_norm: _rms_norm},
}
REROUTED_OPS = tuple(_HANDLERS)


class _Reroute(TorchFunctionMode):
    """Sends the named ops to their handlers; everything else straight back to torch."""

    def __init__(self, handlers):
        super().__init__()
        self.handlers = handlers

    def __torch_function__(self, func, types, args=(), kwargs=None):
        handler = self.handlers.get(func)
        if handler is None or getattr(_choose.passthrough, "on", False):
            return func(*args, **(kwargs or {}))
        return handler(func, args, kwargs or {})


# ---- the policy ---------------------------------------------------------------------------

_state = threading.local()
_lock = threading.Lock()
_saved_global = []  # the global xpuruntime policies set_kernel_policy replaced


def _named_ops(policy):
    names = set()
    for key in policy.preferences:
        device, _, op = key.rpartition(":")
        if device in ("", "cuda") and op in _HANDLERS:
            names.add(op)
    return names


def _enter_reroute(names):
    """The reroute of the named ops' handlers, entered on this thread; None for no names."""
    if not names:
        return None
    handlers = {}
    for op in names:
        handlers.update(_HANDLERS[op])
    mode = _Reroute(handlers)
    mode.__enter__()
    return mode


def _install(policy):
    """Enters the reroute for the ops policy names on this thread (leaves it otherwise)."""
    mode = getattr(_state, "mode", None)
    if mode is not None:
        mode.__exit__(None, None, None)
        _state.mode = None
    names = _named_ops(policy) if policy is not None else set()
    _state.mode, _state.names = _enter_reroute(names), frozenset(names)


def _policy_of(policy, ops):
    if policy is None:
        return KernelPolicy(**ops)
    if not isinstance(policy, KernelPolicy):
        raise TypeError(f"set_kernel_policy expects a KernelPolicy or keyword pins, got "
                        f"{type(policy).__name__}")
    if ops:
        raise TypeError("pass a KernelPolicy or keyword pins (matmul=...), not both")
    return policy


def set_kernel_policy(policy=None, **ops):
    """Makes policy (or ``KernelPolicy(**ops)``) the kernel policy of xpuruntime and of the
    torch ops it names (see the table above); returns it. Unknown ops or kernels raise
    ValueError naming the nearest ones."""
    _ops.register_kernels()
    policy = _policy_of(policy, ops)
    with _lock:
        if not _saved_global:
            _saved_global.append(_core._global_policy())
        _core._set_global_policy(policy)
    _install(policy)
    return policy


def get_kernel_policy():
    """The policy set by set_kernel_policy, or None."""
    with _lock:
        return _core._global_policy() if _saved_global else None


def clear_kernel_policy():
    """Back to torch's own kernels and xpuruntime's previous global policy."""
    with _lock:
        if _saved_global:
            _core._set_global_policy(_saved_global.pop())
    _install(None)


def rerouted_ops():
    """The op names rerouted on this thread now."""
    return sorted(getattr(_state, "names", ()))


@contextlib.contextmanager
def kernel_policy(policy=None, **ops):
    """``with kernel_policy(attention="flash_v2"):`` the policy applies to this thread inside
    the block (torch ops and xpuruntime's alike); the previous one comes back after."""
    _ops.register_kernels()
    policy = _policy_of(policy, ops)
    previous_mode = getattr(_state, "mode", None)
    previous_names = getattr(_state, "names", frozenset())
    _core._push_thread_policy(policy)
    names = _named_ops(policy)
    mode = _enter_reroute(names)
    if mode is not None:
        _state.mode, _state.names = mode, frozenset(names)
    try:
        yield policy
    finally:
        if mode is not None:
            mode.__exit__(None, None, None)
        _state.mode, _state.names = previous_mode, previous_names
        _core._pop_thread_policy()
