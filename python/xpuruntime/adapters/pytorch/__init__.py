"""python/xpuruntime/adapters/pytorch/__init__.py: ``xpuruntime.pytorch``, xpuruntime's
kernels and policies inside PyTorch training (also ``xpuruntime.adapters.pytorch``).

PyTorch stays the framework (autograd, optimizers, modules); xpuruntime steers which kernels
run, with the same ``KernelPolicy`` that steers array code and inference:

- ``_reroute.py``: ``set_kernel_policy`` / ``get_kernel_policy`` / ``clear_kernel_policy`` /
  ``kernel_policy``: torch's matmul, linear, SDPA, layer_norm and rms_norm on our kernels.
- ``_attention_ops.py``: ``fused_attention`` on cuDNN, flash_v2 or torch's SDPA; ``_ops.py``:
  ``fused_layernorm``, ``fused_rmsnorm``; both as torch custom ops (autograd, torch.compile)
  and as kernels of xpuruntime's registry, chosen through it (``_choose.py``).
- ``_linear.py``: ``fused_linear``, linear + bias + activation in one cuBLASLt call.
- ``_kernels.py`` + ``kernels/``: the NVRTC sources and their launches (fused norms, cuDNN
  attention); ``_flash.py``: flash_v2 attention's launches.
- ``_extras.py``: ``autocast``, ``capture_graph``, ``set_allocator``, ``profile``.

Importing this module imports torch; ``import xpuruntime`` alone never does.
"""

try:
    import torch  # noqa: F401
except ImportError as error:
    raise ImportError("xpuruntime.pytorch requires PyTorch. Install with: "
                      "pip install xpuruntime[torch]") from error

from ._attention_ops import attention, fused_attention  # noqa: E402
from ._extras import (  # noqa: E402
    CapturedGraph,
    allocator_stats,
    autocast,
    capture_graph,
    profile,
    set_allocator,
)
from ._linear import fused_linear  # noqa: E402
from ._ops import fused_layernorm, fused_rmsnorm, register_kernels  # noqa: E402
from ._reroute import (  # noqa: E402
    REROUTED_OPS,
    clear_kernel_policy,
    get_kernel_policy,
    kernel_policy,
    rerouted_ops,
    set_kernel_policy,
)

register_kernels()

__all__ = [
    "CapturedGraph", "REROUTED_OPS", "allocator_stats", "attention", "autocast",
    "capture_graph", "clear_kernel_policy", "fused_attention", "fused_layernorm",
    "fused_linear",
    "fused_rmsnorm", "get_kernel_policy", "kernel_policy", "profile", "register_kernels",
    "rerouted_ops", "set_allocator", "set_kernel_policy",
]
