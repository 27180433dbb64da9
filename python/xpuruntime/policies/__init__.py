"""python/xpuruntime/policies/__init__.py: the policies that steer execution (``xrt.policies``).

- ``_kernel_policy.py``: ``KernelPolicy`` (which kernel each op uses, JSON in and out), the
  current policy and ``explain()``; also at the top level of ``xpuruntime``.
"""

from ._kernel_policy import (  # noqa: F401
    Decision,
    ExplainLog,
    KernelPolicy,
    decisions,
    explain,
    get_kernel_policy,
    kernel_policy,
    set_kernel_policy,
)

__all__ = [
    "Decision",
    "ExplainLog",
    "KernelPolicy",
    "decisions",
    "explain",
    "get_kernel_policy",
    "kernel_policy",
    "set_kernel_policy",
]
