"""python/xpuruntime/adapters/pytorch/_choose.py: how the adapter's fused functions choose
their kernel through xpuruntime's registry (the policy's pin, else the first that applies;
under torch.compile, at trace time), and what they share: torch's own op called without
rerouting it again, and autocast's dtype.
"""

import contextlib
import threading

import torch

from ... import _core
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
